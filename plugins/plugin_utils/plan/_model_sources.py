# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The sources of sglang_model_source: where a model directory's files come from.

- ``/path``: a directory on storage every host mounts at that path (each host reads it itself);
- ``[user@]host:/path``: rsync over ssh from that host (the server hosts' ssh must reach it);
- ``rsync://host[:port]/module[/path]``: an rsync daemon.

Each becomes one argument of rsync (no shell on this side); rsync passes a remote path to the remote shell, so a
path is made of plain characters only. Pure; no Ansible import.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

_PATH = r"/[A-Za-z0-9._+@%=,~/-]*"
_HOST = r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.-]*)"
SHARED_RE = re.compile(_PATH)
SSH_RE = re.compile(rf"([A-Za-z_][A-Za-z0-9_.-]*@)?{_HOST}:{_PATH}")
DAEMON_RE = re.compile(rf"rsync://{_HOST}(:[0-9]{{1,5}})?/[A-Za-z0-9._+-]+(/[A-Za-z0-9._+@%=,~/-]*)?")
FORMS = "/path on shared storage, [user@]host:/path (rsync over ssh) or rsync://host[:port]/module/path"


def kind(source: str) -> str | None:
    """shared | ssh | daemon, or None when the text is none of them."""
    if not isinstance(source, str) or ".." in source.split("/"):
        return None
    if DAEMON_RE.fullmatch(source):
        return "daemon"
    if "://" in source:  # another scheme, or rsync:// without a module: not a host named https or rsync
        return None
    if SHARED_RE.fullmatch(source):
        return "shared"
    if SSH_RE.fullmatch(source):
        return "ssh"
    return None


def by_path(value: Any, model_path: str | None) -> dict[str, str]:
    """sglang_model_source as {model directory: source}: a mapping as given, a single source for
    sglang_model_path."""
    if isinstance(value, Mapping):
        return {str(k).rstrip("/") or "/": str(v) for k, v in value.items()}
    if value in (None, ""):
        return {}
    return {model_path.rstrip("/"): str(value)} if model_path else {}


def problems(value: Any) -> list[str]:
    """What is wrong with a value of sglang_model_source (empty: nothing)."""
    if value in (None, ""):
        return []
    items = value.items() if isinstance(value, Mapping) else [(None, value)]
    out = []
    for path, source in items:
        if path is not None and not (isinstance(path, str) and SHARED_RE.fullmatch(path) and path != "/"):
            out.append(f"key {path!r} is not a model directory (an absolute path of plain characters)")
        if kind(source) is None:
            out.append(f"{source!r}{'' if path is None else f' (for {path})'} is not a source: use {FORMS}")
        elif path is not None and kind(source) == "shared" and source.rstrip("/") == str(path).rstrip("/"):
            out.append(f"{path} is its own source")
    return out


def own_source(value: Any, model_path: Any) -> str | None:
    """What is wrong with a single source that is sglang_model_path itself (the directory staged onto itself), as a
    finding of sglang_model_source; None otherwise (the mapping form is checked by ``problems``)."""
    if not (isinstance(value, str) and isinstance(model_path, str) and kind(value) == "shared"):
        return None
    if (value.rstrip("/") or "/") != (model_path.rstrip("/") or "/"):
        return None
    return (f"is {value!r}, the same directory as sglang_model_path: the weights would be staged onto themselves; "
            "set sglang_model_source to where they come from (a directory every host mounts, host:/path or "
            "rsync://host/module/path), or leave it unset when every server host already holds them")
