# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The last good generation of each service's files on a host, kept and put back: used on the managed host by
ascend.sglang.sglang_generation (upgrade.yml keeps what runs before it writes new files, and puts it back on the
instances of a wave that failed).

Layout under the generations directory (0700 when created here), one directory per service (0700):

    <dir>/<name>/manifest.json    each path in the order given: present, mode, owner, group, sha256
    <dir>/<name>/<sha256>.blob    the content of a present file, one blob per content (0600: secrets)

A new generation is written whole beside the old one (<dir>/.<name>.new), then takes its place by rename; the old
one, moved aside to <dir>/.<name>.old for that moment, is removed. A run cut short between the two renames leaves
the old generation in .<name>.old, where the next run finds it. Pure standard library."""

from __future__ import annotations

import grp
import hashlib
import json
import os
import pwd
import re
import shutil
import stat

from ansible_collections.ascend.sglang.plugins.module_utils.files._atomic_files import (
    ensure_directory, place_as, place_file)

MANIFEST = "manifest.json"
FORMAT = 1
NAME_RE = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")


class GenerationError(Exception):
    """A problem with what was asked or found, its message naming the service and path."""


# --- what is asked -----------------------------------------------------------------------------------------------

def check_services(directory: str, services: list, with_files: bool = True) -> None:
    """Refuse, naming the service and path: a directory that is not absolute, a service name that is not a plain
    file name (letters, digits, '.', '_', '-', not starting with '.'), a name given twice and (with_files) a path
    that is not absolute or is given twice for one service."""
    if not isinstance(directory, str) or not os.path.isabs(directory):
        raise GenerationError(f"dir: not an absolute path: {directory!r}")
    seen = set()
    for service in services:
        name = service.get("name")
        if not isinstance(name, str) or not NAME_RE.fullmatch(name):
            raise GenerationError(f"service {name!r}: not a plain file name (letters, digits, '.', '_' and '-', "
                                  f"not starting with '.')")
        if name in seen:
            raise GenerationError(f"service {name}: given twice")
        seen.add(name)
        if not with_files:
            continue
        paths = service.get("files")
        if not isinstance(paths, list):
            raise GenerationError(f"service {name}: files must be a list of absolute paths")
        given = set()
        for path in paths:
            if not isinstance(path, str) or not os.path.isabs(path):
                raise GenerationError(f"service {name}: not an absolute path: {path!r}")
            if path in given:
                raise GenerationError(f"service {name}: {path} given twice")
            given.add(path)


# --- owners --------------------------------------------------------------------------------------------------------

def owner_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def group_name(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def _uid(owner: str) -> int:
    try:
        return pwd.getpwnam(owner).pw_uid
    except KeyError:
        if owner.isdigit():
            return int(owner)
        raise


def _gid(group: str) -> int:
    try:
        return grp.getgrnam(group).gr_gid
    except KeyError:
        if group.isdigit():
            return int(group)
        raise


# --- saving --------------------------------------------------------------------------------------------------------

def snapshot(name: str, paths: list) -> tuple[dict, dict]:
    """The manifest of these files as they are now, and their contents by sha256. A missing file is recorded as
    not present; anything else but a regular file (a directory, a symbolic link, a device) is refused."""
    entries, blobs = [], {}
    for path in paths:
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            entries.append({"path": path, "present": False, "mode": None, "owner": None, "group": None,
                            "sha256": None})
            continue
        except OSError as exc:
            raise GenerationError(f"service {name}: cannot read {path}: {exc.strerror or exc}") from exc
        if not stat.S_ISREG(st.st_mode):
            raise GenerationError(f"service {name}: {path} is not a regular file ({_kind(st.st_mode)})")
        try:
            with open(path, "rb") as handle:
                data = handle.read()
                st = os.fstat(handle.fileno())
        except OSError as exc:
            raise GenerationError(f"service {name}: cannot read {path}: {exc.strerror or exc}") from exc
        digest = hashlib.sha256(data).hexdigest()
        blobs[digest] = data
        entries.append({"path": path, "present": True, "mode": f"{stat.S_IMODE(st.st_mode):04o}",
                        "owner": owner_name(st.st_uid), "group": group_name(st.st_gid), "sha256": digest})
    return {"format": FORMAT, "service": name, "files": entries}, blobs


def _kind(mode: int) -> str:
    for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
        if test(mode):
            return kind
    return "not a regular file"


def blob_name(digest: str) -> str:
    return f"{digest}.blob"


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove_tree(path: str) -> None:
    if os.path.lexists(path):
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)


def _write_generation(directory: str, name: str, manifest: dict, blobs: dict) -> None:
    """<dir>/.<name>.new written whole (0700, blobs 0600), then renamed to <dir>/<name>; the old one removed."""
    final = os.path.join(directory, name)
    new = os.path.join(directory, f".{name}.new")
    old = os.path.join(directory, f".{name}.old")
    _remove_tree(new)  # left by a run cut short before its rename
    os.mkdir(new, 0o700)
    os.chmod(new, 0o700)
    for digest, data in blobs.items():
        place_file(os.path.join(new, blob_name(digest)), data, 0o600, False)
    text = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    place_file(os.path.join(new, MANIFEST), text.encode("utf-8"), 0o600, False)
    _fsync_dir(new)
    if os.path.lexists(final):
        _remove_tree(old)
        os.rename(final, old)
    os.rename(new, final)
    _fsync_dir(directory)
    _remove_tree(old)
    _fsync_dir(directory)


def _location(directory: str, name: str) -> str | None:
    """Where the saved generation of a service is: <dir>/<name>, or <dir>/.<name>.old when a run was cut short
    between its two renames; None when there is none."""
    for candidate in (os.path.join(directory, name), os.path.join(directory, f".{name}.old")):
        if os.path.isfile(os.path.join(candidate, MANIFEST)):
            return candidate
    return None


def load_generation(directory: str, name: str) -> tuple[str, dict] | None:
    """(its directory, its manifest) of the saved generation of a service, None when there is none; a manifest
    that is not one is refused."""
    where = _location(directory, name)
    if where is None:
        return None
    path = os.path.join(where, MANIFEST)
    try:
        with open(path, encoding="utf-8") as handle:
            manifest = json.load(handle)
    except (OSError, ValueError) as exc:
        raise GenerationError(f"service {name}: cannot read its saved generation {path}: {exc}") from exc
    problem = _manifest_problem(manifest, name)
    if problem:
        raise GenerationError(f"service {name}: its saved generation {path} is damaged: {problem}")
    return where, manifest


def _manifest_problem(manifest: object, name: str) -> str | None:
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT or not isinstance(manifest.get("files"), list):
        return f"not a manifest of format {FORMAT}"
    if manifest.get("service") != name:
        return f"it is the generation of {manifest.get('service')!r}"
    for entry in manifest["files"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str) or not os.path.isabs(entry["path"]):
            return f"an entry without an absolute path: {entry!r}"
        if entry.get("present") is True:
            for key in ("mode", "owner", "group", "sha256"):
                if not isinstance(entry.get(key), str):
                    return f"{entry['path']}: no {key}"
            if not re.fullmatch(r"[0-7]{3,4}", entry["mode"]) or not re.fullmatch(r"[0-9a-f]{64}", entry["sha256"]):
                return f"{entry['path']}: a mode or sha256 that is not one"
        elif entry.get("present") is not False:
            return f"{entry['path']}: present is neither true nor false"
    return None


def _read_blob(where: str, name: str, entry: dict) -> bytes:
    """The saved content of a present entry, checked against its sha256."""
    path = os.path.join(where, blob_name(entry["sha256"]))
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise GenerationError(f"service {name}: the saved content of {entry['path']} cannot be read ({path}): "
                              f"{exc.strerror or exc}") from exc
    if hashlib.sha256(data).hexdigest() != entry["sha256"]:
        raise GenerationError(f"service {name}: the saved content of {entry['path']} is damaged ({path} does not "
                              f"match its sha256)")
    return data


def _intact(where: str, name: str, manifest: dict) -> bool:
    try:
        for entry in manifest["files"]:
            if entry["present"]:
                _read_blob(where, name, entry)
    except GenerationError:
        return False
    return True


def save(directory: str, services: list, check_mode: bool) -> dict:
    """Keep each service's files as they are now as its generation. Every file is read before anything is written:
    a file that cannot be read fails the whole call with nothing written. A service whose saved generation already
    holds exactly these files (and is intact) is left alone. Returns {changed, services, saved: [{service, files
    (how many are present), changed}]}; no content."""
    check_services(directory, services)
    snapshots = [(service["name"], *snapshot(service["name"], service["files"])) for service in services]
    result = {"changed": False, "services": [snap[0] for snap in snapshots], "saved": []}
    if not snapshots:
        return result
    try:
        ensure_directory(directory, 0o700, check_mode)
    except OSError as exc:
        raise GenerationError(f"dir: cannot create {directory}: {exc.strerror or exc}") from exc
    for name, manifest, blobs in snapshots:
        try:
            before = load_generation(directory, name)
        except GenerationError:
            before = None  # a damaged generation is replaced
        same = before is not None and before[1] == manifest and _intact(before[0], name, before[1])
        if not check_mode:
            try:
                if not same:
                    _write_generation(directory, name, manifest, blobs)
                elif before[0] != os.path.join(directory, name):
                    # The same generation, left aside by a run cut short between its renames: back in its place.
                    os.rename(before[0], os.path.join(directory, name))
                    _fsync_dir(directory)
            except OSError as exc:
                raise GenerationError(f"service {name}: cannot save its generation in {directory}: "
                                      f"{exc.strerror or exc}") from exc
        present = sum(1 for entry in manifest["files"] if entry["present"])
        result["saved"].append({"service": name, "files": present, "changed": not same})
        result["changed"] |= not same
    return result


# --- restoring ------------------------------------------------------------------------------------------------------

def _ids(name: str, entry: dict) -> tuple[int, int]:
    try:
        uid = _uid(entry["owner"])
    except KeyError:
        raise GenerationError(f"service {name}: {entry['path']}: its saved owner {entry['owner']!r} is not a user "
                              f"of this host") from None
    try:
        gid = _gid(entry["group"])
    except KeyError:
        raise GenerationError(f"service {name}: {entry['path']}: its saved group {entry['group']!r} is not a group "
                              f"of this host") from None
    return uid, gid


def _put_back(path: str, data: bytes, mode: int, uid: int, gid: int, check_mode: bool) -> bool:
    """data at path with this mode, owner and group, unless it holds them already (_atomic_files.place_as: a
    temporary file that gets its mode and owner before any content, then renamed; its directory created 0755 when
    missing). A directory at path is refused. Returns whether something changed."""
    if os.path.isdir(path) and not os.path.islink(path):
        raise IsADirectoryError(f"{path} is a directory")
    return place_as(path, data, mode, check_mode, uid, gid, parents=True)[0]


def restore(directory: str, services: list, check_mode: bool) -> dict:
    """Put each service's saved generation back: a file present when it was saved gets its content, mode, owner
    and group back where any differs (its directory created 0755 when missing), a file absent then is removed. The
    files given with a service are not used: its name selects its generation, which lists the paths. Every service
    must have an intact generation, or nothing is changed. Returns {changed, services, restored: [{service, path,
    action (written or removed)}], daemon_reload (a restored or removed path ends in .service)}."""
    check_services(directory, services, with_files=False)
    names = [service["name"] for service in services]
    found = {name: load_generation(directory, name) for name in names}
    missing = [name for name in names if found[name] is None]
    if missing:
        raise GenerationError(f"no saved generation in {directory} for: {', '.join(missing)}; nothing was restored")
    # Every saved content read and checked before any file is touched.
    plans = []
    for name in names:
        where, manifest = found[name]
        for entry in manifest["files"]:
            if entry["present"]:
                plans.append((name, entry, _read_blob(where, name, entry), int(entry["mode"], 8), *_ids(name, entry)))
            else:
                plans.append((name, entry, None, None, None, None))
    restored = []
    for name, entry, data, mode, uid, gid in plans:
        path = entry["path"]
        try:
            if data is not None:
                if _put_back(path, data, mode, uid, gid, check_mode):
                    restored.append({"service": name, "path": path, "action": "written"})
            elif os.path.lexists(path):
                if os.path.isdir(path) and not os.path.islink(path):
                    raise IsADirectoryError(f"{path} is a directory")
                if not check_mode:
                    os.unlink(path)
                restored.append({"service": name, "path": path, "action": "removed"})
        except OSError as exc:
            done = ", ".join(f"{r['path']} ({r['action']})" for r in restored) or "nothing"
            raise GenerationError(f"service {name}: cannot restore {path}: {exc.strerror or exc} (restored before "
                                  f"it: {done})") from exc
    return {"changed": bool(restored), "services": names, "restored": restored,
            "daemon_reload": any(r["path"].endswith(".service") for r in restored)}
