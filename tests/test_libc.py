"""pal.libc: the C library's functions from the process's own symbols, without ldconfig."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys

from pal.libc import function, libc


def test_functions_of_this_processs_c_library_are_found_and_missing_ones_are_none():
    getpid = function("getpid")
    assert getpid is not None and getpid() == os.getpid()
    assert function("no_such_function_in_any_libc") is None
    assert isinstance(libc(), ctypes.CDLL) and libc() is libc()  # looked up once


PROBE = """
import ctypes.util
def no(name):
    raise AssertionError("find_library runs ldconfig -p")
ctypes.util.find_library = no
import pal.memory, pal.atomic, pal.libc
pal.memory.release_memory()
print(pal.libc.function("prctl") is not None, (pal.memory._libc() is not None) == (pal.libc.function("mallinfo2") is not None))
"""


def test_it_is_found_without_find_library_which_starts_ldconfig():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["True", "True"]
