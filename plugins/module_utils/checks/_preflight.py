# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Preflight / doctor checks of one host: (host plan, observed host facts) -> findings.  Pure, no I/O.

The host side (``_host_probe.observe``) only looks; everything that decides what is wrong, what was expected
and how to fix it is in the check families, so that every failure case is unit-tested without a host.
Three steps, all run on the host by the module sglang_preflight:

1. ``requirements(host_plan, ctx)``: what must be looked at on the host (paths, NICs, ports, peers, runtimes,
   units), derived from the host's planned services (module_utils/checks/_preflight_inputs.py).
2. ``_host_probe.observe(requirements, ...)``.
3. ``check_host(host, host_plan, observed, ctx)``: the findings (module_utils/checks/_findings.py), one per check and
   subject, from each family: _npu_checks.py, _software_checks.py (driver, CANN, runtimes, the server stack,
   the container), _file_checks.py, _network_checks.py (NICs, ports, peers), _fabric_checks.py (the NPU NICs,
   per-chip health, the model files), _doctor_checks.py.

The controller turns every host's findings into one table and a JSON report
(plugins/plugin_utils/report/_preflight_report.py) and adds the checks that compare hosts (_fleet_checks.py).

Modes: ``preflight`` (before start), ``doctor`` (a running cluster) and ``stack``: only the server
interpreter's stack (its runtime and stack checks), run by deploy.yml right after the roles installed it
(``sglang_server_install``), when preflight could not check it yet.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from ansible_collections.ascend.sglang.plugins.module_utils.checks import _checks, _fabric_checks
from ansible_collections.ascend.sglang.plugins.module_utils.checks._cpu_checks import check_cpu_affinity
from ansible_collections.ascend.sglang.plugins.module_utils.checks._doctor_checks import check_doctor
from ansible_collections.ascend.sglang.plugins.module_utils.checks._file_checks import check_files
from ansible_collections.ascend.sglang.plugins.module_utils.checks._findings import Context, Finding, Findings
from ansible_collections.ascend.sglang.plugins.module_utils.checks._network_checks import check_nics, check_peers, check_ports
from ansible_collections.ascend.sglang.plugins.module_utils.checks._npu_checks import check_npu
from ansible_collections.ascend.sglang.plugins.module_utils.checks._preflight_inputs import (
    container, container_requirements, fabric_devices, in_scope, is_server_host, model_paths, socket_nics,
    peer_targets, runtime, server_devices, services, stack_look, sysctl_look, weight_dirs,
)
from ansible_collections.ascend.sglang.plugins.module_utils.checks._software_checks import (
    check_container, check_runtimes, check_stack, check_versions,
)
from ansible_collections.ascend.sglang.plugins.module_utils.files._units import service_units

# hccn_tool query of each fabric check (the TLS switch is compared across hosts on the controller).
FABRIC_QUERIES = (("link", "npu_link"), ("net_health", "npu_net_health"), ("ip", "npu_ip"), ("tls", "npu_tls"))


def _stack_requirements(host_plan: Mapping[str, Any], ctx: Context) -> dict[str, Any]:
    """Stack mode: the server interpreter's report, and the host's CANN toolkit it is compared with; nothing else."""
    runtimes: dict[str, dict[str, Any]] = {}
    for svc in services(host_plan):
        wanted = runtime(svc, host_plan, ctx)
        if wanted and wanted["key"] not in runtimes and in_scope(wanted, ctx):
            runtimes[wanted["key"]] = wanted
    return {"npu": False, "toolkit": bool(runtimes), "paths": {}, "names": [], "nics": [], "ports": [],
            "probes": [], "runtimes": list(runtimes.values()), "units": [], "health": []}


def requirements(host_plan: Mapping[str, Any], ctx: Context) -> dict[str, Any]:
    """What the host probe must look at for this host plan (all lists, JSON-able)."""
    if ctx.mode == "stack":
        return _stack_requirements(host_plan, ctx)
    paths: dict[str, str] = {}
    spec = container_requirements(host_plan)
    # In the container runtime the image brings CANN: the host's scripts are not sourced.
    for script in [] if spec else (host_plan.get("cann") or {}).get("sources") or []:
        paths[str(script)] = "file"
    nics: set[str] = set()
    ports: list[int] = []
    probes: dict[str, dict[str, Any]] = {}
    runtimes = {}
    units: list[str] = []
    health: list[dict[str, str]] = []
    for svc in services(host_plan):
        units.append(str(svc.get("name")))
        for path, kind, _unused in model_paths(svc):
            paths[path] = kind
        for _unused, nic in socket_nics(svc):
            nics.add(nic)
        ports.extend(int(p) for p in (svc.get("listens") or {}).values())
        for address, port, _unused in peer_targets(svc):
            probes[f"{address}:{port}"] = {"address": address, "port": port}
        wanted = runtime(svc, host_plan, ctx)
        if wanted and wanted["key"] not in runtimes and in_scope(wanted, ctx):
            runtimes[wanted["key"]] = wanted
        if ctx.mode == "doctor" and svc.get("health_url"):
            health.append({"service": str(svc.get("name")), "url": str(svc["health_url"])})
    fabric = fabric_devices(host_plan)
    queries = [query for query, check in FABRIC_QUERIES if ctx.level(check) != "off"]
    return {
        "npu": is_server_host(host_plan),
        "toolkit": is_server_host(host_plan) and spec is None,
        # The NPU NICs of the devices whose services talk to other hosts (module_utils/npu/_fabric.py).
        "fabric": {"devices": sorted(fabric), "queries": queries} if fabric and queries else None,
        "npu_health": sorted(server_devices(host_plan)) if ctx.level("npu_health") != "off" else [],
        "hardware": ctx.hardware,
        "weights": ({"paths": sorted(weight_dirs(host_plan)), "full": ctx.preflight.get("weights") == "full"}
                    if ctx.level("weights") != "off" and weight_dirs(host_plan) else None),
        # doctor: whether each service and its watchdog run the files they have now (module_utils/files/_started.py).
        "started": [unit for name in units for unit in service_units(name)] if ctx.mode == "doctor" else [],
        "container": spec,
        "paths": paths,
        # Bind addresses may be host names (sglang_host_ip: node1): the host resolves them itself.
        "names": sorted({str(svc.get("host")) for svc in services(host_plan) if svc.get("host")}),
        "nics": sorted(nics),
        "ports": sorted(set(ports)),
        "probes": list(probes.values()),
        # With the server stacks the roles install, looked at as they are now (stack_look): not checked here.
        "runtimes": list(runtimes.values()) + stack_look(host_plan, ctx),
        "units": units,
        "health": health,
        # For deploy.yml's tuning play, not a check: the live kernel settings and their persisted file.
        "sysctl": sysctl_look(host_plan) if ctx.mode == "preflight" else None,
    }


def looked_stack(host: str, host_plan: Mapping[str, Any], req: Mapping[str, Any], observed: Mapping[str, Any],
                 ctx: Context) -> list[Finding] | None:
    """Preflight on a host whose server stack the roles install: the stack checks (mode stack) of the stack as it is
    now, where preflight looked at it (``_preflight_inputs.stack_look``); None where it did not. deploy.yml takes
    them for the stack play's where the install has nothing to do on the host."""
    if ctx.mode != "preflight" or not any(r.get("distributions") for r in req.get("runtimes") or []):
        return None
    return check_host(host, host_plan, observed, dataclasses.replace(ctx, mode="stack"))


def check_host(host: str, host_plan: Mapping[str, Any], observed: Mapping[str, Any], ctx: Context) -> list[Finding]:
    """Every finding (ok, warn, fail) for one host of the plan."""
    out = Findings(host)
    if ctx.mode == "stack":
        check_runtimes(out, host_plan, observed, ctx)
        check_stack(out, host_plan, observed, ctx)
        return out.items
    if is_server_host(host_plan):
        check_npu(out, host_plan, observed, ctx)
        check_cpu_affinity(out, host_plan, observed)
        check_versions(out, observed, ctx, toolkit_on_host=container(host_plan) is None)
    check_container(out, host_plan, observed)
    check_files(out, host_plan, observed)
    check_nics(out, host_plan, observed)
    check_ports(out, host_plan, observed, ctx)
    check_peers(out, host_plan, observed, ctx)
    check_runtimes(out, host_plan, observed, ctx)
    check_stack(out, host_plan, observed, ctx)
    levels = {check: ctx.level(check) for check in _checks.CHECKS}
    _fabric_checks.check_nics(out.add, observed.get("fabric"), fabric_devices(host_plan), levels)
    if "npu_health" in observed:
        _fabric_checks.check_health(out.add, observed.get("npu_health"), server_devices(host_plan),
                                    levels["npu_health"])
    _fabric_checks.check_weights(out.add, observed.get("weights"), weight_dirs(host_plan), levels["weights"])
    if ctx.mode == "doctor":
        check_doctor(out, host_plan, observed)
    return out.items
