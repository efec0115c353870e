"""``SiteFiles``: the new site's files, written over the inodes of a spare site.

A daily run writes every drill-down again (about 7,300 files at CSIT scale). On this project's
machines (ext4 without a journal) creating a 30 KB file cost 0.07-0.13 ms of CPU on a quiet
file system, and 0.6-0.9 ms in a slow state seen after large deletions (a run's previous
site was deleted as it ended); writing over an existing file in memory cost 0.03-0.07 ms. So
the render keeps the site before the previous one as a spare (``.site-spare`` beside ``site``,
see ``render_site``): each file it writes is first moved out of the spare into the new site,
when the spare has it, then written over, and no site is deleted file by file. The drill-downs'
directory is taken from the spare whole (``adopted``, one rename for thousands of files: moving
each out cost 0.02-0.05 ms); what the render did not write there is moved aside (``prune``,
``discard``) and deleted after the run.

The spare is never read: a file is written from its first byte and cut to the new length, so
what the new site holds is what this run wrote. A spare file that is not a plain file with one
link is removed instead of written over: a page kept from the previous site is a hard link
(``_reuse``) that the live site shares, and it must not change under its readers.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Collection


@dataclass(frozen=True)
class SiteFiles:
    """Writes below ``root`` (the new site), taking each file's inode from ``spare`` if it has one.

    ``adopted``: top-level directories of ``root`` that were the spare's (moved in whole): their
    files are written over where they are. ``trash``: where what must go from them is moved
    (``discard``, ``prune``), to be deleted after the run: deleting a file written a minute ago
    waits for its write-back (4,500 kept pages took 8 s that way, with 0.5 s of CPU)."""

    root: Path
    spare: Path | None = None
    adopted: frozenset[str] = field(default_factory=frozenset)
    trash: Path | None = None

    def write_text(self, rel: str, text: str) -> None:
        """Write ``root/rel`` (UTF-8): the whole file, whatever the spare's file held."""
        self.write_bytes(rel, text.encode("utf-8"))

    def write_bytes(self, rel: str, data: bytes) -> None:
        dst = f"{self.root}/{rel}"
        if rel.partition("/")[0] in self.adopted:
            clear_path(dst)
        elif self.spare is not None:
            try:
                os.rename(f"{self.spare}/{rel}", dst)
            except OSError:
                pass  # the spare has no such file: a new one is created
            else:
                clear_path(dst)
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

    def discard(self, rel: str) -> None:
        """Make room at ``root/rel`` (for a link): what is there goes to ``trash`` when it is
        an adopted directory's, else is removed; nothing there is fine."""
        path = f"{self.root}/{rel}"
        if self.trash is not None and rel.partition("/")[0] in self.adopted:
            try:
                os.rename(path, f"{self.trash}/{rel.replace('/', '%')}")
                return
            except FileNotFoundError:
                return
            except OSError:
                pass  # (a directory the trash holds under that name: removed here)
        clear_path(path, keep_plain=False)

    def prune(self, written: Collection[str]) -> int:
        """Take out of the adopted directories every entry whose path (``"s/<name>"``) is not in
        ``written`` (``discard``): the spare's pages of series gone, and of drill-downs this run
        failed to draw. Returns how many."""
        removed = 0
        for d in sorted(self.adopted):
            with os.scandir(self.root / d) as entries:
                gone = [f"{d}/{e.name}" for e in entries if f"{d}/{e.name}" not in written]
            for rel in gone:
                self.discard(rel)
            removed += len(gone)
        return removed


def clear_path(path: str | Path, keep_plain: bool = True) -> None:
    """Make room for a new plain file at ``path``: a directory (with its content), a link, a
    special file or a file with other links there is removed; a plain file with one link (the
    spare's) is left to be written over, or removed too without ``keep_plain``; nothing there is
    fine."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(path)
    elif not (keep_plain and stat.S_ISREG(st.st_mode) and st.st_nlink == 1):
        os.unlink(path)  # a link the live site shares (a kept page), or not a plain file
