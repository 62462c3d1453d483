"""Preflight / doctor check logic: (host plan, observed facts) -> findings.  Pure Python, no host, no Ansible.

Host plans come from the real planner; observed facts from the npu-smi fixtures plus hand-made values, so
every failure case of the issue is exercised: busy / unhealthy devices, too few devices, wrong generation,
low HBM, driver / CANN missing or too old, CANN scripts, model / quant description / draft model, NIC,
ports, rank-0 reachability, runtime release; and the aggregated table.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.ascend.sglang.plugins.module_utils._npu_smi import parse_npu_smi_info
from ansible_collections.ascend.sglang.plugins.module_utils._preflight import (
    Context, aggregate, check_host, render_table, report, requirements, server_devices,
)
from ansible_collections.ascend.sglang.tests.unit.plans import make_plan

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "npu_smi"
PD32 = "deepseek_r1_a3_32c_pd_6k_1k6_20ms"        # 2 x 1-node prefill (store on prefill0), 2-node decode, router
A2_MIXED = "qwen3_32b_a2_8c_mixed_2k_2k_50ms"     # A2, --base-gpu-id 4, --tp-size 4, EAGLE3 draft, modelslim


@pytest.fixture(scope="module")
def pd32():
    return make_plan(PD32, prefill=2, decode=2, router=1)


@pytest.fixture(scope="module")
def a2mixed():
    return make_plan(A2_MIXED, mixed=1)


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
            if nic and svc["nnodes"] > 1:
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


# ------------------------------------------------------------------ plan-derived requirements

def test_the_planned_devices_are_the_ones_checked(pd32, a2mixed):
    _unused, p = pd32
    assert server_devices(p["hosts"]["decode1"]) == {d: ["sglang-decode-i0-r1"] for d in range(16)}  # tp 32 / 2 nodes
    assert sorted(server_devices(p["hosts"]["prefill0"])) == list(range(16))    # --tp-size 16, one node
    assert server_devices(p["hosts"]["router0"]) == {}
    _unused, q = a2mixed
    assert sorted(server_devices(q["hosts"]["mixed0"])) == [4, 5, 6, 7]  # --base-gpu-id 4, --tp-size 4
    # Only the plan's devices count, whatever the argv says.
    svc = {"name": "s", "role": "mixed", "nnodes": 1, "argv": ["python3", "--tp-size", "8"], "devices": [6, 7]}
    assert server_devices({"services": [svc]}) == {6: ["s"], 7: ["s"]}


def test_requirements_probe_rank0_endpoints_only_from_peers(pd32):
    profile, p = pd32
    ctx = ctx_of(profile, p)
    decode1 = requirements(p["hosts"]["decode1"], ctx)
    decode0 = requirements(p["hosts"]["decode0"], ctx)
    prefill0 = requirements(p["hosts"]["prefill0"], ctx)
    assert {(t["address"], t["port"]) for t in decode1["probes"]} == {("10.0.2.1", 5000), ("10.0.1.1", 24669)}
    assert {(t["address"], t["port"]) for t in decode0["probes"]} == {("10.0.1.1", 24669)}
    assert prefill0["probes"] == []  # the store is its own
    assert set(prefill0["ports"]) == {8000, 8998, 24669}
    assert decode1["nics"] == ["ens1"] and prefill0["nics"] == []
    assert "/models/m/quant_model_description.json" in prefill0["paths"]
    router = requirements(p["hosts"]["router0"], ctx)
    assert router["npu"] is False and [r["package"] for r in router["runtimes"]] == ["sglang-router"]


# ------------------------------------------------------------------ healthy hosts pass

@pytest.mark.parametrize("host", ["prefill0", "prefill1", "decode0", "decode1", "router0"])
def test_healthy_a3_hosts_pass(pd32, host):
    profile, p = pd32
    ctx = ctx_of(profile, p)
    findings = check_host(host, p["hosts"][host], healthy(p["hosts"][host], ctx), ctx)
    assert problems(findings) == []
    assert findings and all(f.host == host for f in findings)


def test_healthy_a2_host_passes(a2mixed):
    profile, p = a2mixed
    ctx = ctx_of(profile, p)
    obs = healthy(p["hosts"]["mixed0"], ctx, "a2_910b3_x8_healthy.txt")
    assert problems(check_host("mixed0", p["hosts"]["mixed0"], obs, ctx)) == []


# ------------------------------------------------------------------ NPU

def test_a2_host_in_an_a3_plan(pd32):
    profile, p = pd32
    ctx = ctx_of(profile, p)
    obs = healthy(p["hosts"]["prefill0"], ctx, "a2_910b3_x8_healthy.txt")
    findings = check_host("prefill0", p["hosts"]["prefill0"], obs, ctx)
    hw = only(findings, "hardware")[0]
    assert hw.severity == "fail" and "A2" in hw.found and "A3" in hw.expected
    dev = only(findings, "devices")[0]
    assert dev.severity == "fail" and "8 devices" in dev.found and "devices 0-15" in dev.expected


def test_busy_device_names_the_process(a2mixed):
    profile, p = a2mixed
    ctx = ctx_of(profile, p)
    obs = healthy(p["hosts"]["mixed0"], ctx, "a2_910b3_x8_healthy.txt")
    chip = obs["npu"]["info"]["chips"][5]
    chip["processes"] = [{"npu": 5, "chip": 0, "pid": 4242, "name": "python3", "memory_mb": 30000}]
    chip["hbm_used_mb"] = 33440
    findings = check_host("mixed0", p["hosts"]["mixed0"], obs, ctx)
    busy = only(findings, "device_idle")
    assert len(busy) == 1 and busy[0].severity == "fail"
    assert "device 5" in busy[0].found and "pid 4242 python3 (30000 MB)" in busy[0].found
    assert "kill 4242" in busy[0].fix
    assert only(findings, "hbm_free")[0].severity == "fail"


def test_busy_device_from_real_sample():
    host_plan = {"cann": {}, "services": [{"name": "sglang-mixed-i0-r0", "role": "mixed", "nnodes": 1, "node_rank": 0,
                                           "host": "127.0.0.1", "env": {}, "listens": {}, "devices": [0, 1],
                                           "argv": ["python3", "-m", "sglang.launch_server", "--tp-size", "2"]}]}
    ctx = Context(hardware="A2", releases={"sglang": "0.5.6.post2"})
    obs = healthy(host_plan, ctx, "a2_910b2c_x2_busy.txt")
    busy = only(check_host("h", host_plan, obs, ctx), "device_idle")
    assert [b.found for b in busy] == ["device 0 (NPU 0 chip 0) held by pid 124528 python3.8 (17400 MB)"]


def test_device_of_this_deployment_is_not_busy(a2mixed):
    profile, p = a2mixed
    ctx = ctx_of(profile, p)
    obs = healthy(p["hosts"]["mixed0"], ctx, "a2_910b3_x8_healthy.txt")
    for chip in obs["npu"]["info"]["chips"][4:8]:
        chip["processes"] = [{"npu": chip["npu"], "chip": 0, "pid": 777, "name": "python3", "memory_mb": 50000}]
        chip["hbm_used_mb"] = 60000
    obs["owners"] = {"777": "sglang-mixed-i0-r0.service"}
    assert problems(check_host("mixed0", p["hosts"]["mixed0"], obs, ctx)) == []


def test_unhealthy_devices_from_faulty_sample(a2mixed):
    profile, p = a2mixed
    ctx = ctx_of(profile, p)
    obs = healthy(p["hosts"]["mixed0"], ctx, "a2_910b3_x8_faulty_derived.txt")
    health = only(check_host("mixed0", p["hosts"]["mixed0"], obs, ctx), "device_health")
    # devices 4-7 only: the Alarm on device 2 is outside --base-gpu-id 4 + 4
    assert [(f.severity, f.found) for f in health] == [("fail", "device 5 (NPU 5 chip 0): Critical"),
                                                       ("warn", "device 6 (NPU 6 chip 0): Warning")]
    assert "npu-smi info -t health -i 5 -c 0" in health[0].fix


def test_warning_die_on_a3(pd32):
    profile, p = pd32
    ctx = ctx_of(profile, p)
    obs = healthy(p["hosts"]["prefill0"], ctx)
    obs["npu"]["info"]["chips"][1]["health"] = "Warning"
    obs["npu"]["info"]["chips"][9]["health"] = "Alarm"
    health = only(check_host("prefill0", p["hosts"]["prefill0"], obs, ctx), "device_health")
    assert [(f.severity, f.found) for f in health] == [("warn", "device 1 (NPU 0 chip 1): Warning"),
                                                       ("fail", "device 9 (NPU 4 chip 1): Alarm")]


def test_too_few_devices_real_a3_sample(pd32):
    profile, p = pd32
    ctx = ctx_of(profile, p)
    obs = healthy(p["hosts"]["decode0"], ctx, "a3_ascend910_x2x2_busy.txt")
    findings = check_host("decode0", p["hosts"]["decode0"], obs, ctx)
    dev = only(findings, "devices")[0]
    assert dev.severity == "fail" and dev.found.startswith("4 devices")
    assert only(findings, "device_idle")[0].found.startswith("device 3 (NPU 1 chip 1) held by pid 990711")


def test_a_device_held_by_a_unit_of_an_earlier_deployment_names_the_unit(pd32):
    """A rank left running under a unit name this plan no longer has (another instance count, another layout)
    holds a planned NPU: a failure naming the unit and how to stop it, not "ours"."""
    profile, p = pd32
    ctx = ctx_of(profile, p)
    obs = healthy(p["hosts"]["decode0"], ctx, "a3_ascend910_x2x2_busy.txt")
    obs["owners"] = {"990711": "sglang-decode-i1-r0.service"}
    busy = only(check_host("decode0", p["hosts"]["decode0"], obs, ctx), "device_idle")[0]
    assert busy.found.endswith("(sglang-decode-i1-r0.service)")
    assert busy.fix == "a unit of an earlier deployment still runs on it: `systemctl disable --now sglang-decode-i1-r0.service`"
    # The same process under this plan's own unit is ours (about to be restarted by the deployment).
    obs["owners"] = {"990711": "sglang-decode-i0-r0.service"}
    assert not [f for f in check_host("decode0", p["hosts"]["decode0"], obs, ctx)
                if f.check == "device_idle" and f.severity != "ok"]


def test_npu_health_off_and_detailed(pd32):
    """The per-chip health query, when observed, replaces the table's Health column; off reports neither."""
    profile, p = pd32
    ctx = ctx_of(profile, p)
    obs = healthy(p["hosts"]["prefill0"], ctx)
    obs["npu"]["info"]["chips"][9]["health"] = "Alarm"
    off = ctx_of(profile, p, preflight={"checks": {"npu_health": "off"}})
    assert not [f for f in check_host("prefill0", p["hosts"]["prefill0"], obs, off)
                if f.check in ("device_health", "npu_health")]
    obs["npu_health"] = {str(d): {"health": "Alarm" if d == 9 else "OK", "error_code": "80E18402" if d == 9 else "NA",
                                  "npu": d // 2, "chip": d % 2} for d in range(16)}
    found = check_host("prefill0", p["hosts"]["prefill0"], obs, ctx)
    assert not [f for f in found if f.check == "device_health"]
    assert [f.found for f in found if f.check == "npu_health" and f.severity == "fail"] == [
        "device 9: NPU 4 chip 1: Alarm (error code 80E18402)"]
    assert requirements(p["hosts"]["prefill0"], ctx)["npu_health"] == list(range(16))
    assert requirements(p["hosts"]["prefill0"], off)["npu_health"] == []


def test_hbm_threshold_from_mem_fraction_static_and_variable(pd32):
    profile, p = pd32
    ctx = ctx_of(profile, p)
    obs = healthy(p["hosts"]["prefill0"], ctx)
    obs["npu"]["info"]["chips"][0]["hbm_used_mb"] = 20000  # 69% free < --mem-fraction-static 0.81
    hbm = only(check_host("prefill0", p["hosts"]["prefill0"], obs, ctx), "hbm_free")
    assert len(hbm) == 1 and "--mem-fraction-static" in hbm[0].expected and "device 0" in hbm[0].found
    loose = ctx_of(profile, p, min_hbm_free_ratio=0.5)
    assert problems(check_host("prefill0", p["hosts"]["prefill0"], obs, loose)) == []


def test_npu_smi_missing(pd32):
    profile, p = pd32
    ctx = ctx_of(profile, p)
    obs = healthy(p["hosts"]["prefill0"], ctx)
    obs["npu"] = {"available": False, "command": "npu-smi", "error": "npu-smi not found in PATH", "info": None}
    f = only(check_host("prefill0", p["hosts"]["prefill0"], obs, ctx), "npu_smi")[0]
    assert f.severity == "fail" and "not found" in f.found


# ------------------------------------------------------------------ driver / CANN / scripts / model

def test_driver_and_cann_missing_or_too_old(pd32):
    profile, p = pd32
    ctx = ctx_of(profile, p, min_driver_version="25.5.0", min_cann_version="8.5.0")
    obs = healthy(p["hosts"]["prefill0"], ctx)
    findings = check_host("prefill0", p["hosts"]["prefill0"], obs, ctx)
    assert only(findings, "driver")[0].found == "driver 25.3.rc1"
    assert ">= 8.5.0" in only(findings, "cann")[0].expected
    obs["driver"] = {"path": "/usr/local/Ascend/driver/version.info", "version": None, "error": "No such file"}
    obs["toolkit"] = {"path": None, "version": None, "searched": ["/a/*.info", "/b/*.info"], "error": "not found"}
    findings = check_host("prefill0", p["hosts"]["prefill0"], obs, ctx_of(profile, p))
    assert "No such file" in only(findings, "driver")[0].found
    assert "/a/*.info and 1 more" in only(findings, "cann")[0].found
    ok_ctx = ctx_of(profile, p, min_driver_version="24.1.rc2", min_cann_version="8.3.RC1")
    assert problems(check_host("prefill0", p["hosts"]["prefill0"], healthy(p["hosts"]["prefill0"], ok_ctx), ok_ctx)) == []


def test_missing_cann_script(pd32):
    profile, p = pd32
    ctx = ctx_of(profile, p)
    obs = healthy(p["hosts"]["prefill0"], ctx)
    obs["paths"]["/usr/local/Ascend/nnal/atb/set_env.sh"] = "missing"
    f = only(check_host("prefill0", p["hosts"]["prefill0"], obs, ctx), "cann_scripts")
    assert [x.found for x in f] == ["/usr/local/Ascend/nnal/atb/set_env.sh missing"]


def test_model_dir_config_and_quant_description(pd32):
    profile, p = pd32
    ctx = ctx_of(profile, p)
    obs = healthy(p["hosts"]["prefill0"], ctx)
    obs["paths"]["/models/m/quant_model_description.json"] = "missing"
    f = only(check_host("prefill0", p["hosts"]["prefill0"], obs, ctx), "model")
    assert [x.found for x in f] == ["/models/m/quant_model_description.json missing"]
    assert "--quantization modelslim" in f[0].expected
    obs["paths"]["/models/m/config.json"] = "missing"
    assert len(only(check_host("prefill0", p["hosts"]["prefill0"], obs, ctx), "model")) == 2
    obs["paths"]["/models/m"] = "missing"
    f = only(check_host("prefill0", p["hosts"]["prefill0"], obs, ctx), "model")
    assert [x.found for x in f] == ["/models/m missing"]  # files of a missing directory are not repeated


def test_eagle3_draft_model(a2mixed):
    profile, p = a2mixed
    ctx = ctx_of(profile, p)
    obs = healthy(p["hosts"]["mixed0"], ctx, "a2_910b3_x8_healthy.txt")
    obs["paths"]["/models/draft/config.json"] = "missing"
    f = only(check_host("mixed0", p["hosts"]["mixed0"], obs, ctx), "model")
    assert [x.found for x in f] == ["/models/draft/config.json missing"] and "EAGLE3" in f[0].expected


# ------------------------------------------------------------------ network

def test_nic_missing_or_without_the_address(pd32):
    profile, p = pd32
    ctx = ctx_of(profile, p)
    obs = healthy(p["hosts"]["decode1"], ctx)
    obs["nics"] = {"lo": ["127.0.0.1"], "eth0": ["10.0.2.2"]}
    f = only(check_host("decode1", p["hosts"]["decode1"], obs, ctx), "nic")[0]
    assert f.severity == "fail" and "no interface ens1" in f.found and "10.0.2.2" in f.expected
    obs["nics"] = {"lo": ["127.0.0.1"], "ens1": ["192.168.0.5"], "eth0": ["10.0.2.2"]}
    f = only(check_host("decode1", p["hosts"]["decode1"], obs, ctx), "nic")[0]
    assert "ens1 has 192.168.0.5" in f.found and "10.0.2.2 is on eth0" in f.found


def test_port_taken_by_another_process(pd32):
    profile, p = pd32
    ctx = ctx_of(profile, p)
    obs = healthy(p["hosts"]["prefill0"], ctx)
    obs["listeners"] = [{"address": "0.0.0.0", "port": 24669, "pids": [999]},
                        {"address": "127.0.0.1", "port": 8000, "pids": [998]}]  # loopback-only: no clash on 10.0.1.1
    obs["owners"] = {"999": "redis.service", "998": None}
    f = only(check_host("prefill0", p["hosts"]["prefill0"], obs, ctx), "port")
    assert len(f) == 1 and "24669 already in use" in f[0].found and "pid 999 (redis.service)" in f[0].found
    assert "memfabric_store" in f[0].expected


def test_port_held_by_own_running_unit_is_fine(pd32):
    profile, p = pd32
    ctx = ctx_of(profile, p)
    obs = healthy(p["hosts"]["prefill0"], ctx)
    obs["listeners"] = [{"address": "10.0.1.1", "port": 8000, "pids": [555]}]
    obs["owners"] = {"555": "sglang-prefill-i0-r0.service"}
    assert problems(check_host("prefill0", p["hosts"]["prefill0"], obs, ctx)) == []


@pytest.mark.parametrize("result, severity", [("timeout", "fail"), ("unreachable", "fail"), ("error", "fail"),
                                              ("refused", None), ("open", None)])
def test_rank0_reachability_before_start(pd32, result, severity):
    profile, p = pd32
    ctx = ctx_of(profile, p)
    obs = healthy(p["hosts"]["decode1"], ctx)
    obs["probes"]["10.0.2.1:5000"] = {"result": result, "detail": ""}
    found = [f for f in check_host("decode1", p["hosts"]["decode1"], obs, ctx) if f.check == "peer"
             and f.severity != "ok"]
    assert [f.severity for f in found] == ([severity] if severity else [])
    if severity:
        assert "10.0.2.1:5000" in found[0].found and "dist-init" in found[0].expected


def test_rank0_not_routable_and_wrong_source(pd32):
    profile, p = pd32
    ctx = ctx_of(profile, p)
    obs = healthy(p["hosts"]["decode1"], ctx)
    obs["routes"]["10.0.1.1"] = {"source": None, "error": "Network is unreachable"}
    obs["routes"]["10.0.2.1"] = {"source": "192.0.2.9", "error": None}
    findings = check_host("decode1", p["hosts"]["decode1"], obs, ctx)
    assert "no route to 10.0.1.1" in only(findings, "peer")[0].found
    assert only(findings, "peer_route")[0].severity == "warn"


def test_doctor_refused_rank0_is_a_warning(pd32):
    profile, p = pd32
    ctx = ctx_of(profile, p, mode="doctor")
    obs = healthy(p["hosts"]["decode1"], ctx)
    obs["units"] = {"sglang-decode-i0-r1": {"load": "loaded", "active": "active", "sub": "running"}}
    peer = only(check_host("decode1", p["hosts"]["decode1"], obs, ctx), "peer")
    assert {f.severity for f in peer} == {"warn"}


# ------------------------------------------------------------------ runtime

def test_runtime_missing_or_other_release(pd32):
    profile, p = pd32
    ctx = ctx_of(profile, p)
    obs = healthy(p["hosts"]["prefill0"], ctx)
    key = "python3|sglang"
    obs["runtimes"][key] = {"version": "0.5.5", "error": None}
    f = only(check_host("prefill0", p["hosts"]["prefill0"], obs, ctx), "runtime")[0]
    assert f.found == "sglang 0.5.5 (python3)" and "0.5.6.post2" in f.expected and "sglang_release" in f.fix
    obs["runtimes"][key] = {"version": None, "error": "sglang is not installed for python3"}
    f = only(check_host("prefill0", p["hosts"]["prefill0"], obs, ctx), "runtime")[0]
    assert "not installed" in f.found and "sglang==0.5.6.post2" in f.fix
    robs = healthy(p["hosts"]["router0"], ctx)
    robs["runtimes"]["python3|sglang-router"] = {"version": "0.2.4", "error": None}
    f = only(check_host("router0", p["hosts"]["router0"], robs, ctx), "runtime")[0]
    assert "sglang-router 0.2.4" in f.found and "0.3.0" in f.expected and "sglang_router_release" in f.fix


# ------------------------------------------------------------------ doctor

def test_doctor_service_states_and_health(pd32):
    profile, p = pd32
    ctx = ctx_of(profile, p, mode="doctor")
    host_plan = p["hosts"]["prefill0"]
    assert requirements(host_plan, ctx)["health"] == [{"service": "sglang-prefill-i0-r0",
                                                       "url": "http://10.0.1.1:8000/health"}]
    obs = healthy(host_plan, ctx)
    obs["units"] = {"sglang-prefill-i0-r0": {"load": "loaded", "active": "failed", "sub": "failed"}}
    f = only(check_host("prefill0", host_plan, obs, ctx), "service")[0]
    assert f.severity == "fail" and "journalctl -u sglang-prefill-i0-r0" in f.fix
    obs["units"] = {"sglang-prefill-i0-r0": {"load": "loaded", "active": "active", "sub": "running"}}
    obs["listeners"] = [{"address": "10.0.1.1", "port": port, "pids": [1]} for port in (8000, 8998, 24669)]
    obs["owners"] = {"1": "sglang-prefill-i0-r0.service"}
    obs["health"] = {"sglang-prefill-i0-r0": {"status": 200, "error": None}}
    assert problems(check_host("prefill0", host_plan, obs, ctx)) == []
    obs["health"] = {"sglang-prefill-i0-r0": {"status": 503, "error": None}}
    assert only(check_host("prefill0", host_plan, obs, ctx), "health")[0].found.endswith("503")
    obs["units"] = {"sglang-prefill-i0-r0": {"load": "not-found", "active": "inactive", "sub": "dead"}}
    obs["listeners"], obs["health"] = [], {}
    assert only(check_host("prefill0", host_plan, obs, ctx), "service")[0].severity == "warn"


def test_doctor_reports_a_restart_pending(pd32):
    """A running service whose start record differs from its files (module_utils/_started.py) is a warning that
    names the unit, the reason and the files, and how to heal it; one that runs its files is ok."""
    profile, p = pd32
    ctx = ctx_of(profile, p, mode="doctor")
    host_plan = p["hosts"]["prefill0"]
    assert requirements(host_plan, ctx)["started"] == ["sglang-prefill-i0-r0.service",
                                                       "sglang-watchdog-sglang-prefill-i0-r0.service"]
    assert requirements(host_plan, ctx_of(profile, p))["started"] == []  # preflight does not look
    obs = healthy(host_plan, ctx)
    obs["units"] = {"sglang-prefill-i0-r0": {"load": "loaded", "active": "active", "sub": "running"}}
    current = {"unit": "sglang-prefill-i0-r0.service", "running": True, "pending": False, "reason": None, "files": []}
    obs["started"] = {"sglang-prefill-i0-r0.service": current}
    assert [(f.severity, f.found) for f in check_host("prefill0", host_plan, obs, ctx) if f.check == "config"] == [
        ("ok", "current")]
    obs["started"]["sglang-prefill-i0-r0.service"] = dict(current, pending=True, reason="files changed since it started",
                                                          files=["/etc/sglang/sglang-prefill-i0-r0.env"])
    f = only(check_host("prefill0", host_plan, obs, ctx), "config")[0]
    assert f.severity == "warn" and f.service == "sglang-prefill-i0-r0"
    assert f.found == ("RESTART PENDING: sglang-prefill-i0-r0.service: files changed since it started "
                       "(sglang-prefill-i0-r0.env)")
    assert "run the deployment again" in f.fix


# ------------------------------------------------------------------ aggregation

def test_aggregated_table_names_host_check_found_expected_fix(pd32):
    profile, p = pd32
    ctx = ctx_of(profile, p)
    results = {}
    for host in p["hosts"]:
        obs = healthy(p["hosts"][host], ctx)
        if host == "decode1":
            obs["npu"]["info"]["chips"][3]["processes"] = [{"npu": 1, "chip": 1, "pid": 990711, "name": "python",
                                                           "memory_mb": 7746}]
        if host == "prefill1":
            obs["npu"]["info"]["chips"][2]["health"] = "Warning"
        results[host] = {"findings": [f.as_dict() for f in check_host(host, p["hosts"][host], obs, ctx)]}
    results["router0"] = {"unreachable": True, "msg": "ssh: connect to host router0 port 22: Connection timed out"}
    findings = aggregate(results)
    table = "\n".join(render_table(findings))
    header = table.splitlines()[1]
    for column in ("status", "host", "check", "found", "expected", "how to fix"):
        assert column in header
    assert "decode1" in table and "device_idle" in table and "990711" in table and "no process on the" in table
    assert "router0" in table and "reachable" in table and "Connection timed out" in table
    assert table.index("FAIL") < table.index("WARN")  # failures first
    doc = report(results, profile=profile.id)
    assert (doc["status"], doc["exit_code"]) == ("failures", 2)
    assert doc["counts"]["fail"] == 2 and doc["counts"]["warn"] == 1
    assert {p_["host"] for p_ in doc["problems"]} == {"decode1", "prefill1", "router0"}
    assert doc["hosts"]["prefill0"]["status"] == "ok"


def test_exit_codes_and_missing_results():
    ok = {"h1": {"findings": [{"host": "h1", "check": "port", "severity": "ok", "found": "", "expected": "", "fix": ""}]}}
    assert report(ok)["exit_code"] == 0 and render_table(aggregate(ok)) == ["(no findings)"]
    warn = {"h1": {"findings": [{"host": "h1", "check": "nic", "severity": "warn", "found": "x", "expected": "y",
                                 "fix": "z"}]}}
    assert (report(warn)["status"], report(warn)["exit_code"]) == ("warnings", 1)
    assert report({"h1": None})["exit_code"] == 2
    failed = report({"h1": {"failed": True, "msg": "MODULE FAILURE"}})
    assert failed["exit_code"] == 2 and failed["problems"][0]["check"] == "preflight"


def test_long_cells_wrap_without_losing_text():
    long_fix = "word " * 40
    findings = aggregate({"h": {"findings": [{"host": "h", "check": "model", "severity": "fail", "found": "f",
                                              "expected": "e", "fix": long_fix}]}})
    lines = render_table(findings)
    assert " ".join(" ".join(line.split("|")[6].split()) for line in lines[3:-1]).split() == long_fix.split()


def test_runtime_installed_by_the_roles_is_not_checked_before_start():
    """With sglang_server_install the role installs the runtime after preflight: no probe, no failure."""
    import dataclasses as _dc

    from ansible_collections.ascend.sglang.plugins.module_utils import _preflight as pf

    argv = ["/opt/sglang/bin/python3", "-m", "sglang.launch_server"]
    host_plan = {"services": [{"name": "sglang-mixed-i0-r0", "role": "mixed", "argv": argv}]}
    ctx = pf.Context(releases={"sglang": "0.5.7"}, installed_by_roles=frozenset({"sglang"}))
    assert pf.requirements(host_plan, ctx)["runtimes"] == []
    doctor = _dc.replace(ctx, mode="doctor")
    assert [r["package"] for r in pf.requirements(host_plan, doctor)["runtimes"]] == ["sglang"]


# ------------------------------------------------------------------ container runtime
def test_container_host_checks_engine_image_devices_not_host_cann_or_python():
    profile, p = make_plan(PD32, {"sglang_runtime": "container"}, prefill=2, decode=2, router=1)
    host_plan = p["hosts"]["decode0"]
    ctx = ctx_of(profile, p)
    req = requirements(host_plan, ctx)
    assert req["runtimes"] == [] and not req["toolkit"]
    assert not any(path.endswith("set_env.sh") for path in req["paths"])  # the image brings CANN
    spec = req["container"]
    assert spec["engine"] == "/usr/bin/podman" and spec["image"] == "lmsysorg/sglang:cann8.3.rc2-a3-release20260106"
    assert spec["devices"][:2] == ["/dev/davinci0", "/dev/davinci1"] and "/dev/hisi_hdc" in spec["devices"]
    assert "/usr/local/Ascend/driver" in spec["mounts"] and "/models/m" in spec["mounts"]
    observed = healthy(host_plan, ctx)
    observed["toolkit"] = None
    observed["container"] = {"engine": "/usr/bin/podman", "version": "podman version 4.3.1", "image": "absent",
                             "pullable": True, "pull_error": None,
                             "devices": {d: "char" for d in spec["devices"]},
                             "mounts": {m: "dir" for m in spec["mounts"]}}
    assert problems(check_host("decode0", host_plan, observed, ctx)) == []
    observed["container"] = dict(observed["container"], pullable=False, pull_error="manifest unknown",
                                 devices=dict(observed["container"]["devices"], **{"/dev/davinci3": "missing"}),
                                 mounts=dict(observed["container"]["mounts"], **{"/usr/local/dcmi": "missing"}))
    found = check_host("decode0", host_plan, observed, ctx)
    assert sorted(problems(found)) == [("device", "fail"), ("image", "fail"), ("mount", "fail")]
    assert "manifest unknown" in only(found, "image")[0].found
    observed["container"] = {"engine": None}
    assert problems(check_host("decode0", host_plan, observed, ctx)) == [("container", "fail")]


def test_the_fabric_is_looked_at_where_services_talk_to_other_hosts(pd32):
    """PD servers and ranks of multi-node instances: their NPUs' NICs with the enabled queries; routers and single-node
    mixed servers: none. Off checks are not asked; stack mode looks at the stack alone."""
    profile, p = pd32
    ctx = ctx_of(profile, p)
    req = requirements(p["hosts"]["decode1"], ctx)
    assert req["fabric"] == {"devices": list(range(16)), "queries": ["link", "net_health", "ip", "tls"]}
    assert req["weights"] == {"paths": ["/models/m"], "full": False}
    assert requirements(p["hosts"]["router0"], ctx)["fabric"] is None
    some_off = ctx_of(profile, p, preflight={"checks": {"npu_tls": "off", "npu_link": "off"}, "weights": "full"})
    req = requirements(p["hosts"]["prefill0"], some_off)
    assert req["fabric"]["queries"] == ["net_health", "ip"] and req["weights"]["full"]
    assert "fabric" not in requirements(p["hosts"]["decode1"], ctx_of(profile, p, mode="stack"))
    mixed_profile, mixed = make_plan("qwen3_32b_a3_2c_mixed_2k_2k_50ms", mixed=1, router=1)
    assert requirements(mixed["hosts"]["mixed0"], ctx_of(mixed_profile, mixed))["fabric"] is None
