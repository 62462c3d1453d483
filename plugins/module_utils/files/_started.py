# Copyright: ascend.sglang contributors
# Apache License 2.0
"""What each running unit was started from, against the files it would start from now.

Private to the collection. Runs on the managed host (modules sglang_place_files, sglang_service_status and
sglang_preflight in doctor mode).

Why: the decision to restart a service used to be "this run changed one of its files". A run that wrote the
files and died before the restart (SIGKILL, Ctrl-C, a lost SSH session) left nothing behind, and every later
run found the files unchanged: the fleet kept running a configuration no file showed. Now every unit the
renderer writes (server, router, watchdog) records, as it starts, the digest of every file that defines it
(roles/sglang_service/files/sglang_record_start.sh, its ExecStartPre): ``/run/sglang/<unit>.started``, root
only, holding

    invocation <the start's systemd InvocationID>
    <sha256>  <path>        one line per file (its environment, secrets, launcher, unit, cann_env.sh, ...)
    -  <path>               a file that was missing at the start

The record is self-describing: the files are compared with what is on disk now, whatever the caller knows of
them. /run is emptied at boot, and every start (by hand, by the watchdog, by systemd after a reboot) writes
the record again, so a service started after its files were written is never reported stale.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Callable, Iterable, Mapping, Sequence

from ansible_collections.ascend.sglang.plugins.module_utils.files._units import ENABLED

RUN_DIR = "/run/sglang"
# What the judgement reads of each unit (systemctl show).
PROPERTIES = "LoadState,ActiveState,SubState,InvocationID,NeedDaemonReload,FragmentPath,UnitFileState"
# A unit in one of these states runs what it started from; any other state starts again from the files on disk.
RUNNING = frozenset({"active", "reloading"})
_LINE = re.compile(r"([0-9a-f]{64}|-) [ *](/.*)")


def record_path(unit: str) -> str:
    """Where the unit's start record is written (the unit's ExecStartPre)."""
    return f"{RUN_DIR}/{unit}.started"


def file_digest(path: str) -> str | None:
    """sha256 of a regular file, as sha256sum prints it; None when it is missing or unreadable."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


def parse_record(text: str) -> tuple[str, list[tuple[str, str | None]]] | None:
    """(invocation, [(path, digest or None when it was missing)]) of a record; None when it is not one."""
    lines = text.splitlines()
    if not lines or not lines[0].startswith("invocation "):
        return None
    files = []
    for line in lines[1:]:
        found = _LINE.fullmatch(line)
        if not found:
            return None
        files.append((found.group(2), None if found.group(1) == "-" else found.group(1)))
    return lines[0][len("invocation "):].strip(), files


def judge(unit: str, props: Mapping[str, str], record: str | None,
          digest: Callable[[str], str | None] = file_digest) -> dict[str, Any]:
    """Whether ``unit`` runs what its files say now.

    Returns {unit, running, pending, reason, files}: ``pending`` when it runs and its start record differs from
    the files on disk (``files``: the paths that differ), when systemd has not loaded its changed unit file, or
    when no record of its current start exists. A unit that does not run has nothing pending: its next start
    reads the files on disk."""
    out: dict[str, Any] = {"unit": unit, "running": props.get("ActiveState") in RUNNING, "pending": False,
                           "reason": None, "files": []}
    if not out["running"]:
        return out
    if props.get("NeedDaemonReload") == "yes":
        # Its unit file was written but systemd was not reloaded: it runs an older unit, and a restart alone
        # would start that older unit again (the deployment reloads systemd first).
        return dict(out, pending=True, reason="its unit file changed after systemd loaded it",
                    files=[props["FragmentPath"]] if props.get("FragmentPath") else [])
    parsed = parse_record(record) if record is not None else None
    if parsed is None:
        why = "no record of the files it started from" if record is None else "its start record is unreadable"
        return dict(out, pending=True, reason=why)
    invocation, files = parsed
    # systemd before 232 has no invocation id (neither the property nor $INVOCATION_ID): there the files alone
    # tell, or every deploy would restart every service.
    if invocation != (props.get("InvocationID") or ""):
        return dict(out, pending=True, reason="its start record is of an earlier start")
    differ = [path for path, was in files if digest(path) != was]
    if differ:
        return dict(out, pending=True, reason="files changed since it started", files=differ)
    return out


def read_record(unit: str) -> str | None:
    try:
        with open(record_path(unit), encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def parse_show_many(text: str, units: Sequence[str]) -> dict[str, dict[str, str]]:
    """``systemctl show -p ... U1 U2 ...`` prints one block per unit, in order, separated by a blank line."""
    blocks: list[dict[str, str]] = [{}]
    for line in text.splitlines():
        if not line.strip():
            if blocks[-1]:
                blocks.append({})
            continue
        key, sep, value = line.partition("=")
        if sep:
            blocks[-1][key.strip()] = value.strip()
    blocks = [b for b in blocks if b]
    return dict(zip(units, blocks)) if len(blocks) == len(units) else {}


def check_units(units: Sequence[str], run_command: Callable[[list[str]], tuple[int, str, str]],
                systemctl: str | None) -> dict[str, dict[str, Any]]:
    """judge() for every unit, with one systemctl call. Without systemctl (or when it fails) nothing can be
    told: every unit is reported with ``unknown`` and nothing pending."""
    units = list(units)
    if not units:
        return {}
    props: dict[str, dict[str, str]] = {}
    error = "systemctl not found"
    if systemctl:
        rc, stdout, stderr = run_command([systemctl, "show", "--property=" + PROPERTIES, "--", *units])
        props = parse_show_many(stdout, units) if rc == 0 else {}
        error = (stderr or stdout).strip() or f"systemctl show failed (rc {rc})"
    out = {}
    digests: dict[str, str | None] = {}

    def digest(path: str) -> str | None:  # files the units share (cann_env.sh, the watchdog) are hashed once
        if path not in digests:
            digests[path] = file_digest(path)
        return digests[path]

    for unit in units:
        if unit not in props:
            out[unit] = {"unit": unit, "running": False, "pending": False, "reason": None, "files": [],
                         "unknown": error[:200], "need_daemon_reload": False, "enabled": False}
            continue
        got = judge(unit, props[unit], read_record(unit), digest)
        got["need_daemon_reload"] = props[unit].get("NeedDaemonReload") == "yes"
        # Enabled as sglang_units judges it: a deployment leaves a running, enabled unit alone.
        got["enabled"] = props[unit].get("UnitFileState") in ENABLED
        out[unit] = got
    return out


def pending_rows(judged: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """{unit, reason, files} of the judged units with a restart pending (status, doctor, the deployment)."""
    return [{"unit": got["unit"], "reason": got["reason"], "files": list(got["files"])}
            for got in judged if got.get("pending")]


def pending_text(pending: Iterable[Mapping[str, Any]] | None) -> str:
    """One cell for a running service: ``current`` when it and its watchdog run their files, else each unit's
    restart pending, with the files that differ (doctor's finding, the status table)."""
    parts = []
    for row in pending or []:
        files = ", ".join(str(f).rsplit("/", 1)[-1] for f in row.get("files") or [])
        parts.append(f"{row.get('unit')}: {row.get('reason')}" + (f" ({files})" if files else ""))
    return "RESTART PENDING: " + "; ".join(parts) if parts else "current"
