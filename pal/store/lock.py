"""The store's single-writer lock: ``fcntl.flock`` on ``<store>/.lock`` holding the owner's pid.

flock locks belong to an open file description, so the kernel releases them when the
holder dies (even by ``kill -9``): a stale lock file never blocks the next run.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from pal.errors import StoreError

LOCK_NAME = ".lock"


class StoreLock:
    """An exclusive, non-reentrant lock; ``acquire`` raises StoreError naming the holder's pid."""

    def __init__(self, store_dir: Path):
        self.path = Path(store_dir) / LOCK_NAME
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self, timeout: float = 0.0, poll: float = 0.05) -> None:
        """Take the lock, waiting up to ``timeout`` seconds (0: fail at once if another holds it)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + max(timeout, 0.0)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = self._holder(fd)
                    os.close(fd)
                    waited = f" (waited {timeout:g} s)" if timeout > 0 else ""
                    raise StoreError(f"{self.path.parent}: store locked by pid {holder}{waited}") from None
                time.sleep(poll)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    @staticmethod
    def _holder(fd: int) -> str:
        try:
            text = os.pread(fd, 32, 0).decode(errors="replace").strip()
        except OSError:
            text = ""
        return text or "?"
