"""The compiled kernels: C extensions built at install (``pip install -e .``, ``make venv``).

Everything else about the package is declared in setup.cfg; setuptools reads extensions only
from here. The flags keep every float operation the one the C source writes: no fast-math, and
no contraction of a*b+c into one fused multiply-add, so the kernels' results are bit for bit
those of the NumPy forms and of jumpavg (see each kernel's docstring).
"""

from setuptools import Extension, setup

FLAGS = ["-O2", "-fno-fast-math", "-ffp-contract=off", "-fno-strict-aliasing"]

KERNELS = ["pal.analysis.mdl_kernel", "pal.analysis.filters_kernel", "pal.analysis.bands_kernel",
           "pal.render.text_kernel"]

setup(ext_modules=[
    Extension(name, [name.replace(".", "/") + ".c"], extra_compile_args=FLAGS, libraries=["m"])
    for name in KERNELS
])
