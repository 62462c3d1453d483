# Copyright: ascend.sglang contributors
# Apache License 2.0
"""What ``sglang_server_install`` installs for an SGLang release: the reference environment's pins
(profiles/_releases.yml ``stacks``, completed or overridden by ``sglang_server_stack``), the wheels the
wheelhouse must hold, and which of the PyPI sglang wheel's requirements are left out (its CUDA build).
Runs on the controller (through the ``sglang_install_plan`` filter) before anything is copied."""

from __future__ import annotations

import os
import re
from typing import Any, Mapping

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._releases import UNKNOWN, load_release_tables

# Packages of the reference environment that do not belong on a server host.
NOT_ON_SERVERS = ("sglang-router",)


def canonical(name: str) -> str:
    """PEP 503 name (``Torch_NPU`` -> ``torch-npu``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def wheel_of(directory: str, name: str, version: str) -> str | None:
    """The wheel of ``name==version`` in ``directory`` (file names: ``<name>-<version>-<tags>.whl``)."""
    try:
        files = sorted(os.listdir(directory))
    except OSError:
        return None
    for file in files:
        parts = file.split("-")
        if file.endswith(".whl") and len(parts) >= 5 and canonical(parts[0]) == canonical(name) \
                and parts[1].lower() == version.lower():
            return file
    return None


def install_plan(release: str, overrides: Mapping[str, Any] | None = None, wheelhouse: str = "",
                 profiles_dir: str | None = None) -> dict[str, Any]:
    """``{release, cann, pins, requirements, sglang, exclude, wheels, problems}`` for one SGLang release."""
    table = load_release_tables(profiles_dir)["sglang"]
    stack = table.stack(str(release))
    problems: list[str] = []
    if stack is None:
        return {"release": release, "problems": [f"sglang {release} has no reference environment in "
                                                 "profiles/_releases.yml (supported: " + ", ".join(table.stacks) + ")"]}
    pins = {name: version for name, version in stack.packages.items()
            if name not in NOT_ON_SERVERS and name != "sglang"}
    for name, version in (overrides or {}).items():
        if canonical(str(name)) == "sglang":
            problems.append("sglang_server_stack: sglang's release is the plan's (sglang_release), not a stack entry")
            continue
        match = [n for n in pins if canonical(n) == canonical(str(name))]
        pins[match[0] if match else str(name)] = str(version)
    wheels: dict[str, str] = {}
    for name in stack.wheelhouse:
        version = pins.get(name, UNKNOWN)
        if version == UNKNOWN:
            problems.append(f"{name}: no version is documented for sglang {release}; set sglang_server_stack.{name} "
                            "to the build you install (and put its wheel in sglang_wheelhouse)")
        elif not wheelhouse:
            problems.append(f"{name} {version} is on no package index: set sglang_wheelhouse to a directory holding "
                            "its wheel")
        elif not os.path.isdir(wheelhouse):
            problems.append(f"sglang_wheelhouse {wheelhouse} is not a directory on the controller")
            break
        else:
            found = wheel_of(wheelhouse, name, version)
            if found:
                wheels[name] = found
            else:
                problems.append(f"{name} {version}: no {name.replace('-', '_')}-{version}-*.whl in sglang_wheelhouse "
                                f"{wheelhouse}")
    known = {name: version for name, version in pins.items() if version != UNKNOWN}
    return {
        "release": str(release),
        "cann": stack.cann,
        "pins": known,
        "requirements": [f"{name}=={version}" for name, version in known.items()],
        "sglang": f"sglang=={release}",
        # The wheel's requirements not installed from its metadata: its CUDA build, and what the stack pins.
        "exclude": sorted({canonical(n) for n in table.accelerator_requirements} | {canonical(n) for n in known}),
        "wheels": wheels,
        "problems": problems,
    }


def install_plan_for(release: str, settings: Mapping[str, Any], memo: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``install_plan`` of a host's settings (its sglang_server_stack and sglang_wheelhouse, as the role passes them),
    worked out once per stack and wheelhouse of the fleet in ``memo`` (it lists the wheelhouse on the controller)."""
    stack, wheelhouse = dict(settings.get("sglang_server_stack") or {}), str(settings.get("sglang_wheelhouse") or "")
    key = repr((sorted((str(k), str(v)) for k, v in stack.items()), wheelhouse))
    if key not in memo:
        memo[key] = install_plan(str(release), stack, wheelhouse)
    return memo[key]
