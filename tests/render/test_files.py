import os

from pal.render.files import SiteFiles


def test_a_file_is_written_over_the_spares_inode_and_holds_only_the_new_text(tmp_path):
    root, spare = tmp_path / "new", tmp_path / "spare"
    (root / "s").mkdir(parents=True)
    (spare / "s").mkdir(parents=True)
    (spare / "s" / "a.html").write_text("a much longer page from two runs ago", "utf-8")
    inode = (spare / "s" / "a.html").stat().st_ino
    files = SiteFiles(root, spare)
    files.write_text("s/a.html", "new ü")
    assert (root / "s" / "a.html").read_bytes() == "new ü".encode()
    assert (root / "s" / "a.html").stat().st_ino == inode and not (spare / "s" / "a.html").exists()
    files.write_text("s/b.html", "created")  # not in the spare
    assert (root / "s" / "b.html").read_text("utf-8") == "created"


def test_a_shared_file_a_directory_or_a_link_in_the_spare_is_replaced_never_written_through(tmp_path):
    root, spare, live = tmp_path / "new", tmp_path / "spare", tmp_path / "live"
    for d in (root, spare, live):
        d.mkdir()
    (live / "kept.html").write_text("the live site's page", "utf-8")
    os.link(live / "kept.html", spare / "kept.html")
    (spare / "dir.html").mkdir()
    (spare / "dir.html" / "inner").write_text("x", "utf-8")
    os.symlink(live / "kept.html", spare / "sym.html")
    files = SiteFiles(root, spare)
    for name in ("kept.html", "dir.html", "sym.html"):
        files.write_text(name, f"new {name}")
        assert (root / name).read_text("utf-8") == f"new {name}" and (root / name).is_file()
        assert not (root / name).is_symlink() and (root / name).stat().st_nlink == 1
    assert (live / "kept.html").read_text("utf-8") == "the live site's page"
    assert sorted(p.name for p in root.iterdir()) == ["dir.html", "kept.html", "sym.html"]


def test_without_a_spare_files_are_created(tmp_path):
    SiteFiles(tmp_path).write_text("index.html", "<p>")
    assert (tmp_path / "index.html").read_text("utf-8") == "<p>"


def test_an_adopted_directory_is_written_in_place_but_never_through_a_shared_file(tmp_path):
    """The drill-downs' directory taken from the spare whole: its plain files keep their inodes
    and hold only the new bytes; a file the live site shares, a directory and a link in its
    place are replaced."""
    root, live = tmp_path / "new", tmp_path / "live"
    (root / "s").mkdir(parents=True)
    live.mkdir()
    (root / "s" / "a.html").write_text("a much longer page from two runs ago", "utf-8")
    inode = (root / "s" / "a.html").stat().st_ino
    (live / "kept.html").write_text("the live site's page", "utf-8")
    os.link(live / "kept.html", root / "s" / "kept.html")
    (root / "s" / "dir.html").mkdir()
    (root / "s" / "dir.html" / "inner").write_text("x", "utf-8")
    os.symlink(live / "kept.html", root / "s" / "sym.html")
    files = SiteFiles(root, tmp_path / "spare-without-s", frozenset({"s"}))
    files.write_text("s/a.html", "new ü")
    assert (root / "s" / "a.html").read_bytes() == "new ü".encode()
    assert (root / "s" / "a.html").stat().st_ino == inode
    for name in ("kept.html", "dir.html", "sym.html"):
        files.write_text(f"s/{name}", f"new {name}")
        p = root / "s" / name
        assert p.read_text("utf-8") == f"new {name}" and p.is_file() and not p.is_symlink()
        assert p.stat().st_nlink == 1
    assert (live / "kept.html").read_text("utf-8") == "the live site's page"


def test_prune_removes_what_was_not_written_from_the_adopted_directories_only(tmp_path):
    root = tmp_path / "new"
    for d in ("s", "g"):
        (root / d).mkdir(parents=True)
    for rel in ("s/new.html", "s/gone.html", "g/other.html"):
        (root / rel).write_text(rel, "utf-8")
    (root / "s" / "stray").mkdir()
    (root / "s" / "stray" / "x").write_text("x", "utf-8")
    os.symlink(root / "g" / "other.html", root / "s" / "link.html")
    files = SiteFiles(root, None, frozenset({"s"}))
    assert files.prune({"s/new.html", "s/not-there.html"}) == 3
    assert sorted(p.name for p in (root / "s").iterdir()) == ["new.html"]
    assert (root / "g" / "other.html").read_text("utf-8") == "g/other.html"  # not adopted: not pruned
    assert SiteFiles(root).prune(set()) == 0  # nothing adopted
    assert (root / "s" / "new.html").exists()


def test_discard_moves_an_adopted_file_to_the_trash_and_removes_others(tmp_path):
    """Deleting a file written a minute ago waits for its write-back: the adopted directory's
    files are moved aside (the trash is deleted after the run); prune goes the same way."""
    root, trash = tmp_path / "new", tmp_path / "trash"
    for d in ("s", "g"):
        (root / d).mkdir(parents=True)
    trash.mkdir()
    for rel in ("s/a.html", "s/b.html", "g/c.html"):
        (root / rel).write_text(rel, "utf-8")
    inode = (root / "s" / "a.html").stat().st_ino
    files = SiteFiles(root, None, frozenset({"s"}), trash)
    files.discard("s/a.html")
    files.discard("g/c.html")  # not adopted: removed
    files.discard("s/missing.html")
    assert not (root / "s" / "a.html").exists() and not (root / "g" / "c.html").exists()
    assert [(p.name, p.stat().st_ino) for p in trash.iterdir()] == [("s%a.html", inode)]
    assert files.prune({"s/keep.html"}) == 1
    assert sorted(p.name for p in trash.iterdir()) == ["s%a.html", "s%b.html"]
    assert SiteFiles(root, None, frozenset({"s"})).prune(set()) == 0  # nothing left; no trash: removed
