"""Operations helpers: rollout order, the router worker API (sglang-router 0.3.0), the status table.
Pure Python on real plans, no host, no Ansible."""

from __future__ import annotations

import pytest

from ansible_collections.ascend.sglang.plugins.module_utils._ops import (
    find_worker, format_duration, healthy, instances, job_failure, job_settled, parse_systemctl_show, pending_instances,
    pending_services, render_table, router_view, routers, status_rows, uptime_seconds, wait_target, watchdog_lines,
    watchdog_text, without_env, worker_body,
)
from ansible_collections.ascend.sglang.plugins.plugin_utils._planner import plan
from ansible_collections.ascend.sglang.plugins.plugin_utils._profile import load_profile
from ansible_collections.ascend.sglang.plugins.plugin_utils._topology import build_inventory


def make_plan(profile_id: str, groups: dict[str, list[str]], variables: dict | None = None) -> dict:
    hostvars = {}
    n = 10
    for names in groups.values():
        for name in names:
            n += 1
            hostvars[name] = {"sglang_host_ip": f"10.0.0.{n}", "sglang_nic": "eth0"}
    full = {"prefill": [], "decode": [], "mixed": [], "router": [], **groups}
    variables = {"sglang_model_path": "/m", "sglang_draft_model_path": "/d", **(variables or {})}
    return plan(load_profile(profile_id), build_inventory(full, hostvars, variables)).as_dict()


PD = make_plan("deepseek_r1_pd32", {"prefill": ["p0", "p1"], "decode": ["d0", "d1"], "router": ["r0"]})
PD_RUST = make_plan("deepseek_r1_pd32", {"prefill": ["p0", "p1"], "decode": ["d0", "d1"], "router": ["r0"]},
                    {"sglang_overrides": {"router": {"args": {"--mini-lb": None}}}})
MIXED = make_plan("qwen3_32b_a3_2c_mixed_2k_2k_50ms", {"mixed": ["m0", "m1"], "router": ["r0"]})


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


LISTING = {"workers": [
    {"id": "a", "url": "http://10.0.0.11:8000", "worker_type": "prefill", "is_healthy": True, "bootstrap_port": 8998},
    {"id": "b", "url": "http://10.0.0.13:8001/", "worker_type": "decode", "is_healthy": False},
    {"id": "c", "url": "http://10.9.9.9:8000", "worker_type": "decode", "is_healthy": True}], "total": 3}


def test_find_worker_and_body() -> None:
    assert find_worker(LISTING, "http://10.0.0.13:8001")["id"] == "b"
    assert find_worker(LISTING, "http://10.0.0.12:8000") is None and find_worker(None, "x") is None
    assert worker_body("http://h:1", "prefill", 8998) == {
        "url": "http://h:1", "worker_type": "prefill", "bootstrap_port": 8998}
    assert worker_body("http://h:1", "decode", 8998) == {"url": "http://h:1", "worker_type": "decode"}
    with pytest.raises(ValueError):
        worker_body("http://h:1", "mixed")


def test_job_failure_reads_the_routers_job_status() -> None:
    # GET /workers/{id} of a failed addition, as sglang-router 0.3.0 answers it.
    failed = {"id": "a370d5e9", "url": "http://h:8000", "worker_type": "unknown", "is_healthy": False,
              "job_status": {"job_type": "AddWorker", "worker_url": "http://h:8000", "status": "failed",
                             "message": "Workflow failed at step create_worker: Unknown error"}}
    assert job_failure(failed) == "AddWorker failed: Workflow failed at step create_worker: Unknown error"
    pending = dict(failed, job_status=dict(failed["job_status"], status="pending"))
    assert job_failure(pending) is None
    assert job_failure({"id": "a", "url": "http://h:8000", "is_healthy": True}) is None
    assert job_failure(None) is None and job_failure({"job_status": "failed"}) is None


def test_a_job_is_judged_only_once_it_settled() -> None:
    # GET /workers/{id} answers of sglang-router 0.3.0 while an addition runs, once it is done, and for removals.
    job = {"job_type": "AddWorker", "worker_url": "http://h:8000", "message": None, "status": "processing"}
    listed_healthy = {"id": "a", "url": "http://h:8000", "is_healthy": True}
    assert not job_settled(200, dict(listed_healthy, job_status=job))  # listed, healthy, still registering
    assert not job_settled(200, {"job_status": dict(job, status="pending")})
    assert job_settled(200, listed_healthy)  # registered: the job is gone from the record
    assert job_settled(200, {"job_status": dict(job, status="failed", message="Workflow failed at step x")})
    assert job_settled(404, {"error": "Worker a not found", "code": "WORKER_NOT_FOUND"})  # removed
    assert not job_settled(503, {})


def test_router_view() -> None:
    view = router_view(PD_RUST, LISTING, mini_lb=False)
    assert view["http://10.0.0.11:8000"] == "prefill healthy"
    assert view["http://10.0.0.12:8000"] == "not registered"
    assert view["http://10.0.0.13:8001"] == "decode UNHEALTHY"
    assert view["extra:http://10.9.9.9:8000"] == "decode not in the plan"
    assert set(router_view(PD, None, mini_lb=True).values()) == {"configured (mini-lb: no worker API)"}
    assert set(router_view(PD_RUST, None, mini_lb=False).values()) == {"unknown (router not answering)"}


def test_systemctl_show_and_uptime() -> None:
    props = parse_systemctl_show("ActiveState=active\nSubState=running\nActiveEnterTimestampMonotonic=5000000\n")
    assert uptime_seconds(props, 3605.4) == 3600
    assert uptime_seconds(dict(props, ActiveState="inactive"), 3605.4) is None
    assert uptime_seconds(dict(props, ActiveEnterTimestampMonotonic="0"), 10) is None
    assert format_duration(3600) == "01:00:00" and format_duration(90061) == "1d 01:01:01"
    assert format_duration(None) == "-"


def _observed(plan_: dict, state="active", health="200", workers=None) -> dict:
    out = {}
    for host, hp in plan_["hosts"].items():
        services = {}
        for svc in hp["services"]:
            row = {"state": state, "sub_state": "running", "uptime_s": 61,
                   "health": health if svc["health_url"] else "-"}
            if svc["role"] == "router" and workers is not None:
                row["workers"] = workers
            services[svc["name"]] = row
        out[host] = {"services": services}
    return out


def test_status_table_for_a_healthy_rust_router_deployment() -> None:
    listing = {"workers": [{"id": str(n), "url": i["worker"]["url"], "worker_type": i["worker"]["worker_type"],
                            "is_healthy": True} for n, i in enumerate(instances(PD_RUST))]}
    rows = status_rows(PD_RUST, _observed(PD_RUST, workers=listing))
    assert [r["service"] for r in rows] == ["sglang-prefill-i0-r0", "sglang-prefill-i1-r0", "sglang-decode-i0-r0",
                                            "sglang-decode-i0-r1", "sglang-router-i0"]
    assert rows[0]["router_view"] == "prefill healthy" and rows[3]["router_view"] == "-"
    assert rows[-1]["router_view"] == "3/3 workers healthy" and rows[0]["uptime"] == "00:01:01"
    assert healthy(rows)
    table = render_table(rows)
    assert [c.strip() for c in table[0].split(" | ")][:4] == ["host", "role", "inst", "rank"]
    assert len(table) == 2 + len(rows)


def test_status_names_unreachable_hosts_and_unhealthy_services() -> None:
    observed = _observed(PD, health="503")
    observed["d1"] = None
    rows = status_rows(PD, observed)
    by_name = {r["service"]: r for r in rows}
    assert by_name["sglang-decode-i0-r1"]["state"] == "unknown (no answer from host)"
    assert by_name["sglang-prefill-i0-r0"]["health"] == "503"
    assert by_name["sglang-prefill-i0-r0"]["router_view"] == "configured (mini-lb: no worker API)"
    assert by_name["sglang-router-i0"]["router_view"] == "mini-lb: no worker API"
    assert not healthy(rows)


def test_status_shows_restarts_pending_and_restart_yml_finds_their_instances() -> None:
    """A rank that runs other files than its own (module_utils/_started.py) is named with the unit, the reason and
    the files; it stays healthy (health is what it answers), and restart.yml's "pending" selects its instance."""
    observed = _observed(PD)
    rows = status_rows(PD, observed)
    assert {r["config"] for r in rows} == {"current"} and pending_services(rows) == []
    assert pending_instances(PD, observed) == []
    observed["d1"]["services"]["sglang-decode-i0-r1"]["pending"] = [
        {"unit": "sglang-decode-i0-r1.service", "reason": "files changed since it started",
         "files": ["/etc/sglang/sglang-decode-i0-r1.env", "/etc/sglang/cann_env.sh"]},
        {"unit": "sglang-watchdog-sglang-decode-i0-r1.service", "reason": "no record of the files it started from",
         "files": []}]
    rows = status_rows(PD, observed)
    by_name = {r["service"]: r for r in rows}
    assert by_name["sglang-decode-i0-r1"]["config"] == (
        "RESTART PENDING: sglang-decode-i0-r1.service: files changed since it started (sglang-decode-i0-r1.env, "
        "cann_env.sh); sglang-watchdog-sglang-decode-i0-r1.service: no record of the files it started from")
    assert pending_services(rows) == ["sglang-decode-i0-r1"] and healthy(rows)
    assert "running config" in render_table(rows)[0]
    assert pending_instances(PD, observed) == ["decode-i0"]
    # A host without an answer has nothing to say; a stopped service runs nothing.
    observed["d1"] = None
    assert pending_instances(PD, observed) == [] and by_name["sglang-router-i0"]["config"] == "current"
    stopped = _observed(PD)
    stopped["p0"]["services"]["sglang-prefill-i0-r0"]["state"] = "inactive"
    assert {r["service"]: r for r in status_rows(PD, stopped)}["sglang-prefill-i0-r0"]["config"] == "-"


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


def test_status_shows_the_watchdog_and_a_given_up_instance_is_unhealthy() -> None:
    observed = _observed(PD)
    ok = {"kind": "rank", "status": "healthy", "restarts": 1, "given_up": False, "last_check": 100.0}
    gave_up = {"kind": "rank", "status": "gave up", "restarts": 3, "given_up": True,
               "reason": "rank 0 /health_generate failed 3 times in a row (last: HTTP 503)"}
    observed["d0"]["services"]["sglang-decode-i0-r0"]["watchdog"] = ok
    observed["d1"]["services"]["sglang-decode-i0-r1"]["watchdog"] = ok
    rows = status_rows(PD, observed)
    by_name = {r["service"]: r for r in rows}
    assert by_name["sglang-decode-i0-r0"]["watchdog"] == "healthy, 1 restarts"
    assert by_name["sglang-prefill-i0-r0"]["watchdog"] == "-"
    assert healthy(rows) and render_table(rows)[0].rstrip().endswith("watchdog")
    observed["d1"]["services"]["sglang-decode-i0-r1"]["watchdog"] = gave_up
    rows = status_rows(PD, observed)
    assert {r["service"]: r for r in rows}["sglang-decode-i0-r1"]["watchdog"] == (
        "GAVE UP after 3 restarts: rank 0 /health_generate failed 3 times in a row (last: HTTP 503)")
    assert not healthy(rows)
    assert watchdog_text(dict(ok, last_check_age_s=61)) == "healthy, 1 restarts, checked 00:01:01 ago"
    assert watchdog_text({"kind": "router", "workers": [{"instance": "decode instance 0", "removed": True}]}) == (
        "took out: decode instance 0")
    assert watchdog_lines(observed) == [
        "d0 sglang-decode-i0-r0: healthy, 1 restarts",
        "d1 sglang-decode-i0-r1: GAVE UP after 3 restarts: rank 0 /health_generate failed 3 times in a row (last: HTTP 503)"]


def test_wait_target_readiness_health_or_unit() -> None:
    router = {"name": "r", "health_url": "http://h:1/health", "ready_url": "http://h:1/readiness"}
    assert wait_target(router, True) == "http://h:1/readiness"
    assert wait_target(router, False) == "http://h:1/health"
    assert wait_target({"name": "p", "health_url": "http://h:2/health", "ready_url": None}, True) == "http://h:2/health"
    # Node ranks > 0 serve no HTTP: their unit must be active.
    assert wait_target({"name": "d-n1", "health_url": None}, True) is None
    assert wait_target({"name": "d-n1"}, False) is None


def test_services_without_env_keep_everything_else() -> None:
    services = PD["hosts"]["d0"]["services"]
    assert services[0]["env"], "the decode rank's plan carries an environment"
    stripped = without_env(services)
    assert [("env" in s) for s in stripped] == [False] * len(services)
    assert [{k: v for k, v in s.items() if k != "env"} for s in services] == stripped
    assert "env" in services[0]  # the plan itself is left as it is
    assert without_env(None) == []
