"""The topology of every profile of SGLang's current pages, planned on a fleet of its documented shape: what the
pages' host loops compute by hand (and get wrong, see the deviations the profiles record) is the planner's. Per
instance: consecutive node ranks 0..nnodes-1 on consecutive hosts of its group, one --nnodes, one
--dist-init-addr at rank 0's address on multi-node instances, the bootstrap port base + instance index on prefill,
the NPUs of tp x pp spread evenly over the nodes (pipeline parallelism included), the MemFabric store URL at the
first prefill instance's rank 0 on every PD server, and the router's upstreams the instances' rank 0 in order."""

from __future__ import annotations

import pytest

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._planner import plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import (
    FIRST_GENERATION, NODE_DEVICES, available_profiles, load_profile)
from ansible_collections.ascend.sglang.tests.unit.plugins.plugin_utils.plan.test_planner import flag, inventory, services

PAGES = [pid for pid in available_profiles() if load_profile(pid).id == pid
         and load_profile(pid).generation not in (FIRST_GENERATION, "nightly")]
# The profiles of SGLang's nightly tests (scripts/import_nightly.py): the importer wrote their scripts, same layout.
NIGHTLY = [pid for pid in available_profiles() if load_profile(pid).id == pid
           and load_profile(pid).source.get("kind") == "nightly"]


def test_the_pages_profiles_are_all_here():
    # 80 imported from today's pages, 68 previous configurations kept as <id>_at_<commit>, 6 retired.
    assert len(PAGES) == 154


@pytest.mark.parametrize("pid", PAGES + NIGHTLY)
def test_each_instance_is_laid_out_as_the_planner_computes(pid: str) -> None:
    profile = load_profile(pid)
    counts = {role: spec.nnodes * spec.documented_instances for role, spec in profile.roles.items()
              if role in profile.server_roles}
    router = 1 if profile.deploy_mode == "pd_separation" else 0
    inv = inventory(**counts, router=router, sglang_hardware=profile.hardware)
    p = plan(profile, inv)
    store = None
    for role, count in counts.items():
        spec = profile.roles[role]
        ranks = sorted(services(p, role), key=lambda s: (s.instance, s.node_rank))
        assert len(ranks) == count
        hosts = inv.groups[role]
        for index in range(spec.documented_instances):
            instance = ranks[index * spec.nnodes:(index + 1) * spec.nnodes]
            assert [s.node_rank for s in instance] == list(range(spec.nnodes))
            assert [s.inventory_host for s in instance] == hosts[index * spec.nnodes:(index + 1) * spec.nnodes]
            assert {flag(s.argv, "--nnodes") for s in instance if "--nnodes" in s.argv} <= {str(spec.nnodes)}
            rank0 = instance[0]
            if spec.nnodes > 1:
                assert {flag(s.argv, "--dist-init-addr") for s in instance} == {
                    f"{rank0.host}:{spec.dist_init_port}"}
            if role == "prefill" and spec.bootstrap_port is not None:
                assert {s.bootstrap_port for s in instance} == {spec.bootstrap_port + index}
            per_node = (spec.tp_size * spec.pp_size) // spec.nnodes
            assert per_node <= NODE_DEVICES[profile.hardware]
            assert all(len(s.devices) == per_node for s in instance)
            if role == "prefill" and index == 0 and profile.memfabric_store_port:
                store = f"tcp://{rank0.host}:{profile.memfabric_store_port}"
    if store:
        for svc in services(p, "prefill") + services(p, "decode"):
            assert svc.env.get("ASCEND_MF_STORE_URL") == store
    if router:
        [entry] = services(p, "router")
        prefill0 = [s for s in services(p, "prefill") if s.node_rank == 0]
        urls = [f"http://{s.host}:{s.port}" for s in sorted(prefill0, key=lambda s: s.instance)]
        assert [u["url"] for u in p.router_upstreams["prefill"]] == urls
        assert entry.role == "router"
