# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The record of a deploy's start on a host: the default start of a later collect.yml's journal window.

Private to the collection. Runs on the managed host: written by sglang_place_files (in the call that places a
host's files, so that it costs no round trip of its own), read by sglang_gather (module_utils/collect/_collect.py).
"""

from __future__ import annotations

import json
import os
import time

DEPLOY_RECORD = "/var/lib/sglang/last-deploy.json"


def read_since(record_path: str, fallback: str) -> "tuple[str, str]":
    """The window's start from the last deploy's record (an epoch for journalctl), else fallback; and where
    it came from."""
    try:
        with open(record_path, encoding="utf-8") as handle:
            started = float(json.load(handle)["started_epoch"])
        return f"@{int(started)}", f"the last deploy's start ({record_path})"
    except (OSError, ValueError, KeyError, TypeError):
        return fallback, f"no deploy record at {record_path}: {fallback}"


def write_record(path: str, started_epoch: float, profile: str) -> None:
    """The deploy's start, for a later collect.yml (written atomically; readable by root only)."""
    os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
    tmp = f"{path}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump({"started_epoch": started_epoch, "profile": profile,
                   "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started_epoch))}, handle)
    os.replace(tmp, path)
