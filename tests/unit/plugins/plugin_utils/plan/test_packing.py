"""Dense packing (sglang_instances_per_host): replicas of a single-node PD-mixed instance on one host, each with its
own NPUs and ports, and the refusals; pure Python, no Ansible."""

from __future__ import annotations

import pytest

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _packing
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import PlanError
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._planner import plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import NODE_DEVICES, available_profiles, load_profile
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._topology import build_inventory

PROFILES = [load_profile(pid) for pid in available_profiles()]
PACKABLE = [p for p in PROFILES if _packing.packable(p, "mixed")]
QWEN30B = "qwen3_30b_a3_1c_mixed_3k5_1k5_50ms"  # 2 dies (1 card) of a 16-die A3 node
A2_32B = "qwen3_32b_a2_8c_mixed_2k_2k_50ms"  # 4 of 8 NPUs, documented --base-gpu-id 4
A3_32B_4C = "qwen3_32b_a3_4c_mixed_4k_1k5_11ms"  # 8 of 16 dies, documented --base-gpu-id 4
PD = "deepseek_r1_a3_32c_pd_6k_1k6_20ms"
MIXED_2NODE = "qwen3_480b_a3_16c_mixed_3k5_1k5_50ms"
A2_WHOLE = "qwen3_32b_a2_8c_mixed_6k_1k5_18ms"  # --tp-size 8: the whole A2 node


def inventory(per_host, hosts=2, router=True, variables=None, role="mixed", extra=None):
    """``per_host``: sglang_instances_per_host of every host of ``role`` (None: not set)."""
    groups = {role: [f"{role}{i}" for i in range(hosts)], "router": ["r0"] if router else []}
    hostvars = {name: {"sglang_host_ip": f"10.0.0.{i + 1}", "sglang_nic": "ens1"}
                for i, name in enumerate(groups[role])}
    for name in groups[role]:
        if per_host is not None:
            hostvars[name]["sglang_instances_per_host"] = per_host
        hostvars[name].update(extra or {})
    hostvars["r0"] = {"sglang_host_ip": "10.0.0.99"}
    return build_inventory(groups, hostvars, {"sglang_model_path": "/models/m", "sglang_draft_model_path": "/models/d",
                                              "sglang_init_expert_location": "/models/e.pt", **(variables or {})})


def servers(p, host=None):
    return [s for name, h in p.hosts.items() for s in h.services if s.role != "router" and host in (None, name)]


def flag(argv, name):
    return argv[argv.index(name) + 1] if name in argv else None


def refusals(exc):
    return [(f.group, f.host, f.variable) for f in exc.value.findings]


def test_the_packable_profiles_are_the_single_node_mixed_ones_on_part_of_a_node():
    assert sorted(p.id for p in PACKABLE) == sorted(
        p.id for p in PROFILES if p.deploy_mode == "pd_mixed" and p.roles["mixed"].nnodes == 1
        and (p.roles["mixed"].devices_per_node or NODE_DEVICES[p.hardware]) < NODE_DEVICES[p.hardware])
    # The list: Qwen3-30B on 2 dies, Qwen3-32B and Qwen3-Next on 4, Qwen3-32B 4-card on 8 (A3); A2 Qwen3-32B
    # on 4 of 8; and from the current pages, Qwen3-8B (and others) on one die.
    assert {(p.hardware, _packing.devices_per_replica(p, p.roles["mixed"])) for p in PACKABLE} == {
        ("A3", 1), ("A3", 2), ("A3", 4), ("A3", 8), ("A2", 4)}


def test_max_on_the_one_card_profile_gives_eight_replicas_per_a3_host():
    p = plan(load_profile(QWEN30B), inventory("max"))
    for host in ("mixed0", "mixed1"):
        reps = servers(p, host)
        assert len(reps) == 8
        assert [s.devices for s in reps] == [[2 * i, 2 * i + 1] for i in range(8)]
        assert [s.port for s in reps] == [7239 + 1000 * i for i in range(8)]
        assert [flag(s.argv, "--port") for s in reps] == [str(s.port) for s in reps]
        assert [flag(s.argv, "--base-gpu-id") for s in reps] == [str(2 * i) for i in range(8)]
    # Instance numbers run on from one host to the next: unit, env, launcher and container names stay unique.
    names = [s.name for s in servers(p)]
    assert names == [f"sglang-mixed-i{i}-r0" for i in range(16)]
    # The router registers every replica; the deployment occupies 16 cards.
    router = p.hosts["r0"].services[0]
    expected = [f"http://10.0.0.{h}:{7239 + 1000 * i}" for h in (1, 2) for i in range(8)]
    assert [w.url for w in router.watchdog.workers] == expected
    assert p.cards == 16
    assert [i.key for i in p.instances if i.role == "mixed"] == [f"mixed-i{i}" for i in range(16)]


@pytest.mark.parametrize("profile", PACKABLE, ids=lambda p: p.id)
def test_max_packs_disjoint_slices_and_ports_on_every_packable_profile(profile):
    p = plan(profile, inventory("max"))
    per = _packing.devices_per_replica(profile, profile.roles["mixed"])
    node = NODE_DEVICES[profile.hardware]
    for host in ("mixed0", "mixed1"):
        reps = servers(p, host)
        assert len(reps) == node // per == _packing.max_replicas(profile)
        used = [d for s in reps for d in s.devices]
        assert sorted(used) == list(range(node)), used  # disjoint, and the whole node
        for s in reps:
            assert len(s.devices) == per and s.devices[0] == int(flag(s.argv, "--base-gpu-id"))
            assert int(flag(s.argv, "--tp-size")) == per
            if profile.hardware == "A3" and per > 1:
                assert s.devices[0] % 2 == 0  # a card's two dies stay in one replica
        ports = [p_ for s in reps for p_ in s.listens.values()]
        assert len(ports) == len(set(ports))
        assert len({s.health_url for s in reps}) == len(reps)


@pytest.mark.parametrize("pid", [A2_32B, A3_32B_4C])
def test_two_replicas_tile_the_node_from_device_0(pid):
    """The documents run these on the upper half (--base-gpu-id 4); packed, the slices start at 0."""
    single = servers(plan(load_profile(pid), inventory(None, hosts=1)))
    assert flag(single[0].argv, "--base-gpu-id") == "4"
    packed = servers(plan(load_profile(pid), inventory(2, hosts=1)))
    per = len(single[0].devices)
    assert [s.devices[0] for s in packed] == [0, per]
    assert [s.devices for s in packed] == [list(range(per)), list(range(per, 2 * per))]


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.id)
def test_one_replica_per_host_renders_exactly_the_unpacked_plan(profile):
    """Packing off, or set to 1: the plan (every argv, env, port and name) is the one without the variable."""
    def layout(value):
        mixed = profile.deploy_mode == "pd_mixed"
        groups = {role: [f"{role}{i}" for i in range(profile.roles[role].nnodes * profile.roles[role].documented_instances)]
                  for role in profile.server_roles}
        groups["router"] = ["r0"] if (not mixed or profile.roles.get("router")) else []
        hostvars = {}
        for role, names in groups.items():
            for i, name in enumerate(names):
                hostvars[name] = {"sglang_host_ip": f"10.{len(hostvars)}.0.1", "sglang_nic": "ens1"}
                if value is not None:
                    hostvars[name]["sglang_instances_per_host"] = value
        return build_inventory(groups, hostvars, {"sglang_model_path": "/models/m", "sglang_draft_model_path": "/d",
                                                  "sglang_init_expert_location": "/e.pt"})
    unset = plan(profile, layout(None)).as_dict()
    assert plan(profile, layout(1)).as_dict() == unset
    assert plan(profile, layout("1")).as_dict() == unset


def test_container_runtime_gives_each_replica_its_slice_only():
    container = {"sglang_runtime": "container", "sglang_container_image": "img:1"}
    p = plan(load_profile(QWEN30B), inventory(4, hosts=1, variables=container))
    for i, s in enumerate(servers(p)):
        davinci = [d for d in s.container.devices if d.startswith("/dev/davinci") and d[12:].isdigit()]
        assert davinci == [f"/dev/davinci{2 * i}", f"/dev/davinci{2 * i + 1}"], s.container.devices


def test_a_replica_count_per_host_may_differ():
    groups = {"mixed": ["a", "b"], "router": ["r0"]}
    hostvars = {"a": {"sglang_host_ip": "10.0.0.1", "sglang_instances_per_host": 3},
                "b": {"sglang_host_ip": "10.0.0.2"}, "r0": {"sglang_host_ip": "10.0.0.9"}}
    p = plan(load_profile(QWEN30B), build_inventory(groups, hostvars, {"sglang_model_path": "/m",
                                                                       "sglang_draft_model_path": "/d"}))
    assert [(s.inventory_host, s.name, s.devices[0], s.port) for s in servers(p)] == [
        ("a", "sglang-mixed-i0-r0", 0, 7239), ("a", "sglang-mixed-i1-r0", 2, 8239), ("a", "sglang-mixed-i2-r0", 4, 9239),
        ("b", "sglang-mixed-i3-r0", 0, 7239)]


@pytest.mark.parametrize("pid, role, value, hosts, router, fragment", [
    (PD, "prefill", 2, 2, True, "single-node PD-mixed instance that uses part"),
    (PD, "decode", "max", 2, True, "single-node PD-mixed instance that uses part"),
    (MIXED_2NODE, "mixed", 2, 2, True, "instances of 2 nodes"),
    (A2_WHOLE, "mixed", 2, 1, False, "every NPU of the node"),
    (QWEN30B, "mixed", 9, 1, False, "at most 8"),
    (A2_32B, "mixed", 3, 1, False, "at most 2"),
])
def test_packing_what_cannot_pack_is_refused_naming_host_group_and_variable(pid, role, value, hosts, router, fragment):
    profile = load_profile(pid)

    def count(r):
        return hosts if r == role else profile.roles[r].nnodes if r in profile.server_roles else 0
    groups = {r: [f"{r}{i}" for i in range(count(r))] for r in ("prefill", "decode", "mixed")}
    groups["router"] = ["r0"] if router else []
    hostvars = {n: {"sglang_host_ip": f"10.0.{k}.{i + 1}", "sglang_nic": "ens1"}
                for k, names in enumerate(groups.values()) for i, n in enumerate(names)}
    target = groups[role][0]
    hostvars[target]["sglang_instances_per_host"] = value
    with pytest.raises(PlanError) as exc:
        plan(profile, build_inventory(groups, hostvars, {"sglang_model_path": "/m", "sglang_draft_model_path": "/d",
                                                         "sglang_init_expert_location": "/e.pt"}))
    found = [f for f in exc.value.findings if f.variable == "sglang_instances_per_host"]
    assert [(f.group, f.host) for f in found] == [(role, target)], refusals(exc)
    assert fragment in found[0].message


@pytest.mark.parametrize("value", [0, 17, "all", "2x", True, 1.5, -1, ""])
def test_a_value_that_is_not_a_count_or_max_is_refused(value):
    with pytest.raises(PlanError) as exc:
        plan(load_profile(QWEN30B), inventory(value, hosts=1))
    assert refusals(exc) == [("mixed", "mixed0", "sglang_instances_per_host")]


@pytest.mark.parametrize("override, variable", [
    ({"mixed": {"args": {"--base-gpu-id": 2}}}, "sglang_overrides.mixed.args.--base-gpu-id"),
    ({"mixed": {"env": {"ASCEND_RT_VISIBLE_DEVICES": "0,1"}}}, "sglang_overrides.mixed.env.ASCEND_RT_VISIBLE_DEVICES"),
])
def test_a_hand_made_device_slice_is_refused_when_hosts_pack(override, variable):
    with pytest.raises(PlanError) as exc:
        plan(load_profile(QWEN30B), inventory(2, hosts=1, variables={"sglang_overrides": override}))
    assert ("mixed", "mixed0", variable) in refusals(exc)
    # Without packing the same override is the operator's to make.
    plan(load_profile(QWEN30B), inventory(None, hosts=1, variables={"sglang_overrides": override}))


def test_a_replica_port_above_65535_is_refused():
    with pytest.raises(PlanError) as exc:
        plan(load_profile(QWEN30B), inventory("max", hosts=1,
                                              variables={"sglang_overrides": {"mixed": {"args": {"--port": 60000}}}}))
    found = [f for f in exc.value.findings if f.variable == "sglang_instances_per_host"]
    assert found and all(f.host == "mixed0" for f in found)
    assert "replica 6 of 8 would listen on --port 66000" in found[0].message


# ---- CPU pinning (sglang_npu_cpus): each replica on the CPUs near its own NPUs ---------------------------------

# The published A2 topology (tests/fixtures/npu_smi/topo_a2_910b3_x8.txt), as preflight tells the operator to set it.
A2_TOPO = {0: "144-167", 1: "144-167", 2: "96-119", 3: "96-119", 4: "0-23", 5: "0-23", 6: "48-71", 7: "48-71"}


def test_each_replica_is_pinned_to_the_cpus_near_its_npus():
    p = plan(load_profile(A2_32B), inventory(2, hosts=1, extra={"sglang_npu_cpus": A2_TOPO}))
    assert [(s.name, s.devices, s.cpus) for s in servers(p)] == [
        ("sglang-mixed-i0-r0", [0, 1, 2, 3], "96-119,144-167"), ("sglang-mixed-i1-r0", [4, 5, 6, 7], "0-23,48-71")]
    assert all(s.cpus is None for s in p.hosts["r0"].services)  # the router has no NPU


def test_a_host_without_the_variable_runs_unpinned_and_strings_are_read_like_numbers():
    assert [s.cpus for s in servers(plan(load_profile(A2_32B), inventory(2, hosts=1)))] == [None, None]
    as_text = {str(k): v for k, v in A2_TOPO.items()}
    p = plan(load_profile(A2_32B), inventory(1, hosts=1, extra={"sglang_npu_cpus": as_text}))
    assert [(s.devices, s.cpus) for s in servers(p)] == [([4, 5, 6, 7], "0-23,48-71")]  # the documented slice


def test_a_pinned_container_gets_its_cpuset():
    p = plan(load_profile(A2_32B), inventory(2, hosts=1, extra={"sglang_npu_cpus": A2_TOPO}, variables={
        "sglang_runtime": "container", "sglang_container_engine": "podman", "sglang_container_image": "img:1"}))
    runs = [s.container.run for s in servers(p)]
    assert [flag(run, "--cpuset-cpus") for run in runs] == ["96-119,144-167", "0-23,48-71"]


def test_an_npu_without_cpus_is_refused_naming_host_group_and_variable():
    partial = {k: v for k, v in A2_TOPO.items() if k != 6}
    with pytest.raises(PlanError) as exc:
        plan(load_profile(A2_32B), inventory(2, hosts=1, extra={"sglang_npu_cpus": partial}))
    assert refusals(exc) == [("mixed", "mixed0", "sglang_npu_cpus")]
    assert "has no CPUs for NPU 6 of sglang-mixed-i1-r0 (NPUs 4-7)" in str(exc.value)
