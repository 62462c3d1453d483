# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The files of a controller directory (a wheelhouse) as ascend.sglang.sglang_wheelhouse sends them: relative
path, size and modification time of every regular file below it (a symbolic link to a file counts as the file)."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass


class WheelhouseError(Exception):
    """The directory is missing, or holds something that is not a regular file or a directory."""


@dataclass(frozen=True)
class Entry:
    path: str   # on the controller
    size: int
    mtime: int  # whole seconds: what the host's quick check compares


def list_files(src: str) -> dict[str, Entry]:
    """Every file below src by its '/'-separated relative path, sorted."""
    if not os.path.isdir(src):
        raise WheelhouseError("is not a directory")
    files: dict[str, Entry] = {}
    for root, dirs, names in os.walk(src):
        dirs.sort()
        for name in dirs:
            if os.path.islink(os.path.join(root, name)):
                raise WheelhouseError(f"{os.path.join(root, name)} is a link to a directory (not followed)")
        for name in sorted(names):
            path = os.path.join(root, name)
            try:
                st = os.stat(path)
            except OSError as exc:
                raise WheelhouseError(f"{path}: {exc.strerror or exc}") from None
            if not stat.S_ISREG(st.st_mode):
                raise WheelhouseError(f"{path} is not a regular file")
            rel = os.path.relpath(path, src).replace(os.sep, "/")
            files[rel] = Entry(path, st.st_size, int(st.st_mtime))
    return dict(sorted(files.items()))
