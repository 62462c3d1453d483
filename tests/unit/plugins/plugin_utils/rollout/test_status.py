"""The status of a deployment: the router's view of each instance, one row per service, the status table, the
restarts pending and the watchdogs. Pure Python on real plans, no host, no Ansible."""

from __future__ import annotations

import json

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import typed_plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._instances import instances, pending_instances
from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._status import (
    METRICS_ERROR_WIDTH, format_duration, healthy, metrics_error_cell, pending_services, render_table, router_view,
    status_rows, watchdog_lines, watchdog_text,
)
from ansible_collections.ascend.sglang.tests.unit.planned_fleets import PD, PD_RUST, make_plan


LISTING = {"workers": [
    {"id": "a", "url": "http://10.0.0.11:8000", "worker_type": "prefill", "is_healthy": True, "bootstrap_port": 8998},
    {"id": "b", "url": "http://10.0.0.13:8001/", "worker_type": "decode", "is_healthy": False},
    {"id": "c", "url": "http://10.9.9.9:8000", "worker_type": "decode", "is_healthy": True}], "total": 3}


def test_router_view() -> None:
    view = router_view(typed_plan(PD_RUST), LISTING, mini_lb=False)
    assert view["http://10.0.0.11:8000"] == "prefill healthy"
    assert view["http://10.0.0.12:8000"] == "not registered"
    assert view["http://10.0.0.13:8001"] == "decode UNHEALTHY"
    assert view["extra:http://10.9.9.9:8000"] == "decode not in the plan"
    assert set(router_view(typed_plan(PD), None, mini_lb=True).values()) == {"configured (mini-lb: no worker API)"}
    assert set(router_view(typed_plan(PD_RUST), None, mini_lb=False).values()) == {"unknown (router not answering)"}


def test_format_duration() -> None:
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
                            "is_healthy": True} for n, i in enumerate(instances(typed_plan(PD_RUST)))]}
    rows = status_rows(typed_plan(PD_RUST), _observed(PD_RUST, workers=listing))
    assert [r["service"] for r in rows] == ["sglang-prefill-i0-r0", "sglang-prefill-i1-r0", "sglang-decode-i0-r0",
                                            "sglang-decode-i0-r1", "sglang-router-i0"]
    assert rows[0]["router_view"] == "prefill healthy" and rows[3]["router_view"] == "-"
    assert rows[-1]["router_view"] == "3/3 workers healthy" and rows[0]["uptime"] == "00:01:01"
    assert healthy(rows)
    table = render_table(rows)
    assert [c.strip() for c in table[1].strip("| ").split(" | ")][:4] == ["host", "role", "inst", "rank"]
    assert len(table) == 4 + len(rows)


def test_status_names_unreachable_hosts_and_unhealthy_services() -> None:
    observed = _observed(PD, health="503")
    observed["d1"] = None
    rows = status_rows(typed_plan(PD), observed)
    by_name = {r["service"]: r for r in rows}
    assert by_name["sglang-decode-i0-r1"]["state"] == "unknown (no answer from host)"
    assert by_name["sglang-prefill-i0-r0"]["health"] == "503"
    assert by_name["sglang-prefill-i0-r0"]["router_view"] == "configured (mini-lb: no worker API)"
    assert by_name["sglang-router-i0"]["router_view"] == "mini-lb: no worker API"
    assert not healthy(rows)


def test_status_shows_restarts_pending_and_restart_yml_finds_their_instances() -> None:
    """A rank that runs other files than its own (module_utils/files/_started.py) is named with the unit, the reason and
    the files; it stays healthy (health is what it answers), and restart.yml's "pending" selects its instance."""
    observed = _observed(PD)
    rows = status_rows(typed_plan(PD), observed)
    assert {r["config"] for r in rows} == {"current"} and pending_services(rows) == []
    assert pending_instances(typed_plan(PD), observed) == []
    observed["d1"]["services"]["sglang-decode-i0-r1"]["pending"] = [
        {"unit": "sglang-decode-i0-r1.service", "reason": "files changed since it started",
         "files": ["/etc/sglang/sglang-decode-i0-r1.env", "/etc/sglang/cann_env.sh"]},
        {"unit": "sglang-watchdog-sglang-decode-i0-r1.service", "reason": "no record of the files it started from",
         "files": []}]
    rows = status_rows(typed_plan(PD), observed)
    by_name = {r["service"]: r for r in rows}
    assert by_name["sglang-decode-i0-r1"]["config"] == (
        "RESTART PENDING: sglang-decode-i0-r1.service: files changed since it started (sglang-decode-i0-r1.env, "
        "cann_env.sh); sglang-watchdog-sglang-decode-i0-r1.service: no record of the files it started from")
    assert pending_services(rows) == ["sglang-decode-i0-r1"] and healthy(rows)
    assert "running config" in render_table(rows)[1]
    assert pending_instances(typed_plan(PD), observed) == ["decode-i0"]
    # A host without an answer has nothing to say; a stopped service runs nothing.
    observed["d1"] = None
    assert pending_instances(typed_plan(PD), observed) == [] and by_name["sglang-router-i0"]["config"] == "current"
    stopped = _observed(PD)
    stopped["p0"]["services"]["sglang-prefill-i0-r0"]["state"] = "inactive"
    assert {r["service"]: r for r in status_rows(typed_plan(PD), stopped)}["sglang-prefill-i0-r0"]["config"] == "-"


def test_status_shows_the_watchdog_and_a_given_up_instance_is_unhealthy() -> None:
    observed = _observed(PD)
    ok = {"kind": "rank", "status": "healthy", "restarts": 1, "given_up": False, "last_check": 100.0}
    gave_up = {"kind": "rank", "status": "gave up", "restarts": 3, "given_up": True,
               "reason": "rank 0 /health_generate failed 3 times in a row (last: HTTP 503)"}
    observed["d0"]["services"]["sglang-decode-i0-r0"]["watchdog"] = ok
    observed["d1"]["services"]["sglang-decode-i0-r1"]["watchdog"] = ok
    rows = status_rows(typed_plan(PD), observed)
    by_name = {r["service"]: r for r in rows}
    assert by_name["sglang-decode-i0-r0"]["watchdog"] == "healthy, 1 restarts"
    assert by_name["sglang-prefill-i0-r0"]["watchdog"] == "-"
    assert healthy(rows) and render_table(rows)[1].rstrip("| ").endswith("watchdog")
    observed["d1"]["services"]["sglang-decode-i0-r1"]["watchdog"] = gave_up
    rows = status_rows(typed_plan(PD), observed)
    assert {r["service"]: r for r in rows}["sglang-decode-i0-r1"]["watchdog"] == (
        "GAVE UP after 3 restarts: rank 0 /health_generate failed 3 times in a row (last: HTTP 503)")
    assert not healthy(rows)
    assert watchdog_text(dict(ok, last_check_age_s=61)) == "healthy, 1 restarts, checked 00:01:01 ago"
    assert watchdog_text({"kind": "router", "workers": [{"instance": "decode instance 0", "removed": True}]}) == (
        "took out: decode instance 0")
    assert watchdog_lines(observed) == [
        "d0 sglang-decode-i0-r0: healthy, 1 restarts",
        "d1 sglang-decode-i0-r1: GAVE UP after 3 restarts: rank 0 /health_generate failed 3 times in a row (last: HTTP 503)"]


def _with_load(plan_: dict, observed: dict, error: str | None = None) -> dict:
    """What sglang_service_status adds for rank 0 of each server instance with a metrics_url: its load or the
    error of its read."""
    for host, hp in plan_["hosts"].items():
        for n, svc in enumerate(hp["services"]):
            if svc.get("metrics_url") and svc["role"] != "router" and svc["node_rank"] == 0:
                observed[host]["services"][svc["name"]].update(
                    {"metrics_error": error} if error else
                    {"metrics": {"running": 3 + n, "queued": 1, "tpot_ms": 41.26, "requests": 120}})
    return observed


def _cells(row: dict) -> tuple:
    return row["run"], row["queue"], row["tpot"]


def test_status_shows_each_instance_load_from_rank_0_metrics() -> None:
    """Running and queued requests and TPOT beside rank 0 of each server instance; '-' for the other ranks and
    the router (its exporter is Prometheus' business); a prefill server that emits no output tokens has no TPOT."""
    assert PD["monitoring"]["metrics"] is True
    observed = _with_load(PD, _observed(PD))
    observed["p1"]["services"]["sglang-prefill-i1-r0"]["metrics"]["tpot_ms"] = None
    rows = status_rows(typed_plan(PD), observed)
    by_name = {r["service"]: r for r in rows}
    assert _cells(by_name["sglang-prefill-i0-r0"]) == ("3", "1", "41.3")
    assert _cells(by_name["sglang-prefill-i1-r0"]) == ("3", "1", "-")
    assert _cells(by_name["sglang-decode-i0-r1"]) == ("-", "-", "-")
    assert by_name["sglang-decode-i0-r1"]["metrics"] is None
    assert _cells(by_name["sglang-router-i0"]) == ("-", "-", "-")
    assert by_name["sglang-decode-i0-r0"]["metrics"] == {"running": 3, "queued": 1, "tpot_ms": 41.26, "requests": 120}
    assert by_name["sglang-decode-i0-r0"]["metrics_error"] is None and healthy(rows)
    table = render_table(rows)
    header = [c.strip() for c in table[1].strip("| ").split(" | ")]
    assert header[header.index("uptime") + 1:header.index("uptime") + 4] == ["run", "queue", "tpot_ms"]
    line = next(t for t in table if "sglang-prefill-i0-r0" in t)
    cells = [c.strip() for c in line.strip("| ").split(" | ")]
    assert cells[:12] == ["p0", "prefill", "0", "0", "8000", "sglang-prefill-i0-r0", "active (running)", "200",
                          "00:01:01", "3", "1", "41.3"]


def test_status_without_metrics_shows_dashes() -> None:
    """Metrics off (sglang_metrics: false): no metrics_url, no read, '-' everywhere; a host that did not answer
    leaves the load of its rank 0 unknown."""
    off = make_plan("deepseek_r1_pd32", {"prefill": ["p0", "p1"], "decode": ["d0", "d1"], "router": ["r0"]},
                    {"sglang_metrics": False})
    assert all(svc["metrics_url"] is None for hp in off["hosts"].values() for svc in hp["services"])
    rows = status_rows(typed_plan(off), _observed(off))
    assert {_cells(r) for r in rows} == {("-", "-", "-")} and all(r["metrics"] is None for r in rows)
    assert healthy(rows)
    observed = _observed(PD)
    observed["d0"] = None
    by_name = {r["service"]: r for r in status_rows(typed_plan(PD), observed)}
    assert _cells(by_name["sglang-decode-i0-r0"]) == ("?", "?", "?")
    assert _cells(by_name["sglang-decode-i0-r1"]) == ("-", "-", "-")


def test_a_failed_metrics_read_is_shown_short_and_leaves_health_alone() -> None:
    refused = "GET /metrics: no answer (URLError: [Errno 111] Connection refused)"
    rows = status_rows(typed_plan(PD), _with_load(PD, _observed(PD), error=refused))
    by_name = {r["service"]: r for r in rows}
    decode = by_name["sglang-decode-i0-r0"]
    assert _cells(decode) == ("no answer", "?", "?")
    assert decode["metrics_error"] == refused and decode["metrics"] is None and healthy(rows)
    assert metrics_error_cell("GET /metrics: 503") == "HTTP 503"
    cut = metrics_error_cell("not reported yet: sglang:num_running_reqs, sglang:num_queue_reqs")
    assert cut == "not reported yet: sglang:num_..." and len(cut) == METRICS_ERROR_WIDTH


def test_the_json_keeps_every_key_and_adds_the_load() -> None:
    """The rows are the JSON's services (action sglang_status_report): every key of before, plus the load."""
    before = {"host", "service", "role", "watchdog", "watchdog_state", "instance", "node_rank", "port", "state",
              "health", "uptime_s", "uptime", "router_view", "restarts", "config", "pending"}
    observed = _with_load(PD_RUST, _observed(PD_RUST, workers={"workers": [
        {"url": "http://10.9.9.9:8000", "worker_type": "decode", "is_healthy": True}]}))
    observed["p1"]["services"]["sglang-prefill-i1-r0"]["metrics_error"] = "GET /metrics: 404"
    del observed["p1"]["services"]["sglang-prefill-i1-r0"]["metrics"]
    rows = status_rows(typed_plan(PD_RUST), observed)
    doc = json.loads(json.dumps({"profile": PD_RUST.get("profile"), "healthy": healthy(rows), "services": rows}))
    assert doc["healthy"] is True
    for row in doc["services"]:
        assert before | {"metrics", "metrics_error", "run", "queue", "tpot"} <= set(row), row["service"]
    by_name = {r["service"]: r for r in doc["services"]}
    assert by_name["sglang-prefill-i0-r0"]["metrics"]["tpot_ms"] == 41.26
    assert by_name["sglang-prefill-i1-r0"]["metrics_error"] == "GET /metrics: 404"
    assert by_name["sglang-prefill-i1-r0"]["run"] == "HTTP 404"
    assert by_name["http://10.9.9.9:8000"]["run"] == "-"  # a worker the plan does not know
