# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The environment variables each release's stack reads (profiles/_env/), and the names a profile sets that none
of them reads.

``sglang-<release>.txt`` lists what that release's sglang package reads (generated from the package by
tests/validation/update_env_catalog.py); ``readers.yml`` lists, by hand and with the source that reads each one,
the names of the rest of the stack (sgl-kernel-npu / deep_ep, torch_npu, CANN, MemFabric, ...). A profile that
sets a name no reader of its release lists keeps it only with an ``env`` deviation naming the variable: a
documented name nothing reads does nothing, and the operator who tunes it should know.
"""

from __future__ import annotations

import functools
import os
from typing import Any, Iterable, Mapping

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import _read_yaml, profiles_dir

# Variables the launcher and the shell set or use for themselves (not tuning knobs of the stack), read by every
# process as a matter of course: the interpreter's module path and the CANN install the set_env scripts export.
SHELL_NAMES = frozenset({"PYTHONPATH", "LD_LIBRARY_PATH", "PATH"})


def catalog_dir() -> str:
    return os.path.join(profiles_dir(), "_env")


@functools.lru_cache(maxsize=None)
def readers() -> dict[str, Any]:
    """readers.yml: {readers: {reader: {releases, source, names: {NAME: where}}}, unread: {NAME: note}}."""
    return _read_yaml(os.path.join(catalog_dir(), "readers.yml"))


@functools.lru_cache(maxsize=None)
def sglang_names(release: str) -> frozenset[str]:
    """What the sglang package of ``release`` reads; empty when no catalog was generated for it."""
    path = os.path.join(catalog_dir(), f"sglang-{release}.txt")
    if not os.path.exists(path):
        return frozenset()
    with open(path, encoding="utf-8") as handle:
        return frozenset(line.strip() for line in handle if line.strip() and not line.startswith("#"))


def _applies(reader: Mapping[str, Any], release: str) -> bool:
    wanted = reader.get("releases") or "all"
    return wanted == "all" or release in wanted


def catalog(release: str) -> dict[str, str]:
    """Every name the stack of ``release`` reads -> the reader that reads it (the first one listed)."""
    out = {name: "sglang" for name in sglang_names(release)}
    for reader, spec in (readers().get("readers") or {}).items():
        if _applies(spec, release):
            for name in spec.get("names") or {}:
                out.setdefault(str(name), str(reader))
    return out


def release_known(release: str) -> bool:
    """A release has a catalog once its sglang names were generated."""
    return bool(sglang_names(release))


def unread(release: str, names: Iterable[str]) -> list[str]:
    """The names no reader of ``release`` lists (in the given order, once each)."""
    known = catalog(release)
    out: list[str] = []
    for name in names:
        if name not in known and name not in SHELL_NAMES and name not in out:
            out.append(name)
    return out


def profile_env(data: Mapping[str, Any]) -> dict[str, list[tuple[str, str]]]:
    """What a profile's roles set: NAME -> [(role, value), ...] in the file's order."""
    out: dict[str, list[tuple[str, str]]] = {}
    for role, spec in (data.get("roles") or {}).items():
        for name, value in ((spec or {}).get("env") or {}).items():
            out.setdefault(str(name), []).append((str(role), str(value)))
    return out


def explained(deviations: Iterable[Mapping[str, Any]]) -> set[str]:
    """The variables an ``env`` deviation names (``variable:``)."""
    return {str(d.get("variable")) for d in deviations if d.get("part") == "env" and d.get("variable")}


def unexplained(release: str, data: Mapping[str, Any], deviations: Iterable[Mapping[str, Any]]) -> list[str]:
    """'role NAME' for every setting of a name no reader of ``release`` lists that no env deviation names."""
    env = profile_env(data)
    ok = explained(deviations)
    return [f"{role} {name}" for name in unread(release, env) if name not in ok for role, _value in env[name]]


def env_deviation(release: str, name: str, settings: list[tuple[str, str]]) -> dict[str, Any]:
    """The deviation that keeps a documented name no reader of ``release`` lists: the profile sets it as its
    document does (rendered = seed), and the reason tells the operator it has no effect there."""
    seed = f"{name}={settings[0][1]}"
    note = (readers().get("unread") or {}).get(name)
    roles = ", ".join(dict.fromkeys(role for role, _value in settings))
    reason = (f"no reader of sglang {release}'s stack reads {name} (profiles/_env: the sglang package, "
              f"sgl-kernel-npu, torch_npu, CANN, MemFabric): kept as the document sets it ({roles}), it has no "
              "effect on that release, and tuning it (sglang_overrides) changes nothing")
    if note:
        reason += f"; {note}"
    return {"part": "env", "variable": name, "seed": seed, "rendered": seed, "reason": reason}


def env_deviations(release: str, data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One explaining deviation per name the profile's roles set that no reader of ``release`` lists."""
    env = profile_env(data)
    return [env_deviation(release, name, env[name]) for name in unread(release, env)]
