"""The network checks: the NIC of HCCL/GLOO (sglang_nic), the planned ports, rank-0 reachability and routes.  Pure
Python, no host, no Ansible."""

from __future__ import annotations

import pytest

from ansible_collections.ascend.sglang.plugins.module_utils.checks._preflight import check_host
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._planner import plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import load_profile
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._topology import build_inventory
from ansible_collections.ascend.sglang.tests.unit.preflight_hosts import PD32, ctx_of, healthy, only, problems


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


def test_nic_of_a_single_node_rank_is_checked_when_given(pd32):
    """A single-node prefill rank with sglang_nic runs HCCL/GLOO on it: the NIC must exist and carry the address."""
    profile, p = pd32
    ctx = ctx_of(profile, p)
    host_plan = p["hosts"]["prefill0"]
    assert host_plan["services"][0]["nnodes"] == 1 and host_plan["services"][0]["env"]["HCCL_SOCKET_IFNAME"] == "ens1"
    obs = healthy(host_plan, ctx)
    assert problems(check_host("prefill0", host_plan, obs, ctx)) == []
    obs["nics"] = {"lo": ["127.0.0.1"], "eth0": ["10.0.1.1"]}
    f = only(check_host("prefill0", host_plan, obs, ctx), "nic")[0]
    assert f.severity == "fail" and "no interface ens1" in f.found and "10.0.1.1" in f.expected


def test_lo_of_a_single_node_rank_without_nic_is_not_checked():
    groups = {"prefill": ["prefill0"], "decode": ["decode0", "decode1"], "router": ["router0"]}
    hostvars = {"prefill0": {"sglang_host_ip": "10.0.1.1"}, "router0": {"sglang_host_ip": "10.0.9.1"},
                "decode0": {"sglang_host_ip": "10.0.2.1", "sglang_nic": "ens1"},
                "decode1": {"sglang_host_ip": "10.0.2.2", "sglang_nic": "ens1"}}
    profile = load_profile(PD32)
    p = plan(profile, build_inventory(groups, hostvars, {"sglang_model_path": "/models/m"})).as_dict()
    ctx = ctx_of(profile, p)
    host_plan = p["hosts"]["prefill0"]
    assert host_plan["services"][0]["env"]["HCCL_SOCKET_IFNAME"] == "lo"
    obs = healthy(host_plan, ctx)
    assert [f for f in check_host("prefill0", host_plan, obs, ctx) if f.check == "nic"] == []


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
