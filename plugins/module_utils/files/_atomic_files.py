# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Places files atomically with their modes (and owners), reporting what changed: used on the managed host by
ascend.sglang.sglang_place_files and on the controller by render mode (ascend.sglang.sglang_render_files)."""

from __future__ import annotations

import grp
import os
import pwd
import stat
import tempfile


def ensure_directory(path: str, mode: int, check_mode: bool) -> bool:
    """A directory at path, created with this mode (parents 0755) when missing. An existing directory keeps its
    mode and owner: it may be the operator's (/etc, /usr/local/bin). Returns whether something changed."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if not check_mode:
            os.makedirs(path, mode=0o755, exist_ok=True)
            os.chmod(path, mode)
        return True
    if not stat.S_ISDIR(st.st_mode):
        raise OSError(f"{path} exists and is not a directory")
    return False


def _ids(owner: str | None, group: str | None) -> tuple[int, int]:
    uid = pwd.getpwnam(owner).pw_uid if owner else -1
    gid = grp.getgrnam(group).gr_gid if group else -1
    return uid, gid


def place_file(path: str, data: bytes, mode: int, check_mode: bool, owner: str | None = None,
               group: str | None = None) -> tuple[bool, bytes | None]:
    """Write data to path (temporary file in the same directory, then rename) unless it already holds it
    with this mode and owner. Returns (changed, the previous content or None when there was no file)."""
    uid, gid = _ids(owner, group)
    return place_as(path, data, mode, check_mode, uid, gid)


def place_as(path: str, data: bytes, mode: int, check_mode: bool, uid: int = -1, gid: int = -1,
             parents: bool = False) -> tuple[bool, bytes | None]:
    """place_file() with the owner and group by id (-1: left as they are); with parents, a missing directory of
    path is created 0755 (as ensure_directory creates one)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    before = None
    if st is not None and stat.S_ISREG(st.st_mode):
        with open(path, "rb") as handle:
            before = handle.read()
    same_owner = st is not None and (uid in (-1, st.st_uid)) and (gid in (-1, st.st_gid))
    if before == data and same_owner and stat.S_IMODE(st.st_mode) == mode:
        return False, before
    if check_mode:
        return True, before
    if before == data and st is not None and stat.S_ISREG(st.st_mode):
        # Only the metadata differs: fix it in place.
        if not same_owner:
            os.chown(path, uid, gid)
        os.chmod(path, mode)
        return True, before
    directory = os.path.dirname(path) or "."
    if parents:
        ensure_directory(directory, 0o755, False)
    fd, tmp = tempfile.mkstemp(prefix=".sglang-", dir=directory)
    try:
        # Mode and owner are set before the content is written and before the file gets its name:
        # a 0600 file is never readable by others, not even for a moment.
        os.fchmod(fd, mode)
        if uid != -1 or gid != -1:
            os.fchown(fd, uid, gid)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return True, before


def place_all(directories: list, files: list, check_mode: bool, want_diff: bool) -> dict:
    """directories: [{path, mode}]; files: [{path, data (bytes), mode (int), owner, group, sensitive}].
    Returns {changed, directories: [{path, changed}], files: [{path, changed, new}], diff: [...]} (new: there was
    no file at path before); no content of a sensitive file is ever returned."""
    result = {"changed": False, "directories": [], "files": [], "diff": []}
    for entry in directories:
        changed = ensure_directory(entry["path"], entry["mode"], check_mode)
        result["directories"].append({"path": entry["path"], "changed": changed})
        result["changed"] |= changed
    for entry in files:
        changed, before = place_file(entry["path"], entry["data"], entry["mode"], check_mode,
                                     entry.get("owner"), entry.get("group"))
        result["files"].append({"path": entry["path"], "changed": changed, "new": before is None})
        result["changed"] |= changed
        if changed and want_diff and not entry.get("sensitive"):
            result["diff"].append({
                "before_header": entry["path"] if before is not None else f"{entry['path']} (absent)",
                "after_header": entry["path"],
                "before": (before or b"").decode("utf-8", "replace"),
                "after": entry["data"].decode("utf-8", "replace")})
    return result
