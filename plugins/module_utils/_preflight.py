# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Preflight / doctor checks: (host plan, observed host facts) -> findings.  Pure, no I/O.

The host side (``_host_probe.observe``) only looks; everything that decides what is wrong,
what was expected and how to fix it is here, so that every failure case is unit-tested
without a host.  Three steps:

1. ``requirements(host_plan, ctx)``: what must be looked at on the host (paths, NICs, ports,
   peers, runtimes, units), derived from the host's planned services.
2. ``_host_probe.observe(requirements, ...)`` on the host (in the module).
3. ``check_host(host, host_plan, observed, ctx)``: the findings, one per check and subject.

``aggregate`` / ``render_table`` / ``report`` turn every host's findings into one table and a
JSON document with a status an automation can use (0 ok, 1 warnings, 2 failures).

Modes: ``preflight`` (before start), ``doctor`` (a running cluster) and ``stack``: only the server
interpreter's stack (its runtime and stack checks), run by deploy.yml right after the roles installed it
(``sglang_server_install``), when preflight could not check it yet.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable, Mapping

from ansible_collections.ascend.sglang.plugins.module_utils import _checks, _fabric_checks, _server_stack
from ansible_collections.ascend.sglang.plugins.module_utils._ops import pending_text
from ansible_collections.ascend.sglang.plugins.module_utils._started import pending_rows
from ansible_collections.ascend.sglang.plugins.module_utils._units import service_units
from ansible_collections.ascend.sglang.plugins.module_utils._npu_smi import (
    HEALTH_OK, HEALTH_WARNING, compare_versions, normalize_release,
)

OK, WARN, FAIL = "ok", "warn", "fail"
SEVERITY_ORDER = {OK: 0, WARN: 1, FAIL: 2}
EXIT_CODES = {OK: 0, WARN: 1, FAIL: 2}
STATUS_WORDS = {OK: "ok", WARN: "warnings", FAIL: "failures"}
# Devices one node offers (the planner's NODE_DEVICES; repeated so this module stays standalone).
NODE_DEVICES = {"A3": 16, "A2": 8}
MODES = ("preflight", "doctor", "stack")
DEFAULT_HBM_FREE_RATIO = 0.8
SERVER_ROLES = ("prefill", "decode", "mixed")
RUNTIME_PACKAGES = {"router": ("sglang-router", "sglang_router")}
DEFAULT_PACKAGE = ("sglang", "sglang")


@dataclasses.dataclass(frozen=True)
class Finding:
    host: str
    check: str
    severity: str
    found: str
    expected: str
    fix: str
    service: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class Context:
    """What the checks compare against, besides the host plan."""

    mode: str = "preflight"
    hardware: str | None = None          # the profile's hardware (A2 / A3): the plan's ``hardware``
    releases: Mapping[str, str] = dataclasses.field(default_factory=dict)
    min_driver_version: str | None = None
    min_cann_version: str | None = None
    min_hbm_free_ratio: float | None = None  # None: the service's --mem-fraction-static, else 0.8
    profile: str | None = None
    # Packages the roles install before start (sglang_server_install / sglang_router_install).
    installed_by_roles: frozenset[str] = frozenset()
    # The planned release's reference environment (the plan's ``reference_stack``) and how a difference counts.
    stack_reference: Mapping[str, Any] | None = None
    stack_policy: str = "warn"
    # The plan's preflight settings (module_utils/_checks.py): each check's level, the weights mode.
    preflight: Mapping[str, Any] = dataclasses.field(default_factory=_checks.settings)

    def level(self, check: str) -> str:
        return _checks.level(self.preflight, check)


# --------------------------------------------------------------------------- plan helpers
# The planned services' fields (plugins/plugin_utils/_planner.py Service): no flag is looked up in an argv.

def _devices(svc: Mapping[str, Any]) -> list[int]:
    """Devices (npu-smi order) a server service uses on its node (the plan's ``devices``); routers use none."""
    return [int(d) for d in svc.get("devices") or []] if svc.get("role") in SERVER_ROLES else []


def _model_paths(svc: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(path, kind, why) the service reads from disk (the plan's ``model_paths``): kind 'dir' or 'file'."""
    return [(str(m["path"]), str(m["kind"]), str(m["what"])) for m in svc.get("model_paths") or []]


def _peer_targets(svc: Mapping[str, Any]) -> list[tuple[str, int, str]]:
    """(address, port, what) of the endpoints of other hosts this service dials at start (the plan's ``peers``)."""
    return [(str(p["address"]), int(p["port"]), str(p["purpose"])) for p in svc.get("peers") or []]


def _services(host_plan: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(host_plan.get("services") or [])


# hccn_tool query of each fabric check (the TLS switch is compared across hosts on the controller).
FABRIC_QUERIES = (("link", "npu_link"), ("net_health", "npu_net_health"), ("ip", "npu_ip"), ("tls", "npu_tls"))


def server_devices(host_plan: Mapping[str, Any]) -> dict[int, list[str]]:
    """Device -> the server services of the host that use it."""
    out: dict[int, list[str]] = {}
    for svc in _services(host_plan):
        for device in _devices(svc):
            out.setdefault(device, []).append(str(svc.get("name")))
    return out


def talks_to_other_hosts(svc: Mapping[str, Any]) -> bool:
    """A rank of a multi-node instance (HCCL between nodes) or a PD server (KV transfer between the roles)."""
    return int(svc.get("nnodes") or 1) > 1 or svc.get("role") in ("prefill", "decode")


def fabric_devices(host_plan: Mapping[str, Any]) -> dict[int, list[str]]:
    """Device -> the services of the host that send traffic over its NIC to other hosts."""
    out: dict[int, list[str]] = {}
    for svc in _services(host_plan):
        if talks_to_other_hosts(svc):
            for device in _devices(svc):
                out.setdefault(device, []).append(str(svc.get("name")))
    return out


def weight_dirs(host_plan: Mapping[str, Any]) -> dict[str, list[str]]:
    """Model directory (the model, the draft model) -> the services of the host that load it."""
    out: dict[str, list[str]] = {}
    for svc in _services(host_plan):
        for path, kind, _unused in _model_paths(svc):
            if kind == "dir":
                out.setdefault(path, []).append(str(svc.get("name")))
    return out


def _container(host_plan: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """sglang_runtime container: the engine and image of the host's services (one per deployment)."""
    for svc in _services(host_plan):
        if svc.get("container"):
            return svc["container"]
    return None


def _container_requirements(host_plan: Mapping[str, Any]) -> dict[str, Any] | None:
    """What the host must offer its containers: the engine, the image, the device nodes and the host files
    mounted into them (the model paths are checked as on the host runtime)."""
    first = _container(host_plan)
    if first is None:
        return None
    devices: dict[str, None] = {}
    mounts: dict[str, None] = {}
    for svc in _services(host_plan):
        spec = svc.get("container") or {}
        devices.update(dict.fromkeys(str(d) for d in spec.get("devices") or []))
        mounts.update(dict.fromkeys(str(m).split(":", 1)[0] for m in spec.get("mounts") or []))
    # The engine the launchers run: its absolute path (sglang_container_engine_path), never a PATH lookup.
    return {"engine": str(first.get("engine_path") or first.get("engine")), "image": str(first.get("image")),
            "from_archive": bool(first.get("from_archive")), "devices": list(devices), "mounts": list(mounts)}


def _is_server_host(host_plan: Mapping[str, Any]) -> bool:
    return any(s.get("role") in SERVER_ROLES for s in _services(host_plan))


def _multi_node_nics(svc: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(variable, NIC) of a multi-node service: HCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME."""
    if int(svc.get("nnodes") or 1) <= 1:
        return []
    env = svc.get("env") or {}
    out = []
    for var in ("HCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME"):
        if env.get(var):
            out.append((var, str(env[var])))
    return out


def _runtime(svc: Mapping[str, Any], host_plan: Mapping[str, Any], ctx: Context) -> dict[str, Any] | None:
    argv = [str(a) for a in svc.get("argv") or []]
    if not argv or svc.get("container"):
        return None  # in a container the interpreter is the image's: nothing to look at on the host
    package, release_key = RUNTIME_PACKAGES.get(str(svc.get("role")), DEFAULT_PACKAGE)
    server = svc.get("role") in SERVER_ROLES
    cann = host_plan.get("cann") or {} if server else {}
    return {
        "key": f"{argv[0]}|{package}",
        # A server interpreter reports its whole stack in the same run (_server_stack.PROBE_SCRIPT).
        "stack": server,
        "modules": list(_server_stack.MODULES) if server else [],
        "python": argv[0],
        "package": package,
        "release_key": release_key,
        "expected": ctx.releases.get(release_key),
        "unset": list(cann.get("unset") or []),
        "sources": list(cann.get("sources") or []),
        "path_prepend": list(cann.get("path_prepend") or []),
        "ld_library_path_prepend": list(cann.get("ld_library_path_prepend") or []),
    }


def _installed_later(runtime: Mapping[str, Any], ctx: Context) -> bool:
    """Before start, a package the roles are about to install cannot be checked yet."""
    return ctx.mode == "preflight" and runtime["package"] in ctx.installed_by_roles


def _in_scope(runtime: Mapping[str, Any], ctx: Context) -> bool:
    """Whether this mode checks the runtime: every one but those installed later; the server's alone in stack mode."""
    if ctx.mode == "stack":
        return bool(runtime["stack"])
    return not _installed_later(runtime, ctx)


def requirements(host_plan: Mapping[str, Any], ctx: Context) -> dict[str, Any]:
    """What the host probe must look at for this host plan (all lists, JSON-able)."""
    if ctx.mode == "stack":
        # The server interpreter's report, and the host's CANN toolkit it is compared with; nothing else.
        runtimes: dict[str, dict[str, Any]] = {}
        for svc in _services(host_plan):
            runtime = _runtime(svc, host_plan, ctx)
            if runtime and runtime["key"] not in runtimes and _in_scope(runtime, ctx):
                runtimes[runtime["key"]] = runtime
        return {"npu": False, "toolkit": bool(runtimes), "paths": {}, "names": [], "nics": [], "ports": [],
                "probes": [], "runtimes": list(runtimes.values()), "units": [], "health": []}
    paths: dict[str, str] = {}
    container = _container_requirements(host_plan)
    # In the container runtime the image brings CANN: the host's scripts are not sourced.
    for script in [] if container else (host_plan.get("cann") or {}).get("sources") or []:
        paths[str(script)] = "file"
    nics: set[str] = set()
    ports: list[int] = []
    probes: dict[str, dict[str, Any]] = {}
    runtimes: dict[str, dict[str, Any]] = {}
    units: list[str] = []
    health: list[dict[str, str]] = []
    for svc in _services(host_plan):
        units.append(str(svc.get("name")))
        for path, kind, _unused in _model_paths(svc):
            paths[path] = kind
        for _unused, nic in _multi_node_nics(svc):
            nics.add(nic)
        ports.extend(int(p) for p in (svc.get("listens") or {}).values())
        for address, port, _unused in _peer_targets(svc):
            probes[f"{address}:{port}"] = {"address": address, "port": port}
        runtime = _runtime(svc, host_plan, ctx)
        if runtime and runtime["key"] not in runtimes and _in_scope(runtime, ctx):
            runtimes[runtime["key"]] = runtime
        if ctx.mode == "doctor" and svc.get("health_url"):
            health.append({"service": str(svc.get("name")), "url": str(svc["health_url"])})
    fabric = fabric_devices(host_plan)
    queries = [query for query, check in FABRIC_QUERIES if ctx.level(check) != "off"]
    return {
        "npu": _is_server_host(host_plan),
        "toolkit": _is_server_host(host_plan) and container is None,
        # The NPU NICs of the devices whose services talk to other hosts (module_utils/_fabric.py).
        "fabric": {"devices": sorted(fabric), "queries": queries} if fabric and queries else None,
        "npu_health": sorted(server_devices(host_plan)) if ctx.level("npu_health") != "off" else [],
        "hardware": ctx.hardware,
        "weights": ({"paths": sorted(weight_dirs(host_plan)), "full": ctx.preflight.get("weights") == "full"}
                    if ctx.level("weights") != "off" and weight_dirs(host_plan) else None),
        # doctor: whether each service and its watchdog run the files they have now (module_utils/_started.py).
        "started": [unit for name in units for unit in service_units(name)] if ctx.mode == "doctor" else [],
        "container": container,
        "paths": paths,
        # Bind addresses may be host names (sglang_host_ip: node1): the host resolves them itself.
        "names": sorted({str(svc.get("host")) for svc in _services(host_plan) if svc.get("host")}),
        "nics": sorted(nics),
        "ports": sorted(set(ports)),
        "probes": list(probes.values()),
        "runtimes": list(runtimes.values()),
        "units": units,
        "health": health,
    }


# --------------------------------------------------------------------------- checks

class _Out:
    def __init__(self, host: str) -> None:
        self.host = host
        self.items: list[Finding] = []

    def add(self, check: str, severity: str, found: str, expected: str, fix: str = "",
            service: str | None = None) -> None:
        self.items.append(Finding(self.host, check, severity, found, expected, fix if severity != OK else "", service))


def _unit_state(observed: Mapping[str, Any], name: str) -> str:
    """running / stopped / absent / unknown for a planned service's systemd unit."""
    unit = (observed.get("units") or {}).get(name)
    if not unit:
        return "unknown"
    if unit.get("active") in ("active", "reloading", "activating"):
        return "running"
    if unit.get("load") in ("not-found", None, ""):
        return "absent"
    return "stopped"


def _owner_is_ours(pid: int | None, observed: Mapping[str, Any], names: set[str]) -> bool:
    if pid is None:
        return False
    owner = (observed.get("owners") or {}).get(str(pid))
    return bool(owner) and owner.replace(".service", "") in names


def _check_npu(out: _Out, host_plan: Mapping[str, Any], observed: Mapping[str, Any], ctx: Context) -> None:
    npu = observed.get("npu") or {}
    services = [s for s in _services(host_plan) if s.get("role") in SERVER_ROLES]
    names = {str(s.get("name")) for s in _services(host_plan)}
    info = npu.get("info") or {}
    chips = info.get("chips") or []
    if not npu.get("available") or not chips:
        out.add("npu_smi", FAIL, npu.get("error") or "npu-smi info listed no device",
                "npu-smi info lists the node's NPUs",
                "install the Ascend driver (npu-smi in PATH, e.g. /usr/local/sbin) and check `npu-smi info` "
                "as the deployment user; a dcmi error means the driver/firmware is not loaded")
        return
    generation = info.get("generation")
    if ctx.hardware:
        if generation is None:
            out.add("hardware", WARN, f"chip '{info.get('chip_name')}', generation unknown", f"Atlas 800I {ctx.hardware}",
                    "check `npu-smi info` by hand; the profile assumes " + ctx.hardware)
        elif generation != ctx.hardware:
            out.add("hardware", FAIL, f"Atlas 800I {generation} ({info.get('chip_name')}, {len(chips)} devices)",
                    f"Atlas 800I {ctx.hardware} (profile {ctx.profile})",
                    f"move this host out of the deployment or pick a profile for {generation} hardware")
        else:
            out.add("hardware", OK, f"{generation} ({info.get('chip_name')})", ctx.hardware)
    by_index = {int(c["index"]): c for c in chips}
    node = NODE_DEVICES.get(ctx.hardware or generation or "", 0)
    for svc in services:
        wanted = _devices(svc)
        name = str(svc.get("name"))
        if not wanted:
            continue
        missing = [d for d in wanted if d not in by_index]
        span = f"devices {wanted[0]}-{wanted[-1]}" if len(wanted) > 1 else f"device {wanted[0]}"
        if missing:
            out.add("devices", FAIL, f"{len(chips)} devices listed by npu-smi" + (f" (a node has {node})" if node else ""),
                    f"{span} for --tp-size/--nnodes from --base-gpu-id {wanted[0]}",
                    "check for devices missing from `npu-smi info` (driver, hot-reset) or lower --tp-size / "
                    "--base-gpu-id through sglang_overrides", service=name)
        else:
            out.add("devices", OK, f"{len(chips)} devices", span, service=name)
        for index in wanted:
            chip = by_index.get(index)
            if chip is None:
                continue
            where = f"device {index} (NPU {chip['npu']} chip {chip['chip']})"
            health = str(chip.get("health") or "")
            # npu-smi info -t health per chip (npu_health, module_utils/_fabric_checks.py) says more than the
            # table's Health column when it was asked; an off check reports neither.
            if "npu_health" in observed or ctx.level("npu_health") == "off":
                pass
            elif health == HEALTH_OK:
                out.add("device_health", OK, f"{where}: OK", "OK", service=name)
            elif health == HEALTH_WARNING:
                out.add("device_health", WARN, f"{where}: {health}", "OK",
                        f"`npu-smi info -t health -i {chip['npu']} -c {chip['chip']}` shows the alarm code; clear it "
                        "or replace the device before load", service=name)
            else:
                out.add("device_health", FAIL, f"{where}: {health or 'unknown'}", "OK",
                        f"`npu-smi info -t health -i {chip['npu']} -c {chip['chip']}` shows the alarm code; reset or "
                        "replace the NPU, or move the service off it (--base-gpu-id)", service=name)
            procs = chip.get("processes") or []
            foreign = [p for p in procs if not _owner_is_ours(p.get("pid"), observed, names)]
            if foreign:
                listed = ", ".join(
                    f"pid {p['pid']} {p['name']}" + (f" ({p['memory_mb']} MB)" if p.get("memory_mb") is not None else "")
                    for p in foreign)
                owner = (observed.get("owners") or {}).get(str(foreign[0].get("pid"))) or ""
                fix = (f"a unit of an earlier deployment still runs on it: `systemctl disable --now {owner}`"
                       if owner.startswith("sglang-") else
                       f"stop it (e.g. `kill {foreign[0]['pid']}`) or move the service to free devices (--base-gpu-id)")
                out.add("device_idle", FAIL, f"{where} held by {listed}" + (f" ({owner})" if owner else ""),
                        "no process on the device", fix, service=name)
            elif procs:
                out.add("device_idle", OK, f"{where} held by this deployment's {name}", "idle or ours", service=name)
            else:
                out.add("device_idle", OK, f"{where} idle", "no process on the device", service=name)
            used, total = chip.get("hbm_used_mb"), chip.get("hbm_total_mb")
            if procs and not foreign:
                continue  # HBM is used by this deployment's own running service
            if used is None or not total:
                out.add("hbm_free", WARN, f"{where}: HBM usage not reported", "HBM usage readable",
                        "check `npu-smi info -t usages -i <npu>` by hand", service=name)
                continue
            ratio = ctx.min_hbm_free_ratio
            source = "sglang_preflight_min_hbm_free_ratio"
            if ratio is None:
                mem = svc.get("mem_fraction_static")
                ratio, source = ((float(mem), "--mem-fraction-static") if mem is not None
                                 else (DEFAULT_HBM_FREE_RATIO, "default"))
            free = total - used
            found = f"{where}: {free} of {total} MB free ({free / total:.0%})"
            if free < ratio * total:
                out.add("hbm_free", FAIL, found, f">= {ratio:.0%} free ({source})",
                        "free the device memory (a process outside npu-smi's table, a leaked context: "
                        "`npu-smi info -t proc-mem -i <npu>`), or lower --mem-fraction-static", service=name)
            else:
                out.add("hbm_free", OK, found, f">= {ratio:.0%} free ({source})", service=name)


def _check_versions(out: _Out, observed: Mapping[str, Any], ctx: Context, toolkit_on_host: bool = True) -> None:
    driver = observed.get("driver") or {}
    _check_version(
        out, "driver", driver, ctx.min_driver_version, "sglang_min_driver_version", "driver",
        missing=f"no driver version ({driver.get('path')}: {driver.get('error') or 'missing'})",
        what="Ascend driver installed",
        install="install the Ascend NPU driver (Ascend-hdk-*-npu-driver) or point sglang_npu_driver_info at its "
                "version.info",
        upgrade=f"upgrade the NPU driver and firmware to {ctx.min_driver_version} or later")
    if not toolkit_on_host:
        return  # the container image brings the CANN toolkit
    toolkit = observed.get("toolkit") or {}
    patterns = list(toolkit.get("searched") or [])
    searched = (patterns[0] + (f" and {len(patterns) - 1} more" if len(patterns) > 1 else "")) if patterns \
        else "the default paths"
    _check_version(
        out, "cann", toolkit, ctx.min_cann_version, "sglang_min_cann_version", "CANN",
        missing=f"no CANN toolkit install info (searched {searched})",
        what="CANN toolkit installed",
        install="install the CANN toolkit (Ascend-cann-toolkit_*.run --install) or point sglang_npu_toolkit_info "
                "at its ascend_toolkit_install.info",
        upgrade=f"install CANN toolkit {ctx.min_cann_version} or later (and the matching NNAL/ATB, kernels)")


def _check_version(out: _Out, check: str, info: Mapping[str, Any], minimum: str | None, variable: str,
                   label: str, missing: str, what: str, install: str, upgrade: str) -> None:
    """Present, and at least ``minimum`` when one is set (driver and CANN toolkit alike)."""
    version = info.get("version")
    if not version:
        out.add(check, FAIL, missing, what + (f", >= {minimum}" if minimum else ""), install)
    elif minimum and compare_versions(version, minimum) < 0:
        where = f" ({info.get('path')})" if check == "cann" else ""
        out.add(check, FAIL, f"{label} {version}{where}", f">= {minimum} ({variable})", upgrade)
    else:
        out.add(check, OK, f"{label} {version}", f">= {minimum}" if minimum else "present")


def _path_kind(observed: Mapping[str, Any], path: str) -> str:
    return str((observed.get("paths") or {}).get(path) or "unknown")


def _check_files(out: _Out, host_plan: Mapping[str, Any], observed: Mapping[str, Any]) -> None:
    for script in [] if _container(host_plan) else (host_plan.get("cann") or {}).get("sources") or []:
        kind = _path_kind(observed, str(script))
        if kind == "file":
            out.add("cann_scripts", OK, f"{script} present", "present")
        else:
            out.add("cann_scripts", FAIL, f"{script} {kind}", "readable file (sourced by cann_env.sh)",
                    "install the package that provides it (CANN toolkit, NNAL/ATB) or correct the profile's "
                    "cann.sources; the launcher stops on a missing script")
    seen: set[str] = set()
    for svc in _services(host_plan):
        for path, kind, why in _model_paths(svc):
            if path in seen:
                continue
            seen.add(path)
            found = _path_kind(observed, path)
            if found == kind:
                out.add("model", OK, f"{path} present", why, service=str(svc.get("name")))
                continue
            parent = path.rsplit("/", 1)[0]
            if kind == "file" and parent in seen and _path_kind(observed, parent) != "dir":
                continue  # the missing directory is already reported
            fix = {
                "dir": "copy the model to this path on every server host or set sglang_model_path / "
                       "sglang_draft_model_path to where it is",
                "file": "the directory is not a complete model: copy the whole model (config.json, and for "
                        "modelslim weights quant_model_description.json) or fix the path",
            }[kind]
            if "--init-expert-location" in why:
                fix = "copy the recorded expert distribution there or fix sglang_init_expert_location"
            out.add("model", FAIL, f"{path} {found}", f"{'directory' if kind == 'dir' else 'file'}: {why}", fix,
                    service=str(svc.get("name")))


def _check_nics(out: _Out, host_plan: Mapping[str, Any], observed: Mapping[str, Any]) -> None:
    nics = observed.get("nics")
    for svc in _services(host_plan):
        pairs = _multi_node_nics(svc)
        if not pairs:
            continue
        name = str(svc.get("name"))
        address = str(svc.get("host") or "")
        # A name counts as carried when one of the addresses it resolves to on this host is.
        candidates = [address] + list((observed.get("resolved") or {}).get(address) or [])
        for nic in sorted({n for _unused, n in pairs}):
            variables = "/".join(v for v, n in pairs if n == nic)
            if nics is None:
                out.add("nic", WARN, "interfaces not readable", f"{nic} carrying {address}",
                        "check `ip -br addr` by hand", service=name)
            elif nic not in nics:
                out.add("nic", FAIL, f"no interface {nic} (have {', '.join(sorted(nics)) or 'none'})",
                        f"{nic} ({variables}) carrying {address}",
                        f"set sglang_nic of this host to the NIC that carries {address} (`ip -br addr`)", service=name)
            elif not set(candidates) & set(nics.get(nic) or []):
                carried = ", ".join(nics.get(nic) or []) or "no address"
                owner = [n for n, addrs in nics.items() if address in (addrs or [])]
                hint = f" ({address} is on {owner[0]})" if owner else f" ({address} is on no interface of this host)"
                out.add("nic", FAIL, f"{nic} has {carried}{hint}", f"{nic} ({variables}) carrying {address}",
                        "set sglang_nic to the NIC carrying sglang_host_ip, or sglang_host_ip to the address of "
                        f"{nic}", service=name)
            else:
                carried = sorted(set(candidates) & set(nics.get(nic) or []))
                out.add("nic", OK, f"{nic} has {', '.join(carried)}", f"{nic} carrying {address}", service=name)


def _conflicts(bind: str, listen_addr: str) -> bool:
    wildcard = ("0.0.0.0", "::", "*", "")
    return bind in wildcard or listen_addr in wildcard or listen_addr == bind or \
        (listen_addr.startswith("::ffff:") and listen_addr[7:] == bind)


def _check_ports(out: _Out, host_plan: Mapping[str, Any], observed: Mapping[str, Any], ctx: Context) -> None:
    listeners = observed.get("listeners")
    names = {str(s.get("name")) for s in _services(host_plan)}
    for svc in _services(host_plan):
        name = str(svc.get("name"))
        state = _unit_state(observed, name)
        bind = str(svc.get("host") or "")
        for what, port in (svc.get("listens") or {}).items():
            expected = f"TCP {port} free for {what} on {bind or '*'}"
            if listeners is None:
                out.add("port", WARN, "listening sockets not readable", expected, "check `ss -ltnp` by hand", service=name)
                continue
            holders = [entry for entry in listeners if int(entry.get("port", -1)) == int(port)
                       and _conflicts(bind, str(entry.get("address") or ""))]
            if not holders:
                if ctx.mode == "doctor" and state == "running" and what == "http":
                    out.add("port", WARN, f"nothing listens on {port} yet", f"{name} listening on {port}",
                            f"the service is running but not serving yet (loading?): `journalctl -u {name}`",
                            service=name)
                else:
                    out.add("port", OK, f"{port} free", expected, service=name)
                continue
            pids = sorted({int(p) for entry in holders for p in entry.get("pids") or []})
            ours = [p for p in pids if _owner_is_ours(p, observed, names)]
            if pids and len(ours) == len(pids):
                out.add("port", OK, f"{port} held by this deployment ({name})", expected, service=name)
            elif not pids and state == "running":
                out.add("port", OK, f"{port} in use while {name} runs (holder not visible)", expected, service=name)
            else:
                who = ", ".join(f"pid {p}" + (f" ({(observed.get('owners') or {}).get(str(p))})"
                                              if (observed.get("owners") or {}).get(str(p)) else "") for p in pids)
                addr = ", ".join(sorted({str(e.get("address")) for e in holders}))
                out.add("port", FAIL, f"{port} already in use on {addr}" + (f" by {who}" if who else ""), expected,
                        f"stop what holds it (`ss -ltnp 'sport = :{port}'`) or change the port in the profile / "
                        "sglang_overrides", service=name)


def _check_peers(out: _Out, host_plan: Mapping[str, Any], observed: Mapping[str, Any], ctx: Context) -> None:
    probes = observed.get("probes") or {}
    routes = observed.get("routes") or {}
    for svc in _services(host_plan):
        name = str(svc.get("name"))
        own = str(svc.get("host") or "")
        for address, port, what in _peer_targets(svc):
            key = f"{address}:{port}"
            probe = probes.get(key) or {}
            result = probe.get("result") or "not probed"
            expected = f"{key} reachable ({what})"
            route = routes.get(address) or {}
            if route.get("error"):
                out.add("peer", FAIL, f"no route to {address}: {route['error']}", expected,
                        f"add a route to {address} on the data-plane network, or fix sglang_host_ip of rank 0",
                        service=name)
                continue
            source = route.get("source")
            if source and own and source != own and int(svc.get("nnodes") or 1) > 1:
                out.add("peer_route", WARN, f"traffic to {address} leaves from {source}", f"from {own} (sglang_host_ip)",
                        "the kernel routes rank-0 traffic over another interface than the data-plane address: "
                        "check the routing table / sglang_nic", service=name)
            if result == "open":
                out.add("peer", OK, f"{key} accepts connections", expected, service=name)
            elif result == "refused":
                if ctx.mode == "doctor":
                    out.add("peer", WARN, f"{key} reachable but refuses connections", f"{key} listening ({what})",
                            f"rank 0 is not listening: check its service on {address} (`journalctl -u` there)",
                            service=name)
                else:
                    # Before start nothing listens; a refusal (TCP RST) proves the host answers on that port path.
                    out.add("peer", OK, f"{key} reachable (refused: rank 0 not started yet)", expected, service=name)
            elif result == "timeout":
                out.add("peer", FAIL, f"{key}: no answer within the probe timeout (dropped)", expected,
                        f"open TCP {port} from {own or 'this host'} to {address} in the firewall / security group, "
                        "and check that the address is right", service=name)
            else:
                out.add("peer", FAIL, f"{key}: {result} {probe.get('detail') or ''}".strip(), expected,
                        f"check that {address} is up and routable from this host", service=name)


def _check_runtimes(out: _Out, host_plan: Mapping[str, Any], observed: Mapping[str, Any], ctx: Context) -> None:
    runtimes = observed.get("runtimes") or {}
    seen: set[str] = set()
    for svc in _services(host_plan):
        runtime = _runtime(svc, host_plan, ctx)
        if not runtime or runtime["key"] in seen or (ctx.mode == "stack" and not runtime["stack"]):
            continue
        seen.add(runtime["key"])
        if _installed_later(runtime, ctx):
            out.add("runtime", OK, f"installed by the role before start ({runtime['python']})",
                    f"{runtime['package']} {runtime['expected'] or '(any)'}", service=str(svc.get("name")))
            continue
        got = runtimes.get(runtime["key"]) or {}
        version = got.get("version")
        expected_release = runtime["expected"]
        what = f"{runtime['package']} {expected_release or '(any)'} importable by {runtime['python']}"
        var = "sglang_router_python / sglang_router_release" if runtime["package"] != "sglang" else \
            "sglang_python / sglang_release"
        if not version:
            out.add("runtime", FAIL, f"{runtime['python']}: {got.get('error') or 'not checked'}", what,
                    f"install {runtime['package']}=={expected_release} for that interpreter"
                    + (" (checked with the CANN environment sourced, as the launcher runs it)"
                       if runtime["sources"] else "")
                    + f", or point {var.split(' / ', maxsplit=1)[0]} at the interpreter that has it",
                    service=str(svc.get("name")))
        elif expected_release and normalize_release(version) != normalize_release(expected_release):
            out.add("runtime", FAIL, f"{runtime['package']} {version} ({runtime['python']})", what,
                    f"install {runtime['package']}=={expected_release}, or set {var.split(' / ')[1]} to the "
                    "release you mean to run", service=str(svc.get("name")))
        else:
            out.add("runtime", OK, f"{runtime['package']} {version}", what, service=str(svc.get("name")))


def _devices_needed(host_plan: Mapping[str, Any]) -> tuple[int, str] | None:
    """NPUs the host's server services need visible (highest device index + 1, --base-gpu-id counted)."""
    best: tuple[int, str] | None = None
    for svc in _services(host_plan):
        devices = _devices(svc)
        if devices and (best is None or devices[-1] + 1 > best[0]):
            span = f"devices {devices[0]}-{devices[-1]}" if len(devices) > 1 else f"device {devices[0]}"
            best = (devices[-1] + 1, f"{svc.get('name')} uses {span} (--base-gpu-id {devices[0]})")
    return best


def _check_stack(out: _Out, host_plan: Mapping[str, Any], observed: Mapping[str, Any], ctx: Context) -> None:
    runtimes = observed.get("runtimes") or {}
    toolkit = (observed.get("toolkit") or {}).get("version")
    seen: set[str] = set()
    for svc in _services(host_plan):
        runtime = _runtime(svc, host_plan, ctx)
        if not runtime or not runtime["stack"] or runtime["key"] in seen or not _in_scope(runtime, ctx):
            continue
        seen.add(runtime["key"])
        stack = (runtimes.get(runtime["key"]) or {}).get("stack")
        if not stack:
            continue  # the interpreter did not run: the runtime check reports why
        for check, severity, found, expected, fix in _server_stack.check(
                stack, runtime["python"], _devices_needed(host_plan), toolkit, ctx.stack_reference, ctx.stack_policy):
            out.add(check, severity, found, expected, fix)


def _check_container(out: _Out, host_plan: Mapping[str, Any], observed: Mapping[str, Any]) -> None:
    """sglang_runtime container: the engine runs, the image is here (or can be pulled, or comes from the
    controller's tarball), and every device node and host file the containers get exists."""
    spec = _container_requirements(host_plan)
    if spec is None:
        return
    seen = observed.get("container") or {}
    engine, image = spec["engine"], spec["image"]
    if not seen.get("engine"):
        out.add("container", FAIL, f"{engine} not found", f"{engine} (sglang_container_engine_path)",
                f"install the engine on this host at {engine}, or set sglang_container_engine and "
                "sglang_container_engine_path to the engine it has")
        return
    out.add("container", OK, str(seen.get("version") or engine), f"{engine} (sglang_container_engine_path)")
    if seen.get("image") == "present":
        out.add("image", OK, f"{image} present", "image present or obtainable")
    elif spec["from_archive"]:
        out.add("image", OK, f"{image} absent: deploy loads it from sglang_container_image_archive",
                "image present or obtainable")
    elif seen.get("pullable"):
        out.add("image", OK, f"{image} absent: the registry has it; deploy pulls it before any restart",
                "image present or obtainable")
    else:
        out.add("image", FAIL, f"{image} absent and not pullable ({seen.get('pull_error') or 'no answer'})",
                "image present or obtainable",
                "check the host's registry access and the reference (sglang_container_image), or load the image "
                "from a tarball (sglang_container_image_archive)")
    for device, kind in (seen.get("devices") or {}).items():
        if kind == "char":
            out.add("device", OK, f"{device} present", "character device")
        else:
            out.add("device", FAIL, f"{device} {kind}", "character device (passed to the containers)",
                    "install the Ascend NPU driver (it creates the device nodes) or fix the plan's devices")
    for path, kind in (seen.get("mounts") or {}).items():
        if kind in ("missing", "unreadable"):
            out.add("mount", FAIL, f"{path} {kind}", "host path mounted into the containers",
                    "install the Ascend NPU driver and tools (driver, dcmi, npu-smi, ascend_install.info)")


def _check_doctor(out: _Out, host_plan: Mapping[str, Any], observed: Mapping[str, Any]) -> None:
    health = observed.get("health") or {}
    for svc in _services(host_plan):
        name = str(svc.get("name"))
        state = _unit_state(observed, name)
        unit = (observed.get("units") or {}).get(name) or {}
        if state == "running":
            out.add("service", OK, "active", "active", service=name)
        elif state == "absent":
            out.add("service", WARN, "not deployed (no unit)", "active",
                    "deploy with the profile's playbook (this is a planned, not a running, service)", service=name)
        elif state == "unknown":
            out.add("service", WARN, "state unknown (systemctl unavailable)", "active",
                    f"check `systemctl status {name}` by hand", service=name)
        else:
            out.add("service", FAIL, f"{unit.get('active') or 'inactive'} ({unit.get('sub') or '?'})", "active",
                    f"`journalctl -u {name} -n 200` for the cause, then `systemctl restart {name}`", service=name)
        started = observed.get("started") or {}
        pending = pending_rows([started[unit] for unit in service_units(name) if unit in started])
        if pending:
            out.add("config", WARN, pending_text(pending), "runs the files it has",
                    "run the deployment again (or restart.yml -e sglang_restart_only=pending): it restarts the "
                    "instance; an earlier run was cut short after writing the files, or they were edited by hand",
                    service=name)
        elif state == "running" and f"{name}.service" in started:
            out.add("config", OK, "current", "runs the files it has", service=name)
        url = svc.get("health_url")
        if url and name in health:
            result = health[name] or {}
            if result.get("status") == 200:
                out.add("health", OK, f"{url}: 200", "200", service=name)
            elif state == "running":
                out.add("health", FAIL, f"{url}: {result.get('status') or result.get('error')}", "200",
                        f"the server is up but unhealthy: `journalctl -u {name} -n 200`", service=name)


def check_host(host: str, host_plan: Mapping[str, Any], observed: Mapping[str, Any], ctx: Context) -> list[Finding]:
    """Every finding (ok, warn, fail) for one host of the plan."""
    out = _Out(host)
    if ctx.mode == "stack":
        _check_runtimes(out, host_plan, observed, ctx)
        _check_stack(out, host_plan, observed, ctx)
        return out.items
    if _is_server_host(host_plan):
        _check_npu(out, host_plan, observed, ctx)
        _check_versions(out, observed, ctx, toolkit_on_host=_container(host_plan) is None)
    _check_container(out, host_plan, observed)
    _check_files(out, host_plan, observed)
    _check_nics(out, host_plan, observed)
    _check_ports(out, host_plan, observed, ctx)
    _check_peers(out, host_plan, observed, ctx)
    _check_runtimes(out, host_plan, observed, ctx)
    _check_stack(out, host_plan, observed, ctx)
    levels = {check: ctx.level(check) for check in _checks.CHECKS}
    _fabric_checks.check_nics(out.add, observed.get("fabric"), fabric_devices(host_plan), levels)
    if "npu_health" in observed:
        _fabric_checks.check_health(out.add, observed.get("npu_health"), server_devices(host_plan),
                                    levels["npu_health"])
    _fabric_checks.check_weights(out.add, observed.get("weights"), weight_dirs(host_plan), levels["weights"])
    if ctx.mode == "doctor":
        _check_doctor(out, host_plan, observed)
    return out.items


# --------------------------------------------------------------------------- aggregation

def worst(findings: Iterable[Finding | Mapping[str, Any]]) -> str:
    level = OK
    for f in findings:
        sev = f.severity if isinstance(f, Finding) else str(f.get("severity"))
        if SEVERITY_ORDER.get(sev, 2) > SEVERITY_ORDER[level]:
            level = sev if sev in SEVERITY_ORDER else FAIL
    return level


def finding_from(data: Mapping[str, Any]) -> Finding:
    return Finding(host=str(data.get("host")), check=str(data.get("check")), severity=str(data.get("severity")),
                   found=str(data.get("found", "")), expected=str(data.get("expected", "")),
                   fix=str(data.get("fix", "")), service=data.get("service"))


def host_result_findings(host: str, result: Mapping[str, Any] | None) -> list[Finding]:
    """A registered per-host task result -> findings; an unreachable or failed host is a failure."""
    if not result:
        return [Finding(host, "reachable", FAIL, "no result (host unreachable or skipped)", "host checked",
                        "check SSH access to the host (`ansible -m ansible.builtin.ping`) and rerun")]
    if result.get("unreachable"):
        return [Finding(host, "reachable", FAIL, str(result.get("msg") or "unreachable"), "host reachable over SSH",
                        "check SSH access to the host (`ansible -m ansible.builtin.ping`) and rerun")]
    if result.get("failed") and not result.get("findings"):
        return [Finding(host, "preflight", FAIL, str(result.get("msg") or "the check module failed"), "checks ran",
                        "fix the error shown (python3 on the host, privileges: npu-smi and /proc need root)")]
    if result.get("skipped"):
        return [Finding(host, "preflight", WARN, "checks skipped", "checks ran", "")]
    return [finding_from(f) for f in result.get("findings") or []]


def aggregate(results: Mapping[str, Mapping[str, Any] | None]) -> list[Finding]:
    findings: list[Finding] = []
    for host in results:
        findings.extend(host_result_findings(host, results[host]))
    return findings


# Shown even when ok: the table lists every server host's stack.
ALWAYS_SHOWN = ("stack",)
COLUMNS = (("status", "status"), ("host", "host"), ("check", "check"), ("found", "found"),
           ("expected", "expected"), ("fix", "how to fix"))


def render_table(findings: Iterable[Finding], include_ok: bool = False,
                 widths: tuple[int, ...] = (6, 24, 30, 44, 36, 52)) -> list[str]:
    """Text table: status, host, check [service], found, expected, how to fix.

    Long cells wrap onto continuation lines (nothing is cut off); rows are sorted failures first.
    """
    import textwrap

    rows = []
    ordered = sorted(findings, key=lambda f: (-SEVERITY_ORDER.get(f.severity, 2), f.host, f.check, f.service or ""))
    for f in ordered:
        if f.severity == OK and not include_ok and f.check not in ALWAYS_SHOWN:
            continue
        check = f"{f.check} [{f.service}]" if f.service else f.check
        rows.append([f.severity.upper(), f.host, check, f.found, f.expected, f.fix])
    if not rows:
        return ["(no findings)"]
    header = [title for _unused, title in COLUMNS]
    cols = [min(limit, max(len(header[i]), *(len(r[i]) for r in rows))) for i, limit in enumerate(widths)]
    line = "+-" + "-+-".join("-" * w for w in cols) + "-+"

    def emit(cells: list[str]) -> list[str]:
        wrapped = [textwrap.wrap(c, w, break_long_words=True, break_on_hyphens=False) or [""]
                   for c, w in zip(cells, cols)]
        height = max(len(w) for w in wrapped)
        return ["| " + " | ".join((w[i] if i < len(w) else "").ljust(cols[j]) for j, w in enumerate(wrapped)) + " |"
                for i in range(height)]

    out = [line] + emit(header) + [line]
    for row in rows:
        out += emit(row) + [line]
    return out


def report(results: Mapping[str, Mapping[str, Any] | None], mode: str = "preflight",
           profile: str | None = None, extra: Iterable[Finding] = ()) -> dict[str, Any]:
    """The JSON document: overall status + exit code, per-host status, every finding (``extra``: the controller's
    findings that compare hosts, each filed under its host)."""
    findings = aggregate(results) + list(extra)
    level = worst(findings)
    hosts: dict[str, Any] = {}
    for host in results:
        mine = [f for f in findings if f.host == host]
        result = results[host] or {}
        hosts[host] = {"status": STATUS_WORDS[worst(mine)], "findings": [f.as_dict() for f in mine],
                       "observed": result.get("observed")}
    counts = {sev: sum(1 for f in findings if f.severity == sev) for sev in (OK, WARN, FAIL)}
    return {
        "mode": mode,
        "profile": profile,
        "status": STATUS_WORDS[level],
        "exit_code": EXIT_CODES[level],
        "counts": counts,
        "problems": [f.as_dict() for f in findings if f.severity != OK],
        "hosts": hosts,
    }
