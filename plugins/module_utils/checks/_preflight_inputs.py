# Copyright: ascend.sglang contributors
# Apache License 2.0
"""What the host checks read: the host plan's services as the checks need them (devices, model paths, peers,
NICs, the container, each interpreter's runtime), and the two readings of the observations several check
families share (a unit's state, whether a process belongs to the deployment).

Private to the collection; pure, no Ansible import. Runs on the managed host (module sglang_preflight); the
controller's cross-host checks (plugins/plugin_utils/rollout/_fleet_checks.py) read the same plan the same way.
The planned services' fields (plugins/plugin_utils/plan/_records.py Service) are read as planned: no flag is looked
up in an argv.
"""

from __future__ import annotations

from typing import Any, Mapping

from ansible_collections.ascend.sglang.plugins.module_utils.checks import _server_stack
from ansible_collections.ascend.sglang.plugins.module_utils.checks._fabric_checks import span
from ansible_collections.ascend.sglang.plugins.module_utils.checks._findings import Context

SERVER_ROLES = ("prefill", "decode", "mixed")
RUNTIME_PACKAGES = {"router": ("sglang-router", "sglang_router")}
DEFAULT_PACKAGE = ("sglang", "sglang")


# --------------------------------------------------------------------------- the host plan

def services(host_plan: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(host_plan.get("services") or [])


def devices(svc: Mapping[str, Any]) -> list[int]:
    """Devices (npu-smi order) a server service uses on its node (the plan's ``devices``); routers use none."""
    return [int(d) for d in svc.get("devices") or []] if svc.get("role") in SERVER_ROLES else []


def model_paths(svc: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(path, kind, why) the service reads from disk (the plan's ``model_paths``): kind 'dir' or 'file'."""
    return [(str(m["path"]), str(m["kind"]), str(m["what"])) for m in svc.get("model_paths") or []]


def peer_targets(svc: Mapping[str, Any]) -> list[tuple[str, int, str]]:
    """(address, port, what) of the endpoints of other hosts this service dials at start (the plan's ``peers``)."""
    return [(str(p["address"]), int(p["port"]), str(p["purpose"])) for p in svc.get("peers") or []]


def server_devices(host_plan: Mapping[str, Any]) -> dict[int, list[str]]:
    """Device -> the server services of the host that use it."""
    out: dict[int, list[str]] = {}
    for svc in services(host_plan):
        for device in devices(svc):
            out.setdefault(device, []).append(str(svc.get("name")))
    return out


def talks_to_other_hosts(svc: Mapping[str, Any]) -> bool:
    """A rank of a multi-node instance (HCCL between nodes) or a PD server (KV transfer between the roles)."""
    return int(svc.get("nnodes") or 1) > 1 or svc.get("role") in ("prefill", "decode")


def fabric_devices(host_plan: Mapping[str, Any]) -> dict[int, list[str]]:
    """Device -> the services of the host that send traffic over its NIC to other hosts."""
    out: dict[int, list[str]] = {}
    for svc in services(host_plan):
        if talks_to_other_hosts(svc):
            for device in devices(svc):
                out.setdefault(device, []).append(str(svc.get("name")))
    return out


def weight_dirs(host_plan: Mapping[str, Any]) -> dict[str, list[str]]:
    """Model directory (the model, the draft model) -> the services of the host that load it."""
    out: dict[str, list[str]] = {}
    for svc in services(host_plan):
        for path, kind, _unused in model_paths(svc):
            if kind == "dir":
                out.setdefault(path, []).append(str(svc.get("name")))
    return out


def devices_needed(host_plan: Mapping[str, Any]) -> tuple[int, str] | None:
    """NPUs the host's server services need visible (highest device index + 1, --base-gpu-id counted)."""
    best: tuple[int, str] | None = None
    for svc in services(host_plan):
        used = devices(svc)
        if used and (best is None or used[-1] + 1 > best[0]):
            best = (used[-1] + 1, f"{svc.get('name')} uses {span(used)} (--base-gpu-id {used[0]})")
    return best


def container(host_plan: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """sglang_runtime container: the engine and image of the host's services (one per deployment)."""
    for svc in services(host_plan):
        if svc.get("container"):
            return svc["container"]
    return None


def container_requirements(host_plan: Mapping[str, Any]) -> dict[str, Any] | None:
    """What the host must offer its containers: the engine, the image, the device nodes and the host files
    mounted into them (the model paths are checked as on the host runtime)."""
    first = container(host_plan)
    if first is None:
        return None
    nodes: dict[str, None] = {}
    mounts: dict[str, None] = {}
    for svc in services(host_plan):
        spec = svc.get("container") or {}
        nodes.update(dict.fromkeys(str(d) for d in spec.get("devices") or []))
        mounts.update(dict.fromkeys(str(m).split(":", 1)[0] for m in spec.get("mounts") or []))
    # The engine the launchers run: its absolute path (sglang_container_engine_path), never a PATH lookup.
    return {"engine": str(first.get("engine_path") or first.get("engine")), "image": str(first.get("image")),
            "from_archive": bool(first.get("from_archive")), "devices": list(nodes), "mounts": list(mounts)}


def is_server_host(host_plan: Mapping[str, Any]) -> bool:
    return any(s.get("role") in SERVER_ROLES for s in services(host_plan))


def socket_nics(svc: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(variable, NIC) of a service's HCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME: the host's sglang_nic, on a multi-node
    rank and on a single-node one that was given one; a single-node rank's lo (no sglang_nic) carries no address of
    the host and is not checked."""
    multi_node = int(svc.get("nnodes") or 1) > 1
    env = svc.get("env") or {}
    out = []
    for var in ("HCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME"):
        if env.get(var) and (multi_node or str(env[var]) != "lo"):
            out.append((var, str(env[var])))
    return out


def runtime(svc: Mapping[str, Any], host_plan: Mapping[str, Any], ctx: Context) -> dict[str, Any] | None:
    """The interpreter a host-runtime service runs (the plan's ``python``) and the package it must import (None in a
    container)."""
    python = svc.get("python")
    if not python or svc.get("container"):
        return None  # in a container the interpreter is the image's: nothing to look at on the host
    python = str(python)
    package, release_key = RUNTIME_PACKAGES.get(str(svc.get("role")), DEFAULT_PACKAGE)
    server = svc.get("role") in SERVER_ROLES
    cann = host_plan.get("cann") or {} if server else {}
    return {
        "key": f"{python}|{package}",
        # A server interpreter reports its whole stack in the same run (_server_stack.PROBE_SCRIPT).
        "stack": server,
        "modules": list(_server_stack.MODULES) if server else [],
        "python": python,
        "package": package,
        "release_key": release_key,
        "expected": ctx.releases.get(release_key),
        "unset": list(cann.get("unset") or []),
        "sources": list(cann.get("sources") or []),
        "path_prepend": list(cann.get("path_prepend") or []),
        "ld_library_path_prepend": list(cann.get("ld_library_path_prepend") or []),
    }


def sysctl_look(host_plan: Mapping[str, Any]) -> dict[str, Any] | None:
    """The host's kernel settings as host tuning applies them (its settings: where they are read, where they are
    persisted): read by preflight's call, so that deploy.yml's tuning play leaves out a host where every live value
    and the persisted file are the plan's (plugins/plugin_utils/rollout/_schedules.py tuning_needed). None where
    the host tuning has no kernel settings to apply."""
    settings = host_plan.get("settings") or {}
    values = (host_plan.get("host_tuning") or {}).get("sysctl") or {}
    if not values or not settings.get("sglang_host_tuning_sysctl"):
        return None
    if not settings.get("sglang_proc_sys_dir") or not settings.get("sglang_sysctl_dir"):
        return None  # a plan without the host's settings: the tuning play looks for itself
    return {"dir": str(settings["sglang_proc_sys_dir"]), "names": [str(name) for name in values],
            "conf": f"{settings['sglang_sysctl_dir']}/90-sglang.conf"}


def stack_look(host_plan: Mapping[str, Any], ctx: Context) -> list[dict[str, Any]]:
    """Preflight, on a host whose server stack the roles install (sglang_server_install): the server interpreter's
    stack looked at as it is now, with every installed distribution (``_server_stack.PROBE_SCRIPT --distributions``).
    The controller decides from it whether the install has anything to do (plugins/plugin_utils/rollout/_stack.py:
    only where the interpreter's prefix is the virtualenv the roles install into); where it has not, this look's
    stack checks are the stack play's, which the host then leaves."""
    if ctx.mode != "preflight":
        return []
    look: dict[str, dict[str, Any]] = {}
    for svc in services(host_plan):
        wanted = runtime(svc, host_plan, ctx)
        if wanted and wanted["stack"] and installed_later(wanted, ctx):
            look[wanted["key"]] = dict(wanted, distributions=True)
    return list(look.values())


def installed_later(runtime_: Mapping[str, Any], ctx: Context) -> bool:
    """Before start, a package the roles are about to install cannot be checked yet."""
    return ctx.mode == "preflight" and runtime_["package"] in ctx.installed_by_roles


def in_scope(runtime_: Mapping[str, Any], ctx: Context) -> bool:
    """Whether this mode checks the runtime: every one but those installed later; the server's alone in stack mode."""
    if ctx.mode == "stack":
        return bool(runtime_["stack"])
    return not installed_later(runtime_, ctx)


# --------------------------------------------------------------------------- the observations

def unit_state(observed: Mapping[str, Any], name: str) -> str:
    """running / stopped / absent / unknown for a planned service's systemd unit."""
    unit = (observed.get("units") or {}).get(name)
    if not unit:
        return "unknown"
    if unit.get("active") in ("active", "reloading", "activating"):
        return "running"
    if unit.get("load") in ("not-found", None, ""):
        return "absent"
    return "stopped"


def owner_is_ours(pid: int | None, observed: Mapping[str, Any], names: set[str]) -> bool:
    """Whether the process runs under one of the host's planned units."""
    if pid is None:
        return False
    owner = (observed.get("owners") or {}).get(str(pid))
    return bool(owner) and owner.replace(".service", "") in names
