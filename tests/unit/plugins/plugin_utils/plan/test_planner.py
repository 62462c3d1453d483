"""Planner unit tests: pure Python, no Ansible."""

from __future__ import annotations

import dataclasses
import pathlib

import pytest
import yaml

from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import Collector, PlanError
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._container import ServiceContainer, Settings
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._planner import (
    DEFAULT_WATCHDOG_PORT, bench_argv, plan, render_flags,
)
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import PLAN_VERSION, Plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import available_profiles, load_profile
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._topology import build_inventory, host_facts
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._watchdog import Evidence, RankWatch, RouterWatch

PD32 = "deepseek_r1_a3_32c_pd_6k_1k6_20ms"  # 2 x 1-node prefill, 1 x 2-node decode, router
PD24 = "qwen3_235b_a3_24c_pd_3k5_1k5_50ms"  # EAGLE3 + expert location, 1 prefill, 2-node decode
MIXED_A3 = "qwen3_32b_a3_2c_mixed_3k5_1k5_50ms"  # single-node, tp 4 (2 cards)
MIXED_2NODE = "qwen3_480b_a3_16c_mixed_3k5_1k5_50ms"
QWEN35 = "qwen3_5_397b_a3_8c_mixed_16k_1k_50ms"  # server port 6688, the router's default port
A2_MIXED = "qwen3_32b_a2_8c_mixed_2k_2k_50ms"  # A2, --base-gpu-id 4, --tp-size 4, EAGLE3 draft, modelslim


def inventory(prefill=0, decode=0, mixed=0, router=0, nic="ens1", **variables):
    groups, hostvars = {}, {}
    for role, count, net in (("prefill", prefill, 1), ("decode", decode, 2), ("mixed", mixed, 3), ("router", router, 9)):
        groups[role] = [f"{role}{i}" for i in range(count)]
        for i, name in enumerate(groups[role]):
            hostvars[name] = {"ansible_host": f"192.168.{net}.{i + 1}", "sglang_host_ip": f"10.{net}.{i // 250}.{i % 250 + 1}"}
            if nic:
                hostvars[name]["sglang_nic"] = nic
    variables.setdefault("sglang_model_path", "/models/m")
    variables.setdefault("sglang_draft_model_path", "/models/draft")
    variables.setdefault("sglang_init_expert_location", "/models/experts.pt")
    return build_inventory(groups, hostvars, variables)


def services(p, role=None):
    return [s for h in p.hosts.values() for s in h.services if role in (None, s.role)]


def flag(argv, name):
    i = argv.index(name)
    return argv[i + 1]


def findings_of(exc):
    return [(f.group, f.host, f.variable) for f in exc.value.findings]


def test_single_node_ranks_use_the_given_nic_and_lo_without_one():
    """SGLang's current pages set HCCL_SOCKET_IFNAME/GLOO_SOCKET_IFNAME to <network-interface> on single-node PD
    servers too: a host's sglang_nic is used whatever the instance's size; a single-node host without one gets lo, as
    the January documents set it."""
    inv = inventory(prefill=2, decode=2, router=1, nic=None)
    for name, nic in (("prefill0", "enp189s0f0"), ("decode0", "ib0"), ("decode1", "ib0")):
        inv.hosts[name] = dataclasses.replace(inv.hosts[name], nic=nic)
    p = plan(load_profile(PD32), inv)
    env = {s.inventory_host: (s.env["HCCL_SOCKET_IFNAME"], s.env["GLOO_SOCKET_IFNAME"])
           for s in services(p) if s.role != "router"}
    assert env == {"prefill0": ("enp189s0f0", "enp189s0f0"), "prefill1": ("lo", "lo"),
                   "decode0": ("ib0", "ib0"), "decode1": ("ib0", "ib0")}


def test_pd32_layout_ranks_ports_and_addresses():
    p = plan(load_profile(PD32), inventory(prefill=2, decode=2, router=1))
    prefill = services(p, "prefill")
    decode = services(p, "decode")
    assert [(s.name, s.node_rank, s.nnodes) for s in prefill] == [
        ("sglang-prefill-i0-r0", 0, 1), ("sglang-prefill-i1-r0", 0, 1)]
    assert [s.bootstrap_port for s in prefill] == [8998, 8999]
    assert [flag(s.argv, "--disaggregation-bootstrap-port") for s in prefill] == ["8998", "8999"]
    assert [(s.name, s.node_rank) for s in decode] == [("sglang-decode-i0-r0", 0), ("sglang-decode-i0-r1", 1)]
    assert {flag(s.argv, "--dist-init-addr") for s in decode} == {"10.2.0.1:5000"}
    assert [flag(s.argv, "--node-rank") for s in decode] == ["0", "1"]
    assert all(flag(s.argv, "--nnodes") == "2" for s in decode)
    assert all(s.env["ASCEND_MF_STORE_URL"] == "tcp://10.1.0.1:24669" for s in prefill + decode)
    # sglang_nic is set on every host here: single-node prefill ranks use it too.
    assert all(s.env["HCCL_SOCKET_IFNAME"] == s.env["GLOO_SOCKET_IFNAME"] == "ens1" for s in prefill)
    assert all(s.env["HCCL_SOCKET_IFNAME"] == "ens1" for s in decode)
    assert decode[0].health_url == "http://10.2.0.1:8001/health" and decode[1].health_url is None
    router = services(p, "router")[0]
    argv = router.argv[3:]
    assert argv[argv.index("--prefill"):argv.index("--host")] == [
        "--prefill", "http://10.1.0.1:8000", "8998", "--prefill", "http://10.1.0.2:8000", "8999",
        "--decode", "http://10.2.0.1:8001"]
    assert router.depends_on == ["sglang-prefill-i0-r0", "sglang-prefill-i1-r0", "sglang-decode-i0-r0"]
    assert p.bench["host"] == "router0" and flag(p.bench["argv"], "--port") == "6688"


def test_fleet_of_prefill_instances_gets_consecutive_bootstrap_ports():
    p = plan(load_profile(PD32), inventory(prefill=4, decode=4, router=1))
    assert [s.bootstrap_port for s in services(p, "prefill")] == [8998, 8999, 9000, 9001]
    decode = services(p, "decode")
    assert [(s.instance, s.node_rank) for s in decode] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert [flag(s.argv, "--dist-init-addr") for s in decode] == ["10.2.0.1:5000"] * 2 + ["10.2.0.3:5000"] * 2
    router_argv = services(p, "router")[0].argv
    assert router_argv.count("--prefill") == 4 and router_argv.count("--decode") == 2


def test_mixed_fleet_behind_a_router_uses_worker_urls():
    p = plan(load_profile(MIXED_A3), inventory(mixed=6, router=1))
    mixed = services(p, "mixed")
    assert len(mixed) == 6 and {s.nnodes for s in mixed} == {1}
    assert [s.instance for s in mixed] == list(range(6))
    router = services(p, "router")[0]
    assert "--pd-disaggregation" not in router.argv
    i = router.argv.index("--worker-urls")
    assert router.argv[i + 1:i + 7] == [f"http://10.3.0.{k}:7239" for k in range(1, 7)]
    assert p.bench["host"] == "router0"


def test_mixed_without_router_is_benchmarked_on_its_own_address():
    p = plan(load_profile(MIXED_A3), inventory(mixed=1))
    assert p.bench["host"] == "mixed0"
    assert flag(p.bench["argv"], "--host") == "10.3.0.1" and flag(p.bench["argv"], "--port") == "7239"


def test_two_node_mixed_instance():
    p = plan(load_profile(MIXED_2NODE), inventory(mixed=2))
    mixed = services(p, "mixed")
    assert [flag(s.argv, "--dist-init-addr") for s in mixed] == ["10.3.0.1:5000", "10.3.0.1:5000"]
    assert [flag(s.argv, "--host") for s in mixed] == ["10.3.0.1", "10.3.0.2"]
    assert flag(mixed[0].argv, "--tp-size") == "32"


def test_sixty_four_node_fleet():
    p = plan(load_profile(PD32), inventory(prefill=32, decode=32, router=1))
    prefill, decode = services(p, "prefill"), services(p, "decode")
    assert len(prefill) == 32 and len(decode) == 32
    assert len({s.name for s in prefill + decode}) == 64
    for s in decode:
        rank0 = decode[s.instance * 2]
        assert flag(s.argv, "--dist-init-addr") == f"{rank0.host}:5000"
        assert s.node_rank == decode.index(s) % 2
    assert services(p, "router")[0].argv.count("--decode") == 16
    assert services(p, "router")[0].argv.count("--prefill") == 32


def test_host_address_prefers_sglang_host_ip_then_ansible_host_then_name():
    groups = {"mixed": ["a", "b", "c"], "router": []}
    hostvars = {"a": {"ansible_host": "192.168.0.1", "sglang_host_ip": "10.0.0.1"},
                "b": {"ansible_host": "192.168.0.2"},
                "c": {}}
    p = plan(load_profile(MIXED_A3), build_inventory(groups, hostvars, {"sglang_model_path": "/m",
                                                                        "sglang_draft_model_path": "/d"}))
    assert [flag(s.argv, "--host") for s in services(p, "mixed")] == ["10.0.0.1", "192.168.0.2", "c"]


def test_uneven_host_count_names_group_host_and_variable():
    with pytest.raises(PlanError) as exc:
        plan(load_profile(PD32), inventory(prefill=2, decode=3, router=1))
    assert ("decode", "decode2", "roles.decode.nnodes") in findings_of(exc)
    assert "3 hosts is not a multiple" in str(exc.value)


def test_multi_node_instance_needs_a_nic_per_host():
    with pytest.raises(PlanError) as exc:
        plan(load_profile(PD32), inventory(prefill=2, decode=2, router=1, nic=None))
    assert ("decode", "decode0", "sglang_nic") in findings_of(exc)
    assert ("decode", "decode1", "sglang_nic") in findings_of(exc)
    # single-node prefill instances use lo and need none
    assert not any(group == "prefill" for group, _unused, _unused in findings_of(exc))


def test_missing_model_and_draft_paths_are_named():
    with pytest.raises(PlanError) as exc:
        plan(load_profile(PD24), inventory(prefill=1, decode=2, router=1, sglang_model_path="",
                                           sglang_draft_model_path=None))
    variables = {v for _unused, _unused, v in findings_of(exc)}
    assert {"sglang_model_path", "sglang_draft_model_path"} <= variables


def test_expert_location_comes_from_the_inventory():
    p = plan(load_profile(PD24), inventory(prefill=1, decode=2, router=1))
    assert flag(services(p, "prefill")[0].argv, "--init-expert-location") == "/models/experts.pt"


def test_host_in_two_groups_and_duplicate_addresses_are_rejected():
    inv = inventory(prefill=2, decode=2, router=1)
    inv.groups["decode"][0] = "prefill1"
    with pytest.raises(PlanError) as exc:
        plan(load_profile(PD32), inv)
    assert ("decode", "prefill1", None) in findings_of(exc)


def _with_groups(extra: dict) -> dict:
    """PD32's groups (as Ansible gives them: a group lists every host of its children) with the operator's others."""
    return {"prefill": ["p0", "p1"], "decode": ["d0", "d1"], "router": ["r0"], **extra}


def _pd32_hostvars(*spare: str) -> dict:
    return {name: {"sglang_host_ip": f"10.0.0.{i + 1}", "sglang_nic": "ens1"}
            for i, name in enumerate(["p0", "p1", "d0", "d1", "r0", *spare])}


def test_a_misspelled_role_group_is_named_with_its_hosts():
    groups = {"prefil": ["p0", "p1"], "decode": ["d0", "d1"], "router": ["r0"],
              "all": ["p0", "p1", "d0", "d1", "r0"], "ungrouped": []}
    with pytest.raises(PlanError) as exc:
        plan(load_profile(PD32), build_inventory(groups, _pd32_hostvars(), {"sglang_model_path": "/m"}))
    # One finding: the prefill group is not also called empty.
    assert [str(f) for f in exc.value.findings] == [
        "group 'prefil': is not a group of this collection (prefill, decode, mixed, router): its hosts p0, p1 are "
        "planned nowhere; did you mean 'prefill'?"]


@pytest.mark.parametrize("extra", [
    {"all": ["p0", "p1", "d0", "d1", "r0", "mon0", "spare0"], "ungrouped": ["spare0"], "sglang_monitoring": ["mon0"]},
    {"site_dc1": ["p0", "d0"], "gpu_nodes": ["spare0"], "models": ["spare0"]},  # the operator's own groups
    {"prefill_a3": ["spare0"], "mixed_a2": ["spare0"]},                           # not one typo away from a role
    {"decoder": ["d0", "d1"], "Prefill": ["p0"]},                                 # close, but hosts planned anyway
])
def test_other_groups_of_the_operator_are_not_refused(extra):
    inv = build_inventory(_with_groups(extra), _pd32_hostvars("mon0", "spare0"), {"sglang_model_path": "/m"})
    assert plan(load_profile(PD32), inv).hosts.keys() == {"p0", "p1", "d0", "d1", "r0"}


def test_pd_profile_needs_router_and_no_mixed_hosts():
    with pytest.raises(PlanError) as exc:
        plan(load_profile(PD32), inventory(prefill=2, decode=2, mixed=1))
    groups = {g for g, _unused, _unused in findings_of(exc)}
    assert {"router", "mixed"} <= groups


def test_mixed_profile_rejects_prefill_hosts():
    with pytest.raises(PlanError) as exc:
        plan(load_profile(MIXED_A3), inventory(mixed=1, prefill=1))
    assert ("prefill", "prefill0", None) in findings_of(exc)


def test_tp_must_match_npus_per_node():
    inv = inventory(prefill=2, decode=2, router=1, sglang_overrides={"decode": {"args": {"--tp-size": 16}}})
    with pytest.raises(PlanError) as exc:
        plan(load_profile(PD32), inv)
    assert ("decode", None, "--tp-size") in findings_of(exc)
    assert "16 NPUs per A3 node x 2 node(s) = 32" in str(exc.value)


def test_pipeline_parallelism_multiplies_the_devices_of_an_instance():
    """--tp-size 4 --pp-size 8 over 2 nodes (GLM-5.1's prefill on the current pages) is 16 NPUs on each node, not
    tp / nnodes = 2; a layout whose tp x pp does not fill its nodes is refused, naming both."""
    # (DP attention splits the TP group, and DeepEP's dispatch buffer is sized per TP rank: both follow tp.)
    pipeline = {"args": {"--tp-size": 4, "--pp-size": 8, "--dp-size": 4},
                "env": {"SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK": "32"}}
    inv = inventory(prefill=2, decode=2, router=1, sglang_overrides={"decode": pipeline})
    p = plan(load_profile(PD32), inv)
    decode = services(p, "decode")
    assert [s.node_rank for s in decode] == [0, 1] and all(s.devices == list(range(16)) for s in decode)
    assert flag(decode[1].argv, "--pp-size") == "8" and flag(decode[1].argv, "--nnodes") == "2"
    pipeline["args"]["--pp-size"] = 4
    inv = inventory(prefill=2, decode=2, router=1, sglang_overrides={"decode": pipeline})
    with pytest.raises(PlanError) as exc:
        plan(load_profile(PD32), inv)
    assert "--tp-size 4 x --pp-size 4 = 16 NPUs does not match 16 NPUs per A3 node x 2 node(s) = 32" in str(exc.value)


def test_pd_on_a2_moves_the_kv_cache_over_device_rdma():
    """A2 prefill and decode servers get ASCEND_MF_TRANSFER_PROTOCOL=device_rdma (A3 keeps its default); another
    value is refused naming the role and the override."""
    a3 = load_profile(PD32)
    # The same layout on A2 nodes of 8 NPUs (half the tensor parallelism, DP attention and DeepEP sized to it).
    halves = {"prefill": ({"--tp-size": 8}, {}),
              "decode": ({"--tp-size": 16, "--dp-size": 8}, {"SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK": "24"})}
    a2 = dataclasses.replace(a3, hardware="A2", roles={**a3.roles, **{
        role: dataclasses.replace(a3.roles[role], args={**a3.roles[role].args, **args},
                                  env={**a3.roles[role].env, **env})
        for role, (args, env) in halves.items()}})
    inv = inventory(prefill=2, decode=2, router=1, sglang_hardware="A2")
    p = plan(a2, inv)
    for svc in services(p, "prefill") + services(p, "decode"):
        assert svc.env["ASCEND_MF_TRANSFER_PROTOCOL"] == "device_rdma"
    a3_plan = plan(a3, inventory(prefill=2, decode=2, router=1))
    assert all("ASCEND_MF_TRANSFER_PROTOCOL" not in svc.env for svc in services(a3_plan))
    bad = inventory(prefill=2, decode=2, router=1, sglang_hardware="A2",
                    sglang_overrides={"decode": {"env": {"ASCEND_MF_TRANSFER_PROTOCOL": "host_rdma"}}})
    with pytest.raises(PlanError) as exc:
        plan(a2, bad)
    assert ("decode", None, "sglang_overrides.decode.env.ASCEND_MF_TRANSFER_PROTOCOL") in findings_of(exc)


def test_fewer_devices_only_where_the_profile_says_so():
    profile = load_profile(MIXED_A3)
    assert profile.roles["mixed"].devices_per_node == 4
    inv = inventory(mixed=1, sglang_overrides={"mixed": {"args": {"--tp-size": 8}}})
    with pytest.raises(PlanError):
        plan(profile, inv)


def test_override_changes_only_the_role_it_names():
    base = plan(load_profile(PD32), inventory(prefill=2, decode=2, router=1))
    changed = plan(load_profile(PD32), inventory(prefill=2, decode=2, router=1, sglang_overrides={
        "decode": {"args": {"--max-running-requests": 48, "--tokenizer-worker-num": None},
                   "env": {"HCCL_BUFFSIZE": "700"}}}))
    before = {s.name: (s.argv, s.env) for s in services(base)}
    after = {s.name: (s.argv, s.env) for s in services(changed)}
    differing = sorted(n for n in before if before[n] != after[n])
    assert differing == ["sglang-decode-i0-r0", "sglang-decode-i0-r1"]
    decode = services(changed, "decode")[0]
    assert flag(decode.argv, "--max-running-requests") == "48"
    assert "--tokenizer-worker-num" not in decode.argv and decode.env["HCCL_BUFFSIZE"] == "700"


def test_bad_override_flag_is_rejected_with_its_variable():
    inv = inventory(prefill=2, decode=2, router=1, sglang_overrides={"decode": {"args": {"-max-running": 4}},
                                                                     "decoder": {}})
    with pytest.raises(PlanError) as exc:
        plan(load_profile(PD32), inv)
    variables = {v for _unused, _unused, v in findings_of(exc)}
    assert "sglang_overrides.decode.args.-max-running" in variables and "sglang_overrides.decoder" in variables


def test_router_on_a_server_host_with_the_same_port_clashes():
    inv = inventory(mixed=1, router=0)
    inv.groups["router"].append("mixed0")
    with pytest.raises(PlanError) as exc:
        plan(load_profile(QWEN35), inv)
    assert ("router", "mixed0", "port") in findings_of(exc)


def test_every_problem_is_reported_at_once():
    with pytest.raises(PlanError) as exc:
        plan(load_profile(PD32), inventory(prefill=2, decode=3, router=0, sglang_model_path=None))
    assert len(exc.value.findings) >= 3
    assert str(exc.value).startswith("sglang plan rejected (")


def test_release_override():
    p = plan(load_profile(PD32), inventory(prefill=2, decode=2, router=1, sglang_release="0.5.9"))
    assert p.releases == {"sglang": "0.5.9", "sglang_router": "0.3.0"}


def test_plan_is_json_serialisable():
    import json

    p = plan(load_profile(PD32), inventory(prefill=2, decode=2, router=1))
    data = json.loads(json.dumps(p.as_dict()))
    assert set(data["hosts"]) == {"prefill0", "prefill1", "decode0", "decode1", "router0"}
    assert data["hosts"]["router0"]["host_tuning"] == {} and data["hosts"]["router0"]["cann"] == {}


@pytest.mark.parametrize("profile_id", available_profiles())
@pytest.mark.parametrize("runtime", ["host", "container"])
def test_plan_round_trips_through_its_versioned_json_form(profile_id, runtime):
    import json

    profile = load_profile(profile_id)
    counts = {role: profile.roles[role].nnodes * 2 for role in profile.server_roles}
    variables = {"sglang_runtime": "container", "sglang_container_image": "sglang:x"} if runtime == "container" else {}
    p = plan(profile, inventory(router=1, **counts, **variables))
    data = json.loads(json.dumps(p.as_dict()))
    assert data["plan_version"] == PLAN_VERSION
    back = Plan.from_dict(data)
    assert back == p
    # The typed parts come back typed, and give the same dict form again.
    for svc in services(back):
        assert isinstance(svc.watchdog, RouterWatch if svc.role == "router" else RankWatch)
        assert (svc.container is None) == (runtime == "host")
        assert svc.container is None or isinstance(svc.container, ServiceContainer)
    assert back.container is None if runtime == "host" else isinstance(back.container, Settings)
    assert back.as_dict() == data
    with pytest.raises(ValueError, match="run playbooks/plan.yml again"):
        Plan.from_dict(dict(data, plan_version=PLAN_VERSION - 1))


def test_dict_form_of_the_watchdog_facts_and_the_container():
    """The typed parts keep the keys the roles, templates and modules read."""
    p = plan(load_profile(PD32), inventory(prefill=2, decode=2, router=1, sglang_runtime="container",
                                           sglang_container_image="sglang:x")).as_dict()
    byname = {s["name"]: s for h in p["hosts"].values() for s in h["services"]}
    rank = byname["sglang-decode-i0-r1"]["watchdog"]
    assert rank == {"instance_label": "decode instance 0", "health_url": "http://10.2.0.1:8001/health_generate",
                    "members": [{"host": "decode0", "service": "sglang-decode-i0-r0", "node_rank": 0},
                                {"host": "decode1", "service": "sglang-decode-i0-r1", "node_rank": 1}],
                    "evidence": {"address": "10.2.0.1", "port": 8990, "url": "http://10.2.0.1:8990/rank0"}}
    workers = byname["sglang-router-i0"]["watchdog"]["workers"]
    assert set(byname["sglang-router-i0"]["watchdog"]) == {"router_url", "workers"}
    # bootstrap_port only where there is one (prefill), as the router's registration takes it.
    assert [w.get("bootstrap_port") for w in workers] == [8998, 8999, None]
    assert "bootstrap_port" not in workers[2] and workers[0]["worker_type"] == "prefill"
    assert list(byname["sglang-decode-i0-r0"]["container"]) == [
        "engine", "image", "name", "npus", "devices", "mounts", "visible_devices", "env_names", "engine_path", "run",
        "remove", "from_archive"]
    assert all(isinstance(v, list) for k, v in byname["sglang-decode-i0-r0"]["container"].items()
               if k in ("npus", "devices", "mounts", "env_names", "run", "remove"))
    assert p["container"] == {"engine": "podman", "image": "sglang:x", "shm_size": "16g", "ascend_runtime": False,
                              "image_archive": None, "engine_path": "/usr/bin/podman"}


def test_each_service_names_its_host_interpreter():
    """The interpreter the argv starts with, so that no consumer reads argv[0]; none in the container runtime."""
    p = plan(load_profile(PD32), inventory(prefill=2, decode=2, router=1, sglang_python="/opt/sglang/bin/python",
                                           sglang_router_python="/opt/router/bin/python"))
    for svc in services(p):
        assert svc.python == svc.argv[0]
        assert svc.python == ("/opt/router/bin/python" if svc.role == "router" else "/opt/sglang/bin/python")
    contained = plan(load_profile(PD32), inventory(prefill=2, decode=2, router=1, sglang_runtime="container",
                                                   sglang_container_image="sglang:x"))
    assert all(svc.python is None for svc in services(contained))


@pytest.mark.parametrize("profile_id", available_profiles())
def test_bench_structured_form_builds_its_argv(profile_id):
    profile = load_profile(profile_id)
    counts = {role: profile.roles[role].nnodes for role in profile.server_roles}
    bench = plan(profile, inventory(router=1, sglang_python="/opt/py", **counts)).bench
    assert bench["python"] == "/opt/py" and bench["module"] == "sglang.bench_serving"
    assert bench["argv"] == bench_argv(bench["python"], bench["module"], bench["flags"])
    assert bench["argv"][:3] == ["/opt/py", "-m", "sglang.bench_serving"]
    assert all(isinstance(flag, str) and flag.startswith("--") and isinstance(values, list)
               for flag, values in bench["flags"])


def test_bench_flags_keep_order_bare_flags_and_values():
    bench = plan(load_profile(PD32), inventory(prefill=2, decode=2, router=1)).bench
    assert bench["flags"][:4] == [["--dataset-name", ["random"]], ["--backend", ["sglang"]], ["--host", ["127.0.0.1"]],
                                  ["--port", ["6688"]]]
    # A bare flag has no value, a list several; an expanding placeholder repeats its flag (the router's upstreams).
    args = {"--a": True, "--b": ["1", "2"], "--prefill": "{prefill_upstreams}", "--c": "{port}"}
    flags = render_flags(args, {"port": 80}, {"prefill_upstreams": [["http://p0", "8998"], ["http://p1", "8999"]]})
    assert flags == [["--a", []], ["--b", ["1", "2"]], ["--prefill", ["http://p0", "8998"]],
                     ["--prefill", ["http://p1", "8999"]], ["--c", ["80"]]]
    assert bench_argv("py", "m", flags) == ["py", "-m", "m", "--a", "--b", "1", "2", "--prefill", "http://p0", "8998",
                                            "--prefill", "http://p1", "8999", "--c", "80"]


def test_services_carry_devices_model_paths_peers_and_worker_registration():
    p = plan(load_profile(PD32), inventory(prefill=2, decode=2, router=1))
    byname = {s.name: s for s in services(p)}
    prefill0, prefill1 = byname["sglang-prefill-i0-r0"], byname["sglang-prefill-i1-r0"]
    decode0, decode1 = byname["sglang-decode-i0-r0"], byname["sglang-decode-i0-r1"]
    router = byname["sglang-router-i0"]
    assert prefill0.devices == decode1.devices == list(range(16)) and router.devices == []
    assert [(m["path"], m["kind"]) for m in prefill0.model_paths] == [
        ("/models/m", "dir"), ("/models/m/config.json", "file"), ("/models/m/quant_model_description.json", "file")]
    store = {"address": "10.1.0.1", "port": 24669, "purpose": "MemFabric store (ASCEND_MF_STORE_URL)"}
    assert prefill0.peers == [] and prefill1.peers == decode0.peers == [store]
    assert decode1.peers == [{"address": "10.2.0.1", "port": 5000, "purpose": "dist-init of decode instance 0 rank 0"},
                             store]
    assert (prefill0.mem_fraction_static, decode0.mem_fraction_static) == (0.81, 0.75)
    assert prefill1.worker == {"url": "http://10.1.0.2:8000", "worker_type": "prefill", "bootstrap_port": 8999}
    assert decode0.worker == {"url": "http://10.2.0.1:8001", "worker_type": "decode"} and decode1.worker is None
    assert router.mini_lb and router.worker is None and not decode0.mini_lb
    assert [(i.key, i.ranks, i.hosts, i.worker_url, i.mini_lb, i.router_url) for i in p.instances] == [
        ("prefill-i0", ["sglang-prefill-i0-r0"], ["prefill0"], "http://10.1.0.1:8000", False, None),
        ("prefill-i1", ["sglang-prefill-i1-r0"], ["prefill1"], "http://10.1.0.2:8000", False, None),
        ("decode-i0", ["sglang-decode-i0-r0", "sglang-decode-i0-r1"], ["decode0", "decode1"], "http://10.2.0.1:8001",
         False, None),
        ("router-i0", ["sglang-router-i0"], ["router0"], None, True, "http://127.0.0.1:6688")]
    assert [i.worker for i in p.instances[:3]] == [byname[i.ranks[0]].worker for i in p.instances[:3]]
    assert p.hardware == "A3" and p.reference_stack["release"] == p.releases["sglang"]
    # The Rust router (no --mini-lb) has a worker API.
    rust = plan(load_profile(PD32), inventory(prefill=2, decode=2, router=1,
                                              sglang_overrides={"router": {"args": {"--mini-lb": None}}}))
    assert not services(rust, "router")[0].mini_lb and not rust.instances[-1].mini_lb


def test_devices_and_files_follow_the_overrides_and_the_inventory():
    p = plan(load_profile(A2_MIXED), inventory(mixed=1, sglang_overrides={"mixed": {"args": {
        "--base-gpu-id": 2, "--mem-fraction-static": None, "--quantization": None}}}))
    svc = services(p, "mixed")[0]
    assert svc.devices == [2, 3, 4, 5] and svc.mem_fraction_static is None
    assert [m["path"] for m in svc.model_paths] == [
        "/models/m", "/models/m/config.json", "/models/draft", "/models/draft/config.json"]
    assert svc.model_paths[2]["what"] == "--speculative-draft-model-path (EAGLE3 draft model)"
    experts = plan(load_profile(PD24), inventory(prefill=1, decode=2, router=1))
    assert {"flag": "--init-expert-location", "path": "/models/experts.pt", "kind": "file",
            "what": "--init-expert-location"} in services(experts, "prefill")[0].model_paths


def test_typo_in_an_override_flag_is_caught_on_the_controller():
    inv = inventory(prefill=2, decode=2, router=1, sglang_overrides={"decode": {"args": {"--max-runing-requests": 4}}})
    with pytest.raises(PlanError) as exc:
        plan(load_profile(PD32), inv)
    assert ("decode", None, "sglang_overrides.decode.args.--max-runing-requests") in findings_of(exc)
    assert "sglang 0.5.6.post2 has no option --max-runing-requests; did you mean --max-running-requests?" in str(exc.value)


@pytest.mark.parametrize("release, typo, meant", [
    ("0.5.6.post2", "--mem-fraction-statik", "--mem-fraction-static"),
    ("0.5.23", "--cuda-graph-bs-decod", "--cuda-graph-bs-decode"),
])
def test_an_unknown_override_flag_names_the_releases_nearest_flag(release, typo, meant):
    inv = inventory(prefill=2, decode=2, router=1, sglang_release=release, sglang_overrides={"decode": {"args": {typo: 1}}})
    with pytest.raises(PlanError) as exc:
        plan(load_profile(PD32), inv)
    assert f"sglang {release} has no option {typo}; did you mean {meant}?" in str(exc.value)


def test_an_unknown_flag_far_from_any_keeps_the_general_hint():
    inv = inventory(prefill=2, decode=2, router=1, sglang_overrides={"decode": {"args": {"--zzz-qqq": 1}}})
    with pytest.raises(PlanError) as exc:
        plan(load_profile(PD32), inv)
    assert "has no option --zzz-qqq (a typo, or a flag of another release?)" in str(exc.value)
    assert "did you mean" not in str(exc.value)


def test_release_rendering_renames_and_records_changes():
    p = plan(load_profile(PD32), inventory(prefill=2, decode=2, router=1, sglang_release="0.5.23"))
    decode = services(p, "decode")[0].argv
    assert "--cuda-graph-bs" not in decode and flag(decode, "--cuda-graph-bs-decode") == "4"
    assert "--prefill-round-robin-balance" not in decode
    assert {(c["flag"], c["rendered"]) for c in p.release_changes} == {
        ("--cuda-graph-bs", "--cuda-graph-bs-decode"), ("--prefill-round-robin-balance", "(dropped)")}
    assert p.supported_releases["sglang"] == ["0.5.6.post2", "0.5.7", "0.5.8", "0.5.8.post1", "0.5.9",
                                              "0.5.13.post1", "0.5.16", "0.5.23"]


def test_flag_newer_than_the_chosen_release_is_an_error():
    with pytest.raises(PlanError) as exc:
        plan(load_profile(PD24), inventory(prefill=1, decode=2, router=1, sglang_release="0.5.6.post2"))
    assert "--speculative-draft-model-quantization needs sglang >= 0.5.7" in str(exc.value)
    assert ("prefill", None, "sglang_release") in findings_of(exc)


def test_unknown_release_is_named():
    with pytest.raises(PlanError) as exc:
        plan(load_profile(PD32), inventory(prefill=2, decode=2, router=1, sglang_router_release="0.1.0"))
    assert (None, None, "sglang_router_release") in findings_of(exc)


def test_hardware_mismatch_is_named():
    inv = inventory(prefill=2, decode=2, router=1)
    inv = build_inventory(inv.groups, {h.name: {"sglang_host_ip": h.address, "sglang_nic": h.nic,
                                                "sglang_hardware": "A2" if h.name == "decode1" else "A3"}
                                       for h in inv.hosts.values()}, inv.variables)
    with pytest.raises(PlanError) as exc:
        plan(load_profile(PD32), inv)
    assert findings_of(exc) == [("decode", "decode1", "sglang_hardware")]


def test_port_overrides_move_the_port_and_keep_every_use_consistent():
    p = plan(load_profile(PD32), inventory(prefill=2, decode=2, router=1, sglang_overrides={
        "prefill": {"args": {"--port": 9000, "--disaggregation-bootstrap-port": 9100}}}))
    prefill = services(p, "prefill")
    assert [flag(s.argv, "--port") for s in prefill] == ["9000", "9000"]
    assert [s.bootstrap_port for s in prefill] == [9100, 9101]
    assert "http://10.1.0.2:9000" in services(p, "router")[0].argv


def test_computed_flags_cannot_be_overridden():
    inv = inventory(prefill=2, decode=2, router=1, sglang_overrides={
        "decode": {"args": {"--dist-init-addr": "1.2.3.4:5000", "--node-rank": None}}})
    with pytest.raises(PlanError) as exc:
        plan(load_profile(PD32), inv)
    variables = {v for _unused, _unused, v in findings_of(exc)}
    assert {"sglang_overrides.decode.args.--dist-init-addr", "sglang_overrides.decode.args.--node-rank"} <= variables
    assert "rank 0 is the first host of an instance" in str(exc.value)


def test_rank0_of_a_multi_node_instance_reserves_the_watchdog_evidence_port():
    p = plan(load_profile(PD32), inventory(prefill=2, decode=2, router=1))
    d0, d1 = services(p, "decode")
    assert d0.listens["watchdog"] == 8990 and "watchdog" not in d1.listens
    assert d0.watchdog.evidence == d1.watchdog.evidence == Evidence(
        address="10.2.0.1", port=8990, url="http://10.2.0.1:8990/rank0")
    assert all(s.watchdog.evidence is None and "watchdog" not in s.listens for s in services(p, "prefill"))


def test_watchdog_port_comes_from_rank0s_host_and_clashes_are_reported():
    inv = inventory(decode=2, prefill=2, router=1)
    inv.hosts["decode0"] = dataclasses.replace(inv.hosts["decode0"], watchdog_port=9100)
    d0, d1 = services(plan(load_profile(PD32), inv), "decode")
    assert d0.listens["watchdog"] == 9100 and d1.watchdog.evidence.url == "http://10.2.0.1:9100/rank0"
    inv.hosts["decode0"] = dataclasses.replace(inv.hosts["decode0"], watchdog_port=5000)  # the dist-init port
    with pytest.raises(PlanError) as exc:
        plan(load_profile(PD32), inv)
    assert ("decode", "decode0", "sglang_watchdog_port") in findings_of(exc)


def test_watchdog_port_is_read_and_checked_from_the_host_variables():
    assert host_facts("h", {"sglang_host_ip": "10.0.0.1", "sglang_watchdog_port": "9000"}).watchdog_port == 9000
    errors = Collector()
    facts = host_facts("h", {"sglang_host_ip": "10.0.0.1", "sglang_watchdog_port": 70000}, errors, "decode")
    # Checked once, with the host's other settings: the refused value keeps the default, its finding stops the plan.
    assert facts.watchdog_port == facts.settings["sglang_watchdog_port"] == DEFAULT_WATCHDOG_PORT
    assert [(f.host, f.variable) for f in errors.findings] == [("h", "sglang_watchdog_port")]


def test_watchdog_port_default_is_the_roles_default():
    defaults = pathlib.Path(__file__).resolve().parents[5] / "roles/sglang_service/defaults/main.yml"
    assert yaml.safe_load(defaults.read_text())["sglang_watchdog_port"] == DEFAULT_WATCHDOG_PORT


def test_ranks_of_one_instance_must_share_the_hccl_timeouts():
    """The inventory cannot set an env value per rank today; the rule guards the plan itself (a host-level override
    or a later feature would otherwise let ranks wait differently for their links)."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._planner import check_hccl_timeouts
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import HostPlan, Service

    def rank(host, rank_, env):
        return Service(name=f"sglang-decode-i0-r{rank_}", role="decode", instance=0, node_rank=rank_, nnodes=2,
                       inventory_host=host, host=host, port=8001, bootstrap_port=None, dist_init_addr="d0:5000",
                       argv=["python3"], env=env, health_url=None, ready_url=None, instance_key="decode-i0",
                       depends_on=[], listens={})

    hosts = {"d0": HostPlan({}, {}, [rank("d0", 0, {"HCCL_CONNECT_TIMEOUT": "1200"})]),
             "d1": HostPlan({}, {}, [rank("d1", 1, {"HCCL_CONNECT_TIMEOUT": "600"})])}
    errors = Collector()
    check_hccl_timeouts(hosts, errors)
    assert [(f.host, f.variable, f.message) for f in errors.findings] == [
        ("d0", "sglang_overrides.decode.env.HCCL_CONNECT_TIMEOUT",
         "the ranks of instance decode-i0 must use one HCCL_CONNECT_TIMEOUT, got d0: 1200, d1: 600")]
    hosts["d1"] = HostPlan({}, {}, [rank("d1", 1, {"HCCL_CONNECT_TIMEOUT": "1200", "HCCL_EXEC_TIMEOUT": "300"})])
    errors = Collector()
    check_hccl_timeouts(hosts, errors)
    assert [f.message for f in errors.findings] == [
        "the ranks of instance decode-i0 must use one HCCL_EXEC_TIMEOUT, got d0: unset, d1: 300"]
    # A documented profile plans (its ranks agree).
    assert services(plan(load_profile(PD32), inventory(prefill=2, decode=2, router=1)), "decode")
