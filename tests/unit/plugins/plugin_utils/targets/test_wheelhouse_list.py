"""The controller side of the one-transfer wheelhouse copy (plugin_utils/targets/_wheelhouse_list.py): every regular file
below the directory by relative path, a link to a file counting as the file; anything else is refused."""

from __future__ import annotations

import os
import socket

import pytest

from ansible_collections.ascend.sglang.plugins.plugin_utils.targets._wheelhouse_list import WheelhouseError, list_files


def test_lists_files_below_the_directory_with_size_and_time(tmp_path):
    (tmp_path / "b.whl").write_bytes(b"bb")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.whl").write_bytes(b"a")
    os.utime(tmp_path / "b.whl", (1_700_000_000.9, 1_700_000_000.9))
    (tmp_path / "link.whl").symlink_to(tmp_path / "b.whl")
    files = list_files(str(tmp_path))
    assert list(files) == ["b.whl", "link.whl", "sub/a.whl"]
    assert (files["b.whl"].size, files["b.whl"].mtime) == (2, 1_700_000_000)
    assert files["link.whl"].size == 2 and files["sub/a.whl"].path == str(tmp_path / "sub" / "a.whl")


def test_refuses_what_it_cannot_send(tmp_path):
    with pytest.raises(WheelhouseError, match="is not a directory"):
        list_files(str(tmp_path / "missing"))
    (tmp_path / "dangling.whl").symlink_to(tmp_path / "nowhere")
    with pytest.raises(WheelhouseError, match="dangling.whl"):
        list_files(str(tmp_path))
    (tmp_path / "dangling.whl").unlink()
    (tmp_path / "elsewhere").symlink_to(tmp_path.parent, target_is_directory=True)
    with pytest.raises(WheelhouseError, match="link to a directory"):
        list_files(str(tmp_path))
    (tmp_path / "elsewhere").unlink()
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(tmp_path / "s"))
        with pytest.raises(WheelhouseError, match="not a regular file"):
            list_files(str(tmp_path))
    finally:
        sock.close()
