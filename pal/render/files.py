"""``SiteFiles``: the new site's files, written over the inodes of a spare site.

A daily run writes every drill-down again (about 7,300 files at CSIT scale). On this project's
machines (ext4 without a journal) creating a 30 KB file cost 0.07-0.13 ms of CPU on a quiet
file system, and 0.6-0.9 ms in a slow state seen after large deletions (a run's previous
site was deleted as it ended); writing over an existing file in memory cost 0.03-0.07 ms. So
the render keeps the site before the previous one as a spare (``.site-spare`` beside ``site``,
see ``render_site``): each file it writes is first moved out of the spare into the new site,
when the spare has it, then written over, and no site is deleted file by file. (A spare whose
files are out of memory, as the kernel tells, is not used: ``site._fresh_spare``.)

The spare is never read: a moved file is written from its first byte and cut to the new
length, so what the new site holds is what this run wrote. A spare file that is not a plain
file with one link is removed instead of written over: a page kept from the previous site is a
hard link (``_reuse``) that the live site shares, and it must not change under its readers.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class SiteFiles:
    """Writes below ``root`` (the new site), taking each file's inode from ``spare`` if it has one."""

    root: Path
    spare: Path | None = None

    def write_text(self, rel: str, text: str) -> None:
        """Write ``root/rel`` (UTF-8): the whole file, whatever the spare's file held."""
        self.write_bytes(rel, text.encode("utf-8"))

    def write_bytes(self, rel: str, data: bytes) -> None:
        dst = self.root / rel
        if self.spare is not None:
            self._take(self.spare / rel, dst)
        # written over the old bytes, then cut to length: truncating to zero first (O_TRUNC)
        # frees the file's blocks and allocates them again, which cost as much as a new file
        fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o666)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if os.fstat(fd).st_size > len(data):
                os.ftruncate(fd, len(data))
        finally:
            os.close(fd)

    @staticmethod
    def _take(src: Path, dst: Path) -> None:
        try:
            os.rename(src, dst)
        except OSError:
            return  # the spare has no such file: a new one is created
        st = os.lstat(dst)
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(dst)
        elif not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
            os.unlink(dst)  # a link the live site shares (a kept page), or not a plain file
