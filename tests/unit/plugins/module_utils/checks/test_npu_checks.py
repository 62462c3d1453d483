"""The NPU checks: wrong generation, too few devices, busy or unhealthy devices, low HBM, npu-smi missing.  Pure
Python, no host, no Ansible; the npu-smi output is published samples (tests/fixtures/npu_smi)."""

from __future__ import annotations

from ansible_collections.ascend.sglang.plugins.module_utils.checks._findings import Context
from ansible_collections.ascend.sglang.plugins.module_utils.checks._preflight import check_host, requirements
from ansible_collections.ascend.sglang.tests.unit.preflight_hosts import A2_MIXED, ctx_of, healthy, only, problems


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


def test_each_packed_replica_is_checked_on_its_own_slice_and_ports():
    """Dense packing (sglang_instances_per_host: 2 on the A2 4-of-8 profile): a foreign process on one NPU of replica
    1's slice fails replica 1 only, naming that device; replica 0's own process on its slice is not foreign; a
    foreign listener on replica 1's port fails replica 1's port check only."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._planner import plan
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import load_profile
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._topology import build_inventory

    profile = load_profile(A2_MIXED)
    inventory = build_inventory(
        {"mixed": ["mixed0"]},
        {"mixed0": {"sglang_host_ip": "10.0.1.1", "sglang_nic": "ens1", "sglang_instances_per_host": 2}},
        {"sglang_model_path": "/models/m", "sglang_draft_model_path": "/models/d"})
    p = plan(profile, inventory).as_dict()
    host_plan = p["hosts"]["mixed0"]
    by_name = {s["name"]: s for s in host_plan["services"]}
    assert {n: s["devices"] for n, s in by_name.items()} == {
        "sglang-mixed-i0-r0": [0, 1, 2, 3], "sglang-mixed-i1-r0": [4, 5, 6, 7]}
    ctx = ctx_of(profile, p)
    obs = healthy(host_plan, ctx, "a2_910b3_x8_healthy.txt")
    chips = obs["npu"]["info"]["chips"]
    chips[1]["processes"] = [{"npu": 1, "chip": 0, "pid": 700, "name": "python3", "memory_mb": 50000}]
    chips[1]["hbm_used_mb"] = 53000
    chips[6]["processes"] = [{"npu": 6, "chip": 0, "pid": 4242, "name": "python3", "memory_mb": 30000}]
    chips[6]["hbm_used_mb"] = 33440
    obs["owners"] = {"700": "sglang-mixed-i0-r0.service", "4242": "user@1000.service"}
    i1_port = by_name["sglang-mixed-i1-r0"]["listens"]["http"]
    obs["listeners"] = [{"address": "0.0.0.0", "port": i1_port, "pids": [4242]}]
    findings = check_host("mixed0", host_plan, obs, ctx)
    busy = only(findings, "device_idle")
    assert [(b.service, b.found) for b in busy] == [
        ("sglang-mixed-i1-r0", "device 6 (NPU 6 chip 0) held by pid 4242 python3 (30000 MB) (user@1000.service)")]
    assert {f.service for f in only(findings, "hbm_free")} == {"sglang-mixed-i1-r0"}
    port = only(findings, "port")
    assert [(f.service, f.severity) for f in port] == [("sglang-mixed-i1-r0", "fail")]
    assert f"{i1_port} already in use on 0.0.0.0 by pid 4242 (user@1000.service)" == port[0].found
    assert {f.service for f in findings if f.severity != "ok"} == {"sglang-mixed-i1-r0"}
