"""The host side of the one-transfer wheelhouse copy (module_utils/files/_wheelhouse.py): which files differ by size and
modification time, and an archive placed only when its members are exactly the wanted regular files."""

from __future__ import annotations

import io
import os
import stat
import tarfile

import pytest

from ansible_collections.ascend.sglang.plugins.module_utils.files._wheelhouse import (
    ArchiveError, check_name, differing, unpack)


def listing(**files: bytes) -> dict:
    return {name.replace("__", "/"): {"size": len(data), "mtime": 1_700_000_000 + len(data)}
            for name, data in files.items()}


def archive(path, members) -> str:
    """members: (name, data or None for a symbolic link, type)."""
    with tarfile.open(path, "w:") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            if data is None:
                info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return str(path)


@pytest.mark.parametrize("name", ["", ".", "/etc/passwd", "../x.whl", "a/../x.whl", "a//x.whl", "./x.whl", "a/"])
def test_a_name_must_be_a_plain_relative_path(name):
    with pytest.raises(ArchiveError):
        check_name(name)


def test_what_differs_by_size_time_or_kind_and_what_only_needs_a_mode(tmp_path):
    files = listing(**{"same.whl": b"s", "size.whl": b"ss", "time.whl": b"ttt", "gone.whl": b"g", "dir.whl": b"d",
                       "mode.whl": b"mm", "sub__deep.whl": b"x"})
    for name in ("same.whl", "size.whl", "time.whl", "mode.whl"):
        (tmp_path / name).write_bytes(b"S" if name == "size.whl" else b"s" * files[name]["size"])
        mtime = files[name]["mtime"] + (5 if name == "time.whl" else 0)
        os.utime(tmp_path / name, (mtime, mtime))
        os.chmod(tmp_path / name, 0o600 if name == "mode.whl" else 0o644)
    (tmp_path / "dir.whl").mkdir()
    transfer, chmod = differing(str(tmp_path), files, 0o644)
    assert transfer == ["dir.whl", "gone.whl", "size.whl", "sub/deep.whl", "time.whl"]
    assert chmod == ["mode.whl"]


def test_places_the_wanted_files_with_mode_and_time_and_keeps_other_files(tmp_path):
    dest = tmp_path / "dest"
    files = listing(**{"a.whl": b"aaaa", "sub__b.whl": b"bb"})
    path = archive(tmp_path / "w.tar", [("a.whl", b"aaaa"), ("sub/b.whl", b"bb")])
    dest.mkdir()
    (dest / "other.whl").write_bytes(b"keep")
    written = unpack(path, str(dest), files, ["a.whl", "sub/b.whl"], 0o640, 0o750)
    assert written == [str(dest / "a.whl"), str(dest / "sub" / "b.whl")]
    assert (dest / "a.whl").read_bytes() == b"aaaa" and (dest / "other.whl").read_bytes() == b"keep"
    st = os.stat(dest / "sub" / "b.whl")
    assert stat.S_IMODE(st.st_mode) == 0o640 and int(st.st_mtime) == files["sub/b.whl"]["mtime"]
    assert stat.S_IMODE(os.stat(dest / "sub").st_mode) == 0o750
    assert differing(str(dest), files, 0o640) == ([], [])
    assert not list(dest.rglob(".sglang-*"))


@pytest.mark.parametrize("members, wanted, message", [
    ([("a.whl", b"aaaa"), ("evil.whl", b"x")], ["a.whl"], "not one of the wanted files"),
    ([("../a.whl", b"aaaa")], ["a.whl"], "not a plain relative path"),
    ([("/tmp/a.whl", b"aaaa")], ["a.whl"], "not a plain relative path"),
    ([("a.whl", None)], ["a.whl"], "not a regular file"),
    ([("a.whl", b"aaaaaaaa")], ["a.whl"], "not a regular file of 4 bytes"),
    ([("a.whl", b"aaaa"), ("a.whl", b"aaaa")], ["a.whl"], "there twice"),
    ([], ["a.whl"], "missing from the archive"),
    ([("b.whl", b"b")], ["b.whl"], "not in the file list"),
], ids=["extra member", "dot-dot", "absolute", "symlink", "other size", "twice", "missing", "unlisted"])
def test_a_bad_archive_is_refused_before_anything_is_written(tmp_path, members, wanted, message):
    dest = tmp_path / "dest"
    path = archive(tmp_path / "w.tar", members)
    with pytest.raises(ArchiveError, match=message):
        unpack(path, str(dest), listing(**{"a.whl": b"aaaa"}), wanted, 0o644, 0o755)
    assert not dest.exists()
