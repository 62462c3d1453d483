# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The live kernel settings of a host's plan, read and written where sysctl(8) reads and writes them
(``/proc/sys/<name>``), in the call that persists them (sglang_place_files): one round trip for the whole host
instead of one ``sysctl -n`` per setting and one ``sysctl -w`` per difference.

Private to the collection. Runs on the managed host.
"""

from __future__ import annotations

import os
from typing import Mapping


def proc_path(root: str, name: str) -> str:
    """The file of kernel setting ``name`` under ``root`` as sysctl(8) finds it (procps' slashdot): a name whose first
    separator is a dot has its dots and slashes swapped (net.ipv4.conf.eth0/1.rp_filter), one whose first separator
    is a slash is a path already. ValueError for a name that would leave ``root``."""
    first = next((c for c in name if c in "./"), "/")
    path = name if first == "/" else name.translate(str.maketrans("./", "/."))
    parts = path.split("/")
    if not name or any(part in ("", ".", "..") for part in parts):
        raise ValueError(f"{name!r} is not a kernel setting name")
    return os.path.join(root, *parts)


def normalized(value: object) -> str:
    """A kernel setting's value as it is compared: sysctl prints multi-value settings tab-separated, so the same
    words are the same value (here, and where the controller compares what preflight read with the plan)."""
    return " ".join(str(value).split())


def _read(path: str, name: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return normalized(handle.read())
    except OSError as exc:
        raise OSError(f"kernel setting {name}: cannot read {path}: {exc.strerror or exc}") from None


def read_value(root: str, name: str) -> str:
    """The live value of a kernel setting, whitespace-normalized. OSError names the setting (a kernel without it)."""
    return _read(proc_path(root, name), name)


def read_values(root: str, names: "list[str]") -> "dict[str, str | None]":
    """Each setting's live value (None: not readable, or not a setting name), for a look that changes nothing
    (preflight's call, which tells deploy.yml's tuning play whether a host has work)."""
    out: "dict[str, str | None]" = {}
    for name in names:
        try:
            out[name] = read_value(root, name)
        except (OSError, ValueError):
            out[name] = None
    return out


def apply_settings(root: str, values: Mapping[str, str], check_mode: bool) -> list[dict[str, str]]:
    """Each setting whose live value differs from the plan's, written (not in check mode), in the order given:
    [{name, before, after}]. OSError names the setting (a kernel without it, a read-only /proc/sys)."""
    changed = []
    for name, value in values.items():
        path = proc_path(root, name)
        before = _read(path, name)
        if before == normalized(value):
            continue
        if not check_mode:
            try:
                with open(path, "w", encoding="utf-8") as handle:
                    handle.write(f"{value}\n")  # as sysctl -w writes it (procps: "%s\n")
            except OSError as exc:
                raise OSError(f"kernel setting {name}: cannot write {path}: {exc.strerror or exc}") from None
        changed.append({"name": name, "before": before, "after": normalized(value)})
    return changed
