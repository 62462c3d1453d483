# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The host checks of the software the services run on: the NPU driver and CANN toolkit versions, the release
each interpreter imports, the server interpreter's stack, and in the container runtime the engine, the image,
the device nodes and the mounted host files.

Private to the collection; pure, no Ansible import. Runs on the managed host (module sglang_preflight, through
``_preflight.check_host``); the stack's own findings are module_utils/checks/_server_stack.py's.
"""

from __future__ import annotations

from typing import Any, Mapping

from ansible_collections.ascend.sglang.plugins.module_utils.checks import _server_stack
from ansible_collections.ascend.sglang.plugins.module_utils.checks._findings import FAIL, OK, Context, Findings
from ansible_collections.ascend.sglang.plugins.module_utils.npu._npu_smi import compare_versions, normalize_release
from ansible_collections.ascend.sglang.plugins.module_utils.checks._preflight_inputs import (
    container_requirements, devices_needed, in_scope, installed_later, runtime, services,
)


def check_versions(out: Findings, observed: Mapping[str, Any], ctx: Context, toolkit_on_host: bool = True) -> None:
    driver = observed.get("driver") or {}
    minimum, source = driver_minimum(ctx)
    _check_version(
        out, "driver", driver, minimum, source, "driver",
        missing=f"no driver version ({driver.get('path')}: {driver.get('error') or 'missing'})",
        what="Ascend driver installed",
        install="install the Ascend NPU driver (Ascend-hdk-*-npu-driver) or point sglang_npu_driver_info at its "
                "version.info",
        upgrade=f"upgrade the NPU driver and firmware (Ascend HDK) to {minimum} or later"
                + ("" if ctx.min_driver_version else ": an older driver than the image's CANN needs fails minutes "
                   "into the model load, not at start"))
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


def driver_minimum(ctx: Context) -> tuple[str | None, str]:
    """The lowest driver the host may have, and where it comes from: the operator's sglang_min_driver_version,
    else the driver the planned release's CANN needs (the reference stack's ``driver``), else none."""
    if ctx.min_driver_version:
        return ctx.min_driver_version, "sglang_min_driver_version"
    stack = ctx.stack_reference or {}
    driver = str(stack.get("driver") or "unknown")
    if driver == "unknown":
        return None, "sglang_min_driver_version"
    return driver, (f"the Ascend HDK that CANN {stack.get('cann')} of SGLang {stack.get('release')} needs; "
                    "sglang_min_driver_version overrides")


def _check_version(out: Findings, check: str, info: Mapping[str, Any], minimum: str | None, variable: str,
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


def check_runtimes(out: Findings, host_plan: Mapping[str, Any], observed: Mapping[str, Any], ctx: Context) -> None:
    runtimes = observed.get("runtimes") or {}
    seen: set[str] = set()
    for svc in services(host_plan):
        wanted = runtime(svc, host_plan, ctx)
        if not wanted or wanted["key"] in seen or (ctx.mode == "stack" and not wanted["stack"]):
            continue
        seen.add(wanted["key"])
        if installed_later(wanted, ctx):
            out.add("runtime", OK, f"installed by the role before start ({wanted['python']})",
                    f"{wanted['package']} {wanted['expected'] or '(any)'}", service=str(svc.get("name")))
            continue
        got = runtimes.get(wanted["key"]) or {}
        version = got.get("version")
        expected_release = wanted["expected"]
        what = f"{wanted['package']} {expected_release or '(any)'} importable by {wanted['python']}"
        var = "sglang_router_python / sglang_router_release" if wanted["package"] != "sglang" else \
            "sglang_python / sglang_release"
        if not version:
            out.add("runtime", FAIL, f"{wanted['python']}: {got.get('error') or 'not checked'}", what,
                    f"install {wanted['package']}=={expected_release} for that interpreter"
                    + (" (checked with the CANN environment sourced, as the launcher runs it)"
                       if wanted["sources"] else "")
                    + f", or point {var.split(' / ', maxsplit=1)[0]} at the interpreter that has it",
                    service=str(svc.get("name")))
        elif expected_release and normalize_release(version) != normalize_release(expected_release):
            out.add("runtime", FAIL, f"{wanted['package']} {version} ({wanted['python']})", what,
                    f"install {wanted['package']}=={expected_release}, or set {var.split(' / ')[1]} to the "
                    "release you mean to run", service=str(svc.get("name")))
        else:
            out.add("runtime", OK, f"{wanted['package']} {version}", what, service=str(svc.get("name")))


def check_stack(out: Findings, host_plan: Mapping[str, Any], observed: Mapping[str, Any], ctx: Context) -> None:
    runtimes = observed.get("runtimes") or {}
    toolkit = (observed.get("toolkit") or {}).get("version")
    seen: set[str] = set()
    for svc in services(host_plan):
        wanted = runtime(svc, host_plan, ctx)
        if not wanted or not wanted["stack"] or wanted["key"] in seen or not in_scope(wanted, ctx):
            continue
        seen.add(wanted["key"])
        stack = (runtimes.get(wanted["key"]) or {}).get("stack")
        if not stack:
            continue  # the interpreter did not run: the runtime check reports why
        for check, severity, found, expected, fix in _server_stack.check(
                stack, wanted["python"], devices_needed(host_plan), toolkit, ctx.stack_reference, ctx.stack_policy):
            out.add(check, severity, found, expected, fix)


def check_container(out: Findings, host_plan: Mapping[str, Any], observed: Mapping[str, Any]) -> None:
    """sglang_runtime container: the engine runs, the image is here (or can be pulled, or comes from the
    controller's tarball), and every device node and host file the containers get exists."""
    spec = container_requirements(host_plan)
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
