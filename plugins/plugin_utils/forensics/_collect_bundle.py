# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The failure bundle on the controller: one directory per host (written by the action sglang_collect), the plan,
the preflight's raw observations, an index per host and for the bundle, the diagnosis, and the archive
(sglang-<profile>-<UTC time>.tar.gz, 0600, every member 0600 / 0700).

Private to the collection. Controller only."""

from __future__ import annotations

import copy
import glob
import io
import json
import os
import re
import tarfile
from typing import Any, Iterable, Mapping

from ansible_collections.ascend.sglang.plugins.module_utils.collect._collect import REDACTED, SECRET_NAME, Redactor

# A host's directory name: no path separator, no leading dot or dash (inventory names are free text).
_BAD_HOST = re.compile(r"[^A-Za-z0-9_.:-]|^[^A-Za-z0-9_]|^$")
# systemctl show properties that say a unit is in trouble.
_TROUBLE = re.compile(r"^(ActiveState=(failed|activating|deactivating|inactive)|Result=(?!success$).+|"
                      r"NRestarts=[1-9][0-9]*)$", re.MULTILINE)


def host_dir(bundle_dir: str, host: str) -> str:
    if _BAD_HOST.search(host):
        raise ValueError(f"{host!r}: not usable as a directory name in the bundle")
    return os.path.join(bundle_dir, host)


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


def write_host(out: str, files: Mapping[str, str], index: Mapping[str, Any]) -> None:
    """A host's files under out/ (0600, directories 0700); a path that leaves out/ is refused."""
    os.makedirs(out, mode=0o700, exist_ok=True)
    root = os.path.realpath(out)
    for rel, text in files.items():
        path = os.path.realpath(os.path.join(root, rel))
        if not path.startswith(root + os.sep):
            raise ValueError(f"{rel!r}: leaves the host's directory")
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        _write(path, str(text))
    _write(os.path.join(root, "index.json"), json.dumps(index, indent=1, sort_keys=True) + "\n")


def secret_values(secrets: Any) -> list[str]:
    """Every value of sglang_secrets (role -> flag -> value), whatever its nesting."""
    if isinstance(secrets, Mapping):
        return [v for value in secrets.values() for v in secret_values(value)]
    if isinstance(secrets, (list, tuple)):
        return [v for value in secrets for v in secret_values(value)]
    return [] if secrets is None or isinstance(secrets, bool) else [str(secrets)]


def redacted_plan(plan: Mapping[str, Any], redactor: Redactor) -> Any:
    """The plan with the values of secret-like environment names replaced and every secret value taken out."""
    plan = copy.deepcopy(dict(plan))
    for host_plan in (plan.get("hosts") or {}).values():
        for svc in host_plan.get("services") or []:
            env = svc.get("env") or {}
            for name in env:
                if SECRET_NAME.search(str(name)):
                    redactor.add(env[name])
                    env[name] = REDACTED
    return redacted(plan, redactor)


def redacted(data: Any, redactor: Redactor) -> Any:
    """data (JSON-able) with every secret value the redactor knows taken out, wherever it appears."""
    return json.loads(redactor(json.dumps(data, default=str)))


def mark_missing(bundle_dir: str, hosts: Iterable[str], reasons: Mapping[str, str]) -> list[str]:
    """An index for every host without a directory (unreachable, or failed before the collection); their names."""
    missing = []
    for host in hosts:
        out = host_dir(bundle_dir, host)
        if not os.path.exists(os.path.join(out, "index.json")):
            missing.append(host)
            reason = reasons.get(host) or "not collected: the host was unreachable or failed earlier in this run"
            write_host(out, {}, {"host": host, "reachable": False, "collected": [],
                                 "failed": [{"what": "everything", "reason": reason}]})
    return missing


def log_texts(bundle_dir: str, hosts: Iterable[str]) -> dict[tuple[str, str], str]:
    """(host, source) -> text of what the diagnosis reads: each unit's journal, the driver's kernel lines, npu-smi
    health."""
    texts = {}
    for host in hosts:
        root = host_dir(bundle_dir, host)
        for path in sorted(glob.glob(os.path.join(root, "journal", "*.log"))):
            texts[(host, os.path.basename(path)[: -len(".log")])] = _read(path)
        if os.path.exists(os.path.join(root, "dmesg-npu.txt")):
            texts[(host, "kernel")] = _read(os.path.join(root, "dmesg-npu.txt"))
        health = [_read(p) for p in sorted(glob.glob(os.path.join(root, "npu-smi", "health-*.txt")))]
        if health:
            texts[(host, "npu-smi")] = "".join(health)
    return texts


def troubled_units(bundle_dir: str, hosts: Iterable[str], failure_text: str) -> list[tuple[str, str]]:
    """(host, unit) whose systemd state says trouble (failed, restarting, restarted), or that the failure names."""
    found = []
    for host in hosts:
        for path in sorted(glob.glob(os.path.join(host_dir(bundle_dir, host), "systemctl", "*.txt"))):
            unit = os.path.basename(path)[: -len(".txt")]
            name = unit[: -len(".service")] if unit.endswith(".service") else unit
            named = re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", failure_text)
            if _TROUBLE.search(_read(path)) or named:
                found.append((host, unit))
    return found


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read()


def write_json(path: str, data: Any) -> None:
    _write(path, json.dumps(data, indent=1, sort_keys=True, default=str) + "\n")


def write_text(path: str, text: str) -> None:
    _write(path, text)


def archive(bundle_dir: str, out_path: str) -> int:
    """bundle_dir as out_path (.tar.gz, 0600), rooted at bundle_dir's name, owner-only modes; its size."""
    name = os.path.basename(bundle_dir.rstrip(os.sep))

    def _private(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.mode = 0o700 if info.isdir() else 0o600
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        return info

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(bundle_dir, arcname=name, filter=_private)
    try:
        # Never through a link or over a file: the archive holds every host's logs.
        fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        kind = "a link" if os.path.islink(out_path) else "a file"
        raise ValueError(f"{out_path} already exists ({kind}), and is never replaced: remove it, or pass another "
                         "sglang_collect_dir") from None
    with os.fdopen(fd, "wb") as handle:
        handle.write(buffer.getvalue())
    return len(buffer.getvalue())
