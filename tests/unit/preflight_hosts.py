"""Hosts for the preflight check tests: the plans of two documented profiles, observed facts under which every
check of a host plan passes (npu-smi fixtures plus hand-made values), and the helpers that pick findings out.
Pure Python, no host, no Ansible."""

from __future__ import annotations

from pathlib import Path

from ansible_collections.ascend.sglang.plugins.module_utils.checks._findings import Context
from ansible_collections.ascend.sglang.plugins.module_utils.npu._npu_smi import parse_npu_smi_info
from ansible_collections.ascend.sglang.plugins.module_utils.checks._preflight import requirements

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "npu_smi"
PD32 = "deepseek_r1_a3_32c_pd_6k_1k6_20ms"        # 2 x 1-node prefill (store on prefill0), 2-node decode, router
A2_MIXED = "qwen3_32b_a2_8c_mixed_2k_2k_50ms"     # A2, --base-gpu-id 4, --tp-size 4, EAGLE3 draft, modelslim


def ctx_of(profile, p, **kw):
    return Context(hardware=profile.hardware, releases=p["releases"], profile=profile.id, **kw)


def npu_info(fixture):
    return parse_npu_smi_info((FIXTURES / fixture).read_text()).as_dict()


def healthy(host_plan, ctx, fixture="a3_ascend910_x8x2_healthy.txt"):
    """Observed facts under which every check of the host plan passes."""
    req = requirements(host_plan, ctx)
    services = host_plan["services"]
    nics = {"lo": ["127.0.0.1"], "eth0": ["192.0.2.9"]}
    for svc in services:
        for var in ("HCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME"):
            nic = svc["env"].get(var)
            if nic and (svc["nnodes"] > 1 or nic != "lo"):
                nics.setdefault(nic, []).append(svc["host"])
    own = services[0]["host"]
    return {
        "npu": {"available": True, "command": "/usr/local/sbin/npu-smi", "error": None, "info": npu_info(fixture)}
        if req["npu"] else None,
        "driver": {"path": "/usr/local/Ascend/driver/version.info", "version": "25.3.rc1", "error": None},
        "toolkit": {"path": "/x/ascend_toolkit_install.info", "version": "8.3.RC2", "searched": [], "error": None},
        "paths": dict(req["paths"]),
        "nics": nics,
        "listeners": [],
        "units": {},
        "owners": {},
        "routes": {p["address"]: {"source": own, "error": None} for p in req["probes"]},
        "probes": {f"{p['address']}:{p['port']}": {"result": "refused", "detail": ""} for p in req["probes"]},
        "runtimes": {r["key"]: {"version": r["expected"], "error": None} for r in req["runtimes"]},
        "health": {},
    }


def problems(findings):
    return [(f.check, f.severity) for f in findings if f.severity != "ok"]


def only(findings, check):
    hits = [f for f in findings if f.check == check and f.severity != "ok"]
    assert hits, f"no {check} finding in {problems(findings)}"
    return hits
