"""The plan's instances and routers as the operations playbooks take them: rollout order, the router registration
of each instance, whether a router has a worker API, the services without their environment. Pure Python on
real plans, no host, no Ansible."""

from __future__ import annotations

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import typed_plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._instances import (
    failed_items, instances, restart_batches, routers, without_env,
)
from ansible_collections.ascend.sglang.tests.unit.planned_fleets import PD, PD_RUST, MIXED


def test_instances_in_rollout_order_with_all_ranks() -> None:
    inst = instances(typed_plan(PD))
    assert [i["label"] for i in inst] == ["prefill instance 0", "prefill instance 1", "decode instance 0"]
    decode = inst[2]
    assert decode["hosts"] == ["d0", "d1"] and [s["node_rank"] for s in decode["services"]] == [0, 1]
    assert decode["worker"] == {"url": "http://10.0.0.13:8001", "worker_type": "decode"}
    assert inst[0]["worker"]["bootstrap_port"] == 8998 and inst[1]["worker"]["bootstrap_port"] == 8999
    assert inst[0]["worker"]["worker_type"] == "prefill" and inst[0]["role_instances"] == 2
    assert decode["role_instances"] == 1
    assert [i["worker"]["worker_type"] for i in instances(typed_plan(MIXED))] == ["regular", "regular"]


def test_router_worker_urls_match_the_routers_upstreams() -> None:
    # the router's health gate / restart.yml add exactly these URLs: one differing from the router's argv would be a
    # second worker for the same server.
    planned = {u["url"] for ups in PD["router_upstreams"].values() for u in ups}
    assert {i["worker"]["url"] for i in instances(typed_plan(PD))} == planned
    argv = routers(typed_plan(MIXED))[0]["argv"]
    urls = argv[argv.index("--worker-urls") + 1:argv.index("--policy")]
    assert [i["worker"] for i in instances(typed_plan(MIXED))] == [{"url": u, "worker_type": "regular"} for u in urls]


def test_routers_know_whether_they_have_a_worker_api() -> None:
    assert [r["mini_lb"] for r in routers(typed_plan(PD))] == [True]  # the documented PD router
    assert [r["mini_lb"] for r in routers(typed_plan(PD_RUST))] == [False]
    assert routers(typed_plan(PD_RUST))[0]["base_url"] == "http://127.0.0.1:6688"


def test_plan_carries_the_watchdog_facts() -> None:
    by_name = {s["name"]: s for hp in PD_RUST["hosts"].values() for s in hp["services"]}
    rank1 = by_name["sglang-decode-i0-r1"]["watchdog"]
    assert rank1["instance_label"] == "decode instance 0"
    assert rank1["health_url"] == by_name["sglang-decode-i0-r0"]["health_url"].replace("/health", "/health_generate")
    assert [(m["host"], m["service"], m["node_rank"]) for m in rank1["members"]] == [
        ("d0", "sglang-decode-i0-r0", 0), ("d1", "sglang-decode-i0-r1", 1)]
    router = by_name["sglang-router-i0"]["watchdog"]
    assert router["router_url"] == f"http://{by_name['sglang-router-i0']['host']}:{by_name['sglang-router-i0']['port']}"
    assert [(w["instance_label"], w["nnodes"], w["worker_type"]) for w in router["workers"]] == [
        ("prefill instance 0", 1, "prefill"), ("prefill instance 1", 1, "prefill"), ("decode instance 0", 2, "decode")]
    assert [w["url"] for w in router["workers"]] == [i["worker"]["url"] for i in instances(typed_plan(PD_RUST))]
    assert router["workers"][0]["bootstrap_port"] == instances(typed_plan(PD_RUST))[0]["worker"]["bootstrap_port"]
    # A --mini-lb router has no worker API: nothing for a router-side watchdog to do.
    assert [s for hp in PD["hosts"].values() for s in hp["services"] if s["role"] == "router"][0]["watchdog"][
        "router_url"] is None


def test_services_without_env_keep_everything_else() -> None:
    services = PD["hosts"]["d0"]["services"]
    assert services[0]["env"], "the decode rank's plan carries an environment"
    stripped = without_env(services)
    assert [("env" in s) for s in stripped] == [False] * len(services)
    assert [{k: v for k, v in s.items() if k != "env"} for s in services] == stripped
    assert "env" in services[0]  # the plan itself is left as it is
    assert without_env(None) == []


# ---- rolling restart batches (sglang_restart_batch) -------------------------------------------------------------

def _fleet(prefill: int, decode: int, mixed: int = 0) -> list[dict]:
    """instances()-shaped items: each role's instances with one rank, decode instances with two."""
    out = []
    for role, count, ranks in (("prefill", prefill, 1), ("decode", decode, 2), ("mixed", mixed, 1)):
        for i in range(count):
            services = [{"name": f"sglang-{role}-i{i}-r{r}", "inventory_host": f"{role[0]}{i}-{r}"} for r in range(ranks)]
            out.append({"key": f"{role}-i{i}", "role": role, "instance": i, "label": f"{role} instance {i}",
                        "hosts": [s["inventory_host"] for s in services], "services": services,
                        "rank0": services[0], "role_instances": count})
    return out


def _labels(batches: list[dict]) -> list[list[str]]:
    return [b["labels"] for b in batches]


def test_one_instance_at_a_time_by_default_in_rollout_order() -> None:
    batches = restart_batches(instances(typed_plan(PD)), 1)
    assert _labels(batches) == [["prefill instance 0"], ["prefill instance 1"], ["decode instance 0"]]
    assert [b["number"] for b in batches] == [1, 2, 3] and {b["count"] for b in batches} == {3}
    # a batch of one is what restart.yml restarted before batches: its label is the instance's
    assert [b["label"] for b in batches] == ["prefill instance 0", "prefill instance 1", "decode instance 0"]
    assert batches[2]["others"] == instances(typed_plan(PD))[2]["services"][1:]
    assert not any(b["whole_role"] for b in batches)


def test_a_batch_holds_at_most_the_count_and_never_mixes_roles() -> None:
    batches = restart_batches(_fleet(3, 3, 5), 2)
    assert _labels(batches) == [
        ["prefill instance 0", "prefill instance 1"], ["prefill instance 2"],
        ["decode instance 0", "decode instance 1"], ["decode instance 2"],
        ["mixed instance 0", "mixed instance 1"], ["mixed instance 2", "mixed instance 3"], ["mixed instance 4"]]
    assert all(len({i["role"] for i in b["instances"]}) == 1 for b in batches)
    decode = batches[2]
    # every rank of both decode instances stops and starts; rank 0 of each is waited for, the others checked active
    assert [s["name"] for s in decode["services"]] == [
        "sglang-decode-i0-r0", "sglang-decode-i0-r1", "sglang-decode-i1-r0", "sglang-decode-i1-r1"]
    assert [s["name"] for s in decode["others"]] == ["sglang-decode-i0-r1", "sglang-decode-i1-r1"]
    assert decode["hosts"] == ["d0-0", "d0-1", "d1-0", "d1-1"]
    assert decode["label"] == "decode instance 0, decode instance 1"


def test_percentage_of_a_64_replica_fleet_restarts_in_four_batches() -> None:
    fleet = _fleet(0, 0, 64)
    batches = restart_batches(fleet, 16)  # sglang_restart_batch=25% of 64 (plan/_run_settings.py)
    assert [len(b["instances"]) for b in batches] == [16, 16, 16, 16]
    assert [i["key"] for b in batches for i in b["instances"]] == [i["key"] for i in fleet]


def test_a_batch_with_every_instance_of_its_role_is_flagged() -> None:
    batches = restart_batches(_fleet(2, 1, 0), 2)
    assert [(b["label"], b["whole_role"]) for b in batches] == [
        ("prefill instance 0, prefill instance 1", True),
        ("decode instance 0", False)]  # a single-instance role: restart.yml's own warning names it


def test_a_selection_batches_only_the_selected_instances() -> None:
    fleet = _fleet(0, 0, 6)
    batches = restart_batches([fleet[1], fleet[4], fleet[5]], 2)
    assert _labels(batches) == [["mixed instance 1", "mixed instance 4"], ["mixed instance 5"]]
    assert not batches[0]["whole_role"]


def test_failed_items_name_the_instance_or_service_of_each_failed_item() -> None:
    fleet = _fleet(0, 2, 0)
    result = {"failed": True, "msg": "One or more items failed", "results": [
        {"failed": False, "__sglang_inst": fleet[0]},
        {"failed": True, "__sglang_inst": fleet[1]},
        {"failed": True, "__sglang_svc": fleet[0]["services"][1]},
        {"failed": True, "__sglang_pair": [fleet[1], {"name": "sglang-router-i0"}]},
        {"failed": True, "item": "unrelated loop"},
        "not a dict"]}
    assert failed_items(result) == ["decode instance 1", "sglang-decode-i0-r1"]
    assert failed_items({"failed": True, "msg": "no loop"}) == [] and failed_items(None) == []
