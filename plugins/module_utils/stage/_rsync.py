# Copyright: ascend.sglang contributors
# Apache License 2.0
"""rsync's command lines and outputs, for the weights staging (module_utils/stage/_stage.py).

Every command is an argv (no shell). rsync runs with TZ=UTC and LC_ALL=C, so that the times of a listing are
read the same way on every host and the numbers carry no locale. Private to the collection."""

from __future__ import annotations

import calendar
import re
import time
from typing import Any

# --list-only: "-rw-r--r--          1,024 2026/11/28 15:00:00 model-00001-of-00002.safetensors" (sizes with
# separators unless --no-human-readable, which 3.1 and newer take; both are read).
LIST_RE = re.compile(r"^([-dlcbps])[-rwxsStT]{9}[.+]?\s+([0-9,.]+)\s+(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d) (.+)$")
# --info=progress2: "    536,870,912  25%   95.00MB/s    0:00:16 (xfr#1, to-chk=3/5)" (\r between updates).
PROGRESS_RE = re.compile(r"^\s*([0-9,]+)\s+(\d{1,3})%\s+([0-9.]+)([kMGT]?B)/s\s+(\d+:\d\d:\d\d)")
UNITS = {"B": 1, "kB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}
ENV = {"TZ": "UTC", "LC_ALL": "C"}


def source_root(source: str) -> str:
    """The source as rsync names a directory's content (a trailing slash: its files, not the directory)."""
    return source.rstrip("/") + "/"


# No password prompt ever waits for an answer (an ssh source's key must be there), a daemon that does not answer is
# given up after CONNECT_TIMEOUT seconds, and a transfer that moves no byte for IO_TIMEOUT seconds fails (the next
# run resumes it) instead of hanging until the stage's own bound.
SSH = "ssh -o BatchMode=yes -o ConnectTimeout=30"
CONNECT_TIMEOUT = 30
IO_TIMEOUT = 600


def _remote(source: str) -> list[str]:
    if source.startswith("rsync://"):
        return [f"--contimeout={CONNECT_TIMEOUT}"]
    if not source.startswith("/"):
        return [f"--rsh={SSH}"]  # rsync splits it into words itself: no shell
    return []


def list_argv(rsync: str, source: str) -> list[str]:
    """Lists every file under the source, recursively, without transferring anything."""
    return ([rsync, "--list-only", "--recursive", "--no-human-readable", "--no-motd", f"--timeout={IO_TIMEOUT}"]
            + _remote(source) + [source_root(source)])


def parse_listing(text: str) -> dict[str, list[int]]:
    """{relative path: [size, mtime (UTC epoch seconds)]} of the regular files of a --list-only output."""
    out: dict[str, list[int]] = {}
    for line in text.splitlines():
        match = LIST_RE.match(line)
        if not match or match.group(1) != "-":
            continue
        name = match.group(4)
        if name.startswith("./") or name == ".":
            name = name[2:]
        size = int(match.group(2).replace(",", "").replace(".", ""))
        mtime = calendar.timegm(time.strptime(match.group(3), "%Y/%m/%d %H:%M:%S"))
        out[name] = [size, mtime]
    return out


# Above this many bytes of file arguments, the source's whole directory is named instead: rsync's own quick check
# (against --compare-dest) then skips what the host holds, as the list would have.
ARGS_MAX = 128 << 10


# Where an interrupted file's bytes wait for the next run: a directory of this name beside the file, inside the
# staging tree (rsync excludes it from the transfer). An absolute --partial-dir is what the docs suggest, but rsync
# 3.2 then fails the resumed file's verification ("failed verification -- update put into partial-dir") every time.
PARTIAL = ".sglang-partial"


def pull_argv(rsync: str, source: str, staging: str, files: list[str] | None, compare: str | None,
              checksum: bool, bwlimit: int) -> list[str]:
    """Fetches files (relative paths; None: every file) from the source into staging (a directory beside the final
    one).

    Each file is named as <source>/./<file> with --relative, which keeps its path below the source: a files-from
    list does the same, but rsync 3.2 reports every file of it "vanished" from a daemon module that serves a
    parent of the directory with "use chroot = no". --partial-dir keeps an interrupted file's bytes in a
    PARTIAL directory beside it in staging's tree, and the next run resumes from them (its delta transfer takes them
    as the file's basis); --compare-dest skips what the final directory already
    holds (by size and mtime, or with checksum by content) and gives the transfer its basis for what differs;
    --times keeps the source's mtimes (the next run's quick check, the digest cache); no owner, group or mode: the
    directory's are the operator's."""
    argv = [rsync, "--recursive", "--times", "--no-motd", "--no-inc-recursive", "--info=progress2",
            "--outbuf=L", f"--partial-dir={PARTIAL}", f"--timeout={IO_TIMEOUT}"] + _remote(source)
    if compare:
        argv.append(f"--compare-dest={compare}")
    if checksum:
        argv.append("--checksum")
    if bwlimit:
        argv.append(f"--bwlimit={bwlimit}")
    root = source.rstrip("/")
    named = [f"{root}/./{rel}" for rel in files or []]
    if files is None or sum(len(arg) + 1 for arg in named) > ARGS_MAX:
        return argv + [source_root(source), staging.rstrip("/") + "/"]
    return argv + ["--relative"] + named + [staging.rstrip("/") + "/"]


def daemon_argv(rsync: str, config: str, port: int, log: str) -> list[str]:
    return [rsync, "--daemon", "--no-detach", f"--port={port}", f"--config={config}", f"--log-file={log}"]


def daemon_config(modules: list[dict[str, Any]], allow: list[str]) -> str:
    """A read-only daemon: one module per model directory, no listing of the modules, the pullers' addresses
    only. Each module name holds a random part given by the caller: only the hosts told it can ask for it."""
    lines = ["use chroot = no", "read only = yes", "list = no", "numeric ids = yes", "max connections = 64", ""]
    for module in modules:
        lines += [f"[{module['name']}]", f"    path = {module['path']}"]
        lines += [f"    {key} = {module[key]}" for key in ("uid", "gid") if key in module]
        lines += [f"    hosts allow = {' '.join(allow) or '127.0.0.1'}", "    hosts deny = *", ""]
    return "\n".join(lines)


def last_progress(text: str) -> dict[str, Any] | None:
    """The last --info=progress2 update of an rsync output: bytes, percent, rate (bytes/s), eta (seconds)."""
    for line in reversed(re.split(r"[\r\n]", text)):
        match = PROGRESS_RE.match(line)
        if match:
            hours, minutes, seconds = (int(x) for x in match.group(5).split(":"))
            return {"bytes": int(match.group(1).replace(",", "")), "percent": int(match.group(2)),
                    "rate": int(float(match.group(3)) * UNITS.get(match.group(4), 1)),
                    "eta": hours * 3600 + minutes * 60 + seconds}
    return None
