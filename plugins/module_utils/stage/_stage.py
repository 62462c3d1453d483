# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Weights staging on one host: observe, start / poll / finish a pull, serve / unserve (module sglang_stage).

A pull never writes under the model directory until its files are verified: rsync fetches what the host lacks
into ``<parent>/.<name>.sglang-stage/files`` (an interrupted file's bytes in a ``.sglang-partial`` directory beside
it there, which the next run resumes from); finish checks every fetched file against the source's listing (size; with full, the sha256 of each
file of the directory goes into the weights checks' digest cache), then renames each into the model directory,
which it creates with the operator's owner and mode. The staging directory sits beside the model directory, on
the same file system, so each rename is atomic and no byte is copied twice.

The rsync runs detached from the module (the module returns at once; poll reads its progress), so that a pull of
700 GB outlives no connection and reports while it runs. Its state (pid, exit status, output) is in the staging
directory: a second start while it runs attaches to it, after it died resumes it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from typing import Any, Callable

from ansible_collections.ascend.sglang.plugins.module_utils.checks import _weights
from ansible_collections.ascend.sglang.plugins.module_utils.stage import _rsync

STAGING_SUFFIX = ".sglang-stage"
LIST_TIMEOUT = 900
SERVE_DIR = "/run/sglang-stage"


class StageError(Exception):
    """A refusal or a failure, with what to do."""


def staging_dir(path: str) -> str:
    parent, name = os.path.split(path.rstrip("/"))
    return os.path.join(parent, f".{name}{STAGING_SUFFIX}")


def _free_bytes(path: str) -> int:
    probe = path
    while probe and not os.path.isdir(probe):
        probe = os.path.dirname(probe)
    st = os.statvfs(probe or "/")
    return st.f_bavail * st.f_frsize


def _local(root: str) -> dict[str, list[int]]:
    """{relative path: [size, mtime]} of the files under root, without an interrupted transfer's bytes."""
    out: dict[str, list[int]] = {}
    if not os.path.isdir(root):
        return out
    listing, error = _weights._listing(root)
    if error:
        raise StageError(f"{root}: {error}")
    for rel, st in listing.items():
        if _rsync.PARTIAL not in rel.split(os.sep)[:-1]:
            out[rel] = [st.st_size, int(st.st_mtime)]
    return out


def _run(argv: list[str], timeout: int) -> subprocess.CompletedProcess:
    env = dict(os.environ, **_rsync.ENV)
    # Not AnsibleModule.run_command: no module object here, and a listing of an unreachable source needs a bound.
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env,  # pylint: disable=ansible-bad-function
                          check=False)


def observe(path: str, source: str, rsync: str, timeout: int) -> dict[str, Any]:
    """What the host holds under path, what it has staged already, the free bytes where the files go, and the
    source's listing as this host reads it (which also proves that the host reaches the source). The listing is
    bounded by timeout, at most LIST_TIMEOUT seconds: a source that takes longer to list is as good as unreachable."""
    staged_root = os.path.join(staging_dir(path), "files")
    out: dict[str, Any] = {"path": path, "exists": os.path.isdir(path), "files": _local(path),
                           "staged": {rel: v[0] for rel, v in _local(staged_root).items()},
                           "free": _free_bytes(path), "source": None, "source_error": None}
    try:
        timeout = min(timeout, LIST_TIMEOUT)
        done = _run(_rsync.list_argv(rsync, source), timeout)
    except FileNotFoundError:
        out["source_error"] = f"{rsync} not found: install rsync on the host"
        return out
    except subprocess.TimeoutExpired:
        out["source_error"] = f"listing {source} took more than {timeout} s"
        return out
    if done.returncode != 0:
        out["source_error"] = _rsync_error(done.stderr) or f"rsync exited {done.returncode}"
        return out
    out["source"] = _rsync.parse_listing(done.stdout)
    return out


def _rsync_error(text: str) -> str:
    """What rsync said went wrong, without its closing "rsync error: ... (code N) at main.c(...)" line."""
    lines = [ln.strip() for ln in text.replace("\r", "\n").splitlines()
             if ln.strip() and not _rsync.PROGRESS_RE.match(ln) and not ln.startswith("rsync error:")]
    return "; ".join(lines[:3])


# ---- the detached pull ---------------------------------------------------------------------------------------

def _state(path: str) -> dict[str, Any]:
    try:
        with open(os.path.join(staging_dir(path), "run.json"), encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return {}


def _alive(pid: Any) -> bool:
    if not isinstance(pid, int) or pid <= 1:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if not _running(pid):  # ended (a zombie): its waiter is about to record its status
        return False
    try:  # a reused pid is not our rsync
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            cmdline = handle.read()
    except OSError:
        return False
    # Empty while the process is still inside execve: Popen returns once the exec has begun (its close-on-exec pipe
    # closes), before the new program's arguments are in place.
    return not cmdline or b"rsync" in cmdline


def _write_json(path: str, data: Any) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    os.replace(tmp, path)


def _running(pid: Any) -> bool:
    """A process that exists and has not ended (a zombie has)."""
    if not isinstance(pid, int) or pid <= 1:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _group_running(pgid: Any) -> bool:
    """Whether a process of the group pgid (the waiter's session: rsync and the processes rsync forks) has not
    ended."""
    if not isinstance(pgid, int) or pgid <= 1:
        return False
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # ended while the list was read
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z":
            return True
    return False


def _detach(argv: list[str], stage: str) -> tuple[int, int]:
    """Runs argv detached (its own session, output in stage/rsync.log); a waiter process writes rsync's pid and exit
    status to stage/rc.json when it ends. Returns (rsync's pid, the waiter's pid)."""
    read_end, write_end = os.pipe()
    first = os.fork()
    if first == 0:  # pragma: no cover - the detached side
        try:
            os.close(read_end)
            os.setsid()
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            log = open(os.path.join(stage, "rsync.log"), "wb")
            # Not run_command: this rsync outlives the module (the poll step reads it), which run_command waits for.
            proc = subprocess.Popen(argv, stdin=devnull, stdout=log, stderr=subprocess.STDOUT,  # pylint: disable=ansible-bad-function
                                    env=dict(os.environ, **_rsync.ENV), close_fds=True)
            os.write(write_end, str(proc.pid).encode())
            os.close(write_end)
            rc = proc.wait()
            _write_json(os.path.join(stage, "rc.json"), {"rc": rc, "pid": proc.pid, "ended": time.time()})
        finally:
            os._exit(0)
    os.close(write_end)
    data = b""
    while True:
        chunk = os.read(read_end, 32)
        if not chunk:
            break
        data += chunk
    os.close(read_end)
    if not data:
        raise StageError(f"could not start {argv[0]}")
    return int(data), first


def start(path: str, source: str, files: list[str], full: bool, rsync: str, bwlimit: int,
          check_mode: bool) -> dict[str, Any]:
    """Starts the pull of files (relative paths) from source into the staging directory, or attaches to the one
    running. Returns {started, attached, pid}."""
    stage = staging_dir(path)
    state = _state(path)
    if state.get("source") == source and _alive(state.get("pid")) and _ended(stage, state.get("pid")) is None:
        return {"started": False, "attached": True, "pid": state["pid"]}
    if check_mode:
        return {"started": False, "attached": False, "pid": None}
    os.makedirs(os.path.join(stage, "files"), mode=0o700, exist_ok=True)
    os.chmod(stage, 0o700)
    for name in ("rc.json", "rsync.log"):
        if os.path.exists(os.path.join(stage, name)):
            os.unlink(os.path.join(stage, name))
    compare = os.path.abspath(path) if os.path.isdir(path) else None
    argv = _rsync.pull_argv(rsync, source, os.path.join(stage, "files"), files, compare, full, bwlimit)
    pid, waiter = _detach(argv, stage)
    _write_json(os.path.join(stage, "run.json"), {"pid": pid, "waiter": waiter, "source": source,
                                                  "files": len(files), "started": time.time()})
    return {"started": True, "attached": False, "pid": pid}


def _tail(path: str, size: int = 65536) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, os.path.getsize(path) - size))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _ended(stage: str, pid: Any) -> int | None:
    """The exit status of the rsync of pid (None: not ended, as far as its waiter wrote)."""
    try:
        with open(os.path.join(stage, "rc.json"), encoding="utf-8") as handle:
            ended = json.load(handle)
    except (OSError, ValueError):
        return None
    return ended.get("rc") if ended.get("pid") == pid else None


def poll(path: str) -> dict[str, Any]:
    """{running, exit_code, progress, error}: the pull's state now (not "rc": Ansible fails a result whose rc is not 0,
    and a pull that stopped is a state to report, not a failure of the call)."""
    stage = staging_dir(path)
    state = _state(path)
    text = _tail(os.path.join(stage, "rsync.log"))
    progress = _rsync.last_progress(text)
    rc = _ended(stage, state.get("pid"))
    # rsync may have ended a moment before its waiter writes its status: running until then
    running = rc is None and (_alive(state.get("pid")) or _running(state.get("waiter")))
    if rc is None and not running:
        rc = -1  # died without its waiter (the host rebooted, or it was killed): the next start resumes it
    error = None
    if rc not in (None, 0):
        error = _rsync_error(text) or f"rsync ended with {rc}"
    return {"running": running, "exit_code": rc, "progress": progress, "error": error}


def stop(path: str) -> bool:
    """Stops a running pull (its partial bytes stay for the next run). Returns whether one ran."""
    state = _state(path)
    pid = state.get("pid")
    if not _alive(pid):
        return False
    os.kill(pid, signal.SIGTERM)
    # Bounded: until its waiter has written its status and every process rsync forked has ended. A local copy's
    # receiver is told to exit by the rsync stopped here and keeps the file in flight (moves it into the partial
    # directory) on its way out, after that rsync has ended: the next start must find it there.
    for _unused in range(100):
        if not _alive(pid) and not _running(state.get("waiter")) and not _group_running(state.get("waiter")):
            break
        time.sleep(0.1)
    return True


def _apply_owner(path: str, uid: int, gid: int, mode: int) -> None:
    if uid != -1 or gid != -1:
        os.chown(path, uid, gid)
    os.chmod(path, mode)


def finish(path: str, expected: dict[str, int], full: bool, uid: int, gid: int, dir_mode: int,
           cache_path: str, check_mode: bool, hasher: Callable[[str], str] = _weights.sha256_file) -> dict[str, Any]:
    """Verifies what the pull fetched against expected ({relative path: size} of every file of the source) and moves
    it into place. Refuses, moving nothing, when a file staged or already in place has the wrong size or is
    missing. With full, returns the sha256 of every file (through the digest cache, which it updates)."""
    stage = staging_dir(path)
    staged_root = os.path.join(stage, "files")
    staged = _local(staged_root)
    present = _local(path)
    wrong: list[str] = []
    for rel, size in sorted(expected.items()):
        got = staged.get(rel) or present.get(rel)
        if got is None:
            wrong.append(f"{rel} missing")
        elif got[0] != size:
            wrong.append(f"{rel} has {got[0]} bytes, the source {size}")
    if wrong:
        raise StageError(f"{path}: not moved into place, {len(wrong)} file(s) do not match the source: "
                         + "; ".join(wrong[:5]) + ("" if len(wrong) <= 5 else f"; and {len(wrong) - 5} more"))
    moved = sorted(rel for rel in staged if rel in expected)
    if check_mode:
        return {"moved": moved, "bytes": sum(staged[r][0] for r in moved), "digests": {}, "hashed": 0, "cached": 0}
    if not os.path.isdir(path):
        os.makedirs(path, mode=0o755, exist_ok=True)
        _apply_owner(path, uid, gid, dir_mode)
    file_mode = dir_mode & 0o666
    for rel in moved:
        target = os.path.join(path, rel)
        parent = os.path.dirname(target)
        if not os.path.isdir(parent):
            os.makedirs(parent, mode=0o755, exist_ok=True)
            _apply_owner(parent, uid, gid, dir_mode)
        source = os.path.join(staged_root, rel)
        _apply_owner(source, uid, gid, file_mode)
        os.replace(source, target)
    shutil.rmtree(stage, ignore_errors=True)
    out: dict[str, Any] = {"moved": moved, "bytes": sum(staged[r][0] for r in moved), "digests": {},
                           "hashed": 0, "cached": 0}
    if full:
        cache = _weights.load_cache(cache_path)
        seen = _weights.observe(path, True, cache)
        _weights.save_cache(cache, cache_path)
        out["digests"] = {rel: d for rel, d in seen["digests"].items() if rel in expected}
        out["hashed"], out["cached"] = seen["hashed"], seen["cached"]
    return out


# ---- serving a verified copy ---------------------------------------------------------------------------------

def _serve_state(serve_dir: str) -> dict[str, Any]:
    try:
        with open(os.path.join(serve_dir, "serve.json"), encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return {}


def serve(modules: list[dict[str, Any]], allow: list[str], port: int, rsync: str, check_mode: bool,
          serve_dir: str = SERVE_DIR) -> dict[str, Any]:
    """A read-only rsync daemon on port serving each {name, path} to the addresses allowed. The same daemon is
    kept when it serves exactly this; otherwise it is restarted with it. Returns {changed, pid}."""
    entries = []
    for module in modules:
        # What goes into the daemon's configuration is refused unless plain: a name of plain characters, an
        # absolute path without a control character (a line break would start a setting of its own).
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", str(module.get("name"))) or \
                not str(module.get("path")).startswith("/") or re.search(r"[\x00-\x1f\x7f]", str(module["path"])):
            raise StageError(f"serve: refused module {module.get('name')!r} of {module.get('path')!r}: a plain name "
                             "and an absolute path without control characters")
        st = os.stat(module["path"])
        # A daemon run by root reads as the directory's owner; one run by another user cannot change user.
        ids = {"uid": st.st_uid, "gid": st.st_gid} if os.geteuid() == 0 else {}
        entries.append(dict(name=module["name"], path=module["path"], **ids))
    allow = [a for a in allow if re.fullmatch(r"[A-Za-z0-9.:/_-]+", str(a))]  # addresses and names only
    config = _rsync.daemon_config(entries, allow)
    state = _serve_state(serve_dir)
    if state.get("config") == config and state.get("port") == port and _alive(state.get("pid")):
        return {"changed": False, "pid": state["pid"]}
    if check_mode:
        return {"changed": True, "pid": None}
    unserve(False, serve_dir)
    os.makedirs(serve_dir, mode=0o700, exist_ok=True)
    conf_path = os.path.join(serve_dir, "rsyncd.conf")
    fd = os.open(conf_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(config)
    # Not run_command: the daemon outlives the module (unserve stops it), which run_command waits for.
    proc = subprocess.Popen(_rsync.daemon_argv(rsync, conf_path, port, os.path.join(serve_dir, "rsyncd.log")),  # pylint: disable=ansible-bad-function
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, close_fds=True)
    for _unused in range(50):  # bounded: the daemon binds its port within a few hundred ms
        if proc.poll() is not None:
            raise StageError(f"rsync --daemon on port {port} exited {proc.returncode}: "
                             + _tail(os.path.join(serve_dir, "rsyncd.log"), 2048).strip()[-300:])
        if _listening(port):
            break
        time.sleep(0.1)
    _write_json(os.path.join(serve_dir, "serve.json"), {"pid": proc.pid, "port": port, "config": config})
    return {"changed": True, "pid": proc.pid}


def _listening(port: int) -> bool:
    import socket
    for family, address in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        try:
            with socket.socket(family, socket.SOCK_STREAM) as sock:
                sock.settimeout(0.5)
                if sock.connect_ex((address, port)) == 0:
                    return True
        except OSError:
            continue
    return False


def unserve(check_mode: bool, serve_dir: str = SERVE_DIR) -> bool:
    """Stops the daemon serve() started. Returns whether one ran."""
    state_path = os.path.join(serve_dir, "serve.json")
    try:
        with open(state_path, encoding="utf-8") as handle:
            pid = json.load(handle).get("pid")
    except (OSError, ValueError):
        return False
    if not _alive(pid):
        if not check_mode:
            os.unlink(state_path)
        return False
    if check_mode:
        return True
    os.killpg(pid, signal.SIGTERM)
    for _unused in range(50):
        if not _alive(pid):
            break
        time.sleep(0.1)
    os.unlink(state_path)
    return True
