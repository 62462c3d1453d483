"""The cpu_affinity host check: the inventory's pinning (sglang_npu_cpus, in the plan) against what the host says
(npu-smi info -t topo, its online CPUs). Pure Python on real plans and the published A2 topology."""

from __future__ import annotations

import pytest

from ansible_collections.ascend.sglang.plugins.module_utils.npu._npu_topo import format_cpu_list, parse_topo
from ansible_collections.ascend.sglang.plugins.module_utils.checks._preflight import check_host
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._planner import plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import load_profile
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._topology import build_inventory
from ansible_collections.ascend.sglang.tests.unit.preflight_hosts import A2_MIXED, FIXTURES, ctx_of, healthy

TOPO = {str(n): format_cpu_list(c) for n, c in parse_topo((FIXTURES / "topo_a2_910b3_x8.txt").read_text()).items()}
ONLINE = "0-191"


def packed(npu_cpus=None):
    """Two replicas of the A2 4-of-8 profile on one host, pinned with ``npu_cpus`` (None: unpinned)."""
    profile = load_profile(A2_MIXED)
    host = {"sglang_host_ip": "10.0.1.1", "sglang_nic": "ens1", "sglang_instances_per_host": 2}
    if npu_cpus is not None:
        host["sglang_npu_cpus"] = npu_cpus
    p = plan(profile, build_inventory({"mixed": ["mixed0"]}, {"mixed0": host},
                                      {"sglang_model_path": "/models/m", "sglang_draft_model_path": "/models/d"})).as_dict()
    return profile, p


def findings(profile, p, topo=TOPO, online=ONLINE, error=None):
    """The cpu_affinity findings of the host of ``p`` that observed this topology and these online CPUs."""
    host_plan = p["hosts"]["mixed0"]
    ctx = ctx_of(profile, p)
    obs = healthy(host_plan, ctx, "a2_910b3_x8_healthy.txt")
    obs["topo"] = {"npus": topo, "error": error}
    obs["cpus_online"] = online
    return [f for f in check_host("mixed0", host_plan, obs, ctx) if f.check == "cpu_affinity"]


def affinity(*args, **kwargs):
    return [(f.service, f.severity, f.found) for f in findings(*args, **kwargs)]


def test_pinned_as_the_topology_says_is_ok():
    got = affinity(*packed({int(k): v for k, v in TOPO.items()}))
    assert got == [("sglang-mixed-i0-r0", "ok", "pinned to CPUs 96-119,144-167"),
                   ("sglang-mixed-i1-r0", "ok", "pinned to CPUs 0-23,48-71")]


def test_unpinned_where_the_topology_knows_warns_with_the_value_to_set():
    got = affinity(*packed())
    found = findings(*packed())
    assert got == [
        ("sglang-mixed-i0-r0", "warn", "runs unpinned; npu-smi info -t topo puts CPUs 96-119,144-167 near NPUs 0-3"),
        ("sglang-mixed-i1-r0", "warn", "runs unpinned; npu-smi info -t topo puts CPUs 0-23,48-71 near NPUs 4-7")]
    assert ("set sglang_npu_cpus: {0: '144-167', 1: '144-167', 2: '96-119', 3: '96-119', 4: '0-23', 5: '0-23', "
            "6: '48-71', 7: '48-71'} for this host") in found[0].fix


def test_unpinned_without_topology_warns_with_the_reason():
    got = affinity(*packed(), topo={}, error="`npu-smi info -t topo` exit 1: unknown type topo")
    assert [(service, severity) for service, severity, found in got] == [("sglang-mixed-i0-r0", "warn"),
                                                                         ("sglang-mixed-i1-r0", "warn")]
    assert got[0][2] == "runs unpinned: `npu-smi info -t topo` exit 1: unknown type topo"


def test_pinned_elsewhere_than_the_topology_warns():
    other = {n: "0-1" for n in range(8)}
    got = affinity(*packed(other))
    assert got[0] == ("sglang-mixed-i0-r0", "warn", "pinned to CPUs 0-1; npu-smi info -t topo puts 96-119,144-167 "
                                                    "near NPUs 0-3")


@pytest.mark.parametrize("online, severity, found", [
    ("0-1", "fail", "pinned to CPUs 96-119,144-167, none of them online (online: 0-1)"),
    ("0-119", "warn", "pinned to CPUs 96-119,144-167, of which 144-167 are not online (online: 0-119)"),
])
def test_pinned_to_cpus_the_host_does_not_have(online, severity, found):
    got = affinity(*packed({int(k): v for k, v in TOPO.items()}), online=online)
    assert got[0] == ("sglang-mixed-i0-r0", severity, found)


def test_pinned_without_a_topology_to_compare_is_ok():
    got = affinity(*packed({n: "0-1" for n in range(8)}), topo={}, online="0-3")
    assert got[0] == ("sglang-mixed-i0-r0", "ok", "pinned to CPUs 0-1 (npu-smi info -t topo gives none to compare)")


def test_a_topology_with_other_rows_than_devices_is_not_mapped():
    """Four rows for the eight devices npu-smi info lists (one per card where a card would hold two dies): the rows are
    not devices, so nothing is compared or suggested."""
    half = {n: TOPO[n] for n in ("0", "1", "2", "3")}
    got = affinity(*packed(), topo=half)
    assert got[0] == ("sglang-mixed-i0-r0", "warn", "runs unpinned: npu-smi info -t topo lists 4 NPUs for the 8 "
                                                    "devices of npu-smi info: its rows are not the devices "
                                                    "--base-gpu-id counts")
