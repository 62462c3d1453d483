# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The host checks of the NPUs (npu-smi info): the hardware generation, the planned devices present, healthy and
idle, and enough free HBM on each.

Private to the collection; pure, no Ansible import. Runs on the managed host (module sglang_preflight, through
``_preflight.check_host``); the per-chip health and the NPU NICs are module_utils/checks/_fabric_checks.py's.
"""

from __future__ import annotations

from typing import Any, Mapping

from ansible_collections.ascend.sglang.plugins.module_utils.checks._fabric_checks import span
from ansible_collections.ascend.sglang.plugins.module_utils.checks._findings import FAIL, OK, WARN, Context, Findings
from ansible_collections.ascend.sglang.plugins.module_utils.npu._npu_smi import HEALTH_OK, HEALTH_WARNING
from ansible_collections.ascend.sglang.plugins.module_utils.checks._preflight_inputs import (
    SERVER_ROLES, devices, owner_is_ours, services,
)

# Devices one node offers (the planner's NODE_DEVICES; repeated so that the host side stays standalone).
NODE_DEVICES = {"A3": 16, "A2": 8}
DEFAULT_HBM_FREE_RATIO = 0.8


def check_npu(out: Findings, host_plan: Mapping[str, Any], observed: Mapping[str, Any], ctx: Context) -> None:
    npu = observed.get("npu") or {}
    servers = [s for s in services(host_plan) if s.get("role") in SERVER_ROLES]
    names = {str(s.get("name")) for s in services(host_plan)}
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
        _check_hardware(out, info, generation, len(chips), ctx)
    by_index = {int(c["index"]): c for c in chips}
    node = NODE_DEVICES.get(ctx.hardware or generation or "", 0)
    for svc in servers:
        wanted = devices(svc)
        name = str(svc.get("name"))
        if not wanted:
            continue
        _check_devices_listed(out, wanted, by_index, len(chips), node, name)
        for index in wanted:
            chip = by_index.get(index)
            if chip is None:
                continue
            where = f"device {index} (NPU {chip['npu']} chip {chip['chip']})"
            _check_device_health(out, chip, where, observed, ctx, name)
            procs = chip.get("processes") or []
            foreign = [p for p in procs if not owner_is_ours(p.get("pid"), observed, names)]
            _check_device_idle(out, where, procs, foreign, observed, name)
            if procs and not foreign:
                continue  # HBM is used by this deployment's own running service
            _check_hbm_free(out, chip, where, svc, ctx, name)


def _check_hardware(out: Findings, info: Mapping[str, Any], generation: Any, count: int, ctx: Context) -> None:
    """The node's NPU generation against the profile's hardware."""
    if generation is None:
        out.add("hardware", WARN, f"chip '{info.get('chip_name')}', generation unknown", f"Atlas 800I {ctx.hardware}",
                "check `npu-smi info` by hand; the profile assumes " + ctx.hardware)
    elif generation != ctx.hardware:
        out.add("hardware", FAIL, f"Atlas 800I {generation} ({info.get('chip_name')}, {count} devices)",
                f"Atlas 800I {ctx.hardware} (profile {ctx.profile})",
                f"move this host out of the deployment or pick a profile for {generation} hardware")
    else:
        out.add("hardware", OK, f"{generation} ({info.get('chip_name')})", ctx.hardware)


def _check_devices_listed(out: Findings, wanted: list[int], by_index: Mapping[int, Any], count: int, node: int,
                          name: str) -> None:
    """Every device a server is planned on is listed by npu-smi."""
    missing = [d for d in wanted if d not in by_index]
    devices_span = span(wanted)
    if missing:
        out.add("devices", FAIL, f"{count} devices listed by npu-smi" + (f" (a node has {node})" if node else ""),
                f"{devices_span} for --tp-size/--nnodes from --base-gpu-id {wanted[0]}",
                "check for devices missing from `npu-smi info` (driver, hot-reset) or lower --tp-size / "
                "--base-gpu-id through sglang_overrides", service=name)
    else:
        out.add("devices", OK, f"{count} devices", devices_span, service=name)


def _check_device_health(out: Findings, chip: Mapping[str, Any], where: str, observed: Mapping[str, Any],
                         ctx: Context, name: str) -> None:
    """The table's Health column of one planned device."""
    health = str(chip.get("health") or "")
    # npu-smi info -t health per chip (npu_health, module_utils/checks/_fabric_checks.py) says more than the
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


def _check_device_idle(out: Findings, where: str, procs: list[Any], foreign: list[Any], observed: Mapping[str, Any],
                       name: str) -> None:
    """No process but this deployment's holds one planned device."""
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


def _check_hbm_free(out: Findings, chip: Mapping[str, Any], where: str, svc: Mapping[str, Any], ctx: Context,
                    name: str) -> None:
    """Enough free HBM on one planned device: the operator's ratio, else the server's --mem-fraction-static."""
    used, total = chip.get("hbm_used_mb"), chip.get("hbm_total_mb")
    if used is None or not total:
        out.add("hbm_free", WARN, f"{where}: HBM usage not reported", "HBM usage readable",
                "check `npu-smi info -t usages -i <npu>` by hand", service=name)
        return
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
