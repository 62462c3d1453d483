"""The plan's instances and routers as the operations playbooks take them: rollout order, the router registration
of each instance, whether a router has a worker API, the services without their environment. Pure Python on
real plans, no host, no Ansible."""

from __future__ import annotations

from ansible_collections.ascend.sglang.plugins.plugin_utils._instances import instances, routers, without_env
from ansible_collections.ascend.sglang.tests.unit.planned_fleets import PD, PD_RUST, MIXED


def test_instances_in_rollout_order_with_all_ranks() -> None:
    inst = instances(PD)
    assert [i["label"] for i in inst] == ["prefill instance 0", "prefill instance 1", "decode instance 0"]
    decode = inst[2]
    assert decode["hosts"] == ["d0", "d1"] and [s["node_rank"] for s in decode["services"]] == [0, 1]
    assert decode["worker"] == {"url": "http://10.0.0.13:8001", "worker_type": "decode"}
    assert inst[0]["worker"]["bootstrap_port"] == 8998 and inst[1]["worker"]["bootstrap_port"] == 8999
    assert inst[0]["worker"]["worker_type"] == "prefill" and inst[0]["role_instances"] == 2
    assert decode["role_instances"] == 1
    assert [i["worker"]["worker_type"] for i in instances(MIXED)] == ["regular", "regular"]


def test_router_worker_urls_match_the_routers_upstreams() -> None:
    # register_workers / restart.yml add exactly these URLs: one differing from the router's argv would be a
    # second worker for the same server.
    planned = {u["url"] for ups in PD["router_upstreams"].values() for u in ups}
    assert {i["worker"]["url"] for i in instances(PD)} == planned
    argv = routers(MIXED)[0]["argv"]
    urls = argv[argv.index("--worker-urls") + 1:argv.index("--policy")]
    assert [i["worker"] for i in instances(MIXED)] == [{"url": u, "worker_type": "regular"} for u in urls]


def test_routers_know_whether_they_have_a_worker_api() -> None:
    assert [r["mini_lb"] for r in routers(PD)] == [True]  # the documented PD router
    assert [r["mini_lb"] for r in routers(PD_RUST)] == [False]
    assert routers(PD_RUST)[0]["base_url"] == "http://127.0.0.1:6688"


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
    assert [w["url"] for w in router["workers"]] == [i["worker"]["url"] for i in instances(PD_RUST)]
    assert router["workers"][0]["bootstrap_port"] == instances(PD_RUST)[0]["worker"]["bootstrap_port"]
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
