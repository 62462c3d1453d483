# Copyright: ascend.sglang contributors
# Apache License 2.0
"""A directory of files (a wheelhouse) brought to its wanted state on the managed host from one archive: which
files differ from the controller's list (size and modification time, rsync's quick check: wheels never change
under one name), and the archive of those files unpacked safely, each file placed atomically. Used by
ascend.sglang.sglang_place_archive, which ascend.sglang.sglang_wheelhouse calls."""

from __future__ import annotations

import os
import posixpath
import shutil
import stat
import tarfile
import tempfile

from ansible_collections.ascend.sglang.plugins.module_utils.files._atomic_files import ensure_directory


class ArchiveError(Exception):
    """An archive member that is not one of the wanted files, or not a regular file."""


def check_name(name: str) -> str:
    """A relative path below the directory, in its normal form: no absolute path, no '..', no empty part."""
    norm = posixpath.normpath(name)
    if (not name or name != norm or norm.startswith("/") or norm == "."
            or any(part in ("", ".", "..") for part in norm.split("/"))):
        raise ArchiveError(f"{name!r} is not a plain relative path")
    return norm


def differing(dest: str, files: dict, mode: int) -> tuple[list[str], list[str]]:
    """(the files to transfer: missing, not a regular file, or of another size or modification time; the files that
    only need their mode set), each sorted. files maps a relative path to {"size": bytes, "mtime": seconds}."""
    transfer, chmod = [], []
    for name in sorted(files):
        entry = files[name]
        path = os.path.join(dest, check_name(name))
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            transfer.append(name)
            continue
        if (not stat.S_ISREG(st.st_mode) or st.st_size != int(entry["size"])
                or int(st.st_mtime) != int(entry["mtime"])):
            transfer.append(name)
        elif stat.S_IMODE(st.st_mode) != mode:
            chmod.append(name)
    return transfer, chmod


def _directories(dest: str, name: str, directory_mode: int) -> None:
    """dest and the directories between it and name's file, each created with directory_mode when missing (an
    existing one keeps its mode)."""
    path = dest
    ensure_directory(path, directory_mode, False)
    for part in name.split("/")[:-1]:
        path = os.path.join(path, part)
        ensure_directory(path, directory_mode, False)


def unpack(archive: str, dest: str, files: dict, wanted: list[str], mode: int, directory_mode: int) -> list[str]:
    """Places every wanted file from the archive under dest: a temporary file in its directory, its mode, the
    controller's modification time, then a rename over the old one. Refuses (ArchiveError, before anything is
    written) an archive whose members are not exactly the wanted files as regular files of their listed size.
    Returns the paths written, sorted."""
    wanted_set = {check_name(name) for name in wanted}
    unknown = wanted_set - set(files)
    if unknown:
        raise ArchiveError(f"not in the file list: {sorted(unknown)}")
    with tarfile.open(archive, mode="r:") as tar:
        members = tar.getmembers()
        names = [m.name for m in members]
        for member in members:
            name = check_name(member.name)
            if name not in wanted_set or names.count(member.name) != 1:
                raise ArchiveError(f"{member.name!r} is not one of the wanted files, or is there twice")
            if not member.isreg() or member.size != int(files[name]["size"]):
                raise ArchiveError(f"{member.name!r} is not a regular file of {files[name]['size']} bytes")
        if set(names) != wanted_set:
            raise ArchiveError(f"missing from the archive: {sorted(wanted_set - set(names))}")
        written = []
        for member in members:
            name = member.name
            _directories(dest, name, directory_mode)
            path = os.path.join(dest, name)
            fd, tmp = tempfile.mkstemp(prefix=".sglang-", dir=os.path.dirname(path))
            try:
                with os.fdopen(fd, "wb") as out:
                    shutil.copyfileobj(tar.extractfile(member), out, 1 << 20)
                os.chmod(tmp, mode)
                mtime = int(files[name]["mtime"])
                os.utime(tmp, (mtime, mtime))
                os.replace(tmp, path)
            except BaseException:
                if os.path.exists(tmp):
                    os.unlink(tmp)
                raise
            written.append(path)
    return sorted(written)
