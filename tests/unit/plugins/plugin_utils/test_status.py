"""The status of a deployment: the router's view of each instance, one row per service, the status table, the
restarts pending and the watchdogs. Pure Python on real plans, no host, no Ansible."""

from __future__ import annotations

from ansible_collections.ascend.sglang.plugins.plugin_utils._instances import instances, pending_instances
from ansible_collections.ascend.sglang.plugins.plugin_utils._status import (
    format_duration, healthy, pending_services, render_table, router_view, status_rows, watchdog_lines, watchdog_text,
)
from ansible_collections.ascend.sglang.tests.unit.planned_fleets import PD, PD_RUST


LISTING = {"workers": [
    {"id": "a", "url": "http://10.0.0.11:8000", "worker_type": "prefill", "is_healthy": True, "bootstrap_port": 8998},
    {"id": "b", "url": "http://10.0.0.13:8001/", "worker_type": "decode", "is_healthy": False},
    {"id": "c", "url": "http://10.9.9.9:8000", "worker_type": "decode", "is_healthy": True}], "total": 3}


def test_router_view() -> None:
    view = router_view(PD_RUST, LISTING, mini_lb=False)
    assert view["http://10.0.0.11:8000"] == "prefill healthy"
    assert view["http://10.0.0.12:8000"] == "not registered"
    assert view["http://10.0.0.13:8001"] == "decode UNHEALTHY"
    assert view["extra:http://10.9.9.9:8000"] == "decode not in the plan"
    assert set(router_view(PD, None, mini_lb=True).values()) == {"configured (mini-lb: no worker API)"}
    assert set(router_view(PD_RUST, None, mini_lb=False).values()) == {"unknown (router not answering)"}


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
                            "is_healthy": True} for n, i in enumerate(instances(PD_RUST))]}
    rows = status_rows(PD_RUST, _observed(PD_RUST, workers=listing))
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
    assert "running config" in render_table(rows)[1]
    assert pending_instances(PD, observed) == ["decode-i0"]
    # A host without an answer has nothing to say; a stopped service runs nothing.
    observed["d1"] = None
    assert pending_instances(PD, observed) == [] and by_name["sglang-router-i0"]["config"] == "current"
    stopped = _observed(PD)
    stopped["p0"]["services"]["sglang-prefill-i0-r0"]["state"] = "inactive"
    assert {r["service"]: r for r in status_rows(PD, stopped)}["sglang-prefill-i0-r0"]["config"] == "-"


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
    assert healthy(rows) and render_table(rows)[1].rstrip("| ").endswith("watchdog")
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
