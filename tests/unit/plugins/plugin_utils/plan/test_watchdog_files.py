"""Which services get a watchdog and what its configuration holds (plugins.plugin_utils.plan._watchdog.py), as
deploy and render mode both write it (plugin_utils/targets/_host_files.py)."""
from __future__ import annotations

import dataclasses

import pytest

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _watchdog as wdf
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import typed_plan
from tests.unit.plans import make_plan

PD32 = "deepseek_r1_a3_32c_pd_6k_1k6_20ms"  # 2 x 1-node prefill, 1 x 2-node decode, router
SETTINGS = {"sglang_watchdog_enabled": True, "sglang_watchdog_single_node": False, "sglang_watchdog_interval": "10",
            "sglang_watchdog_timeout": 30, "sglang_watchdog_failures": 3, "sglang_watchdog_startup_grace": 900,
            "sglang_watchdog_max_restarts": 5, "sglang_watchdog_window": 3600, "sglang_watchdog_backoff_initial": 30,
            "sglang_watchdog_backoff_max": 600, "sglang_watchdog_python": "/usr/bin/python3",
            "sglang_watchdog_state_dir": "/var/lib/sglang-watchdog"}


@pytest.fixture(scope="module")
def plan():
    return typed_plan(make_plan(PD32, prefill=2, decode=2, router=1)[1])


def all_services(plan):
    return [s for h in plan.hosts.values() for s in h.services]


def names(services):
    return sorted(s.name for s in services)


def with_router_url(svc):
    """A router of the plan as if it had a worker API (this profile's is --mini-lb)."""
    return dataclasses.replace(svc, watchdog=dataclasses.replace(svc.watchdog, router_url="http://127.0.0.1:6688"))


def test_multi_node_ranks_and_a_router_with_a_worker_api_are_watched(plan):
    # This profile's router is the --mini-lb one: no worker API, nothing for a watchdog to take out.
    assert names(wdf.watched(all_services(plan), SETTINGS)) == ["sglang-decode-i0-r0", "sglang-decode-i0-r1"]
    with_api = [with_router_url(s) if s.role == "router" else s for s in all_services(plan)]
    assert names(wdf.watched(with_api, SETTINGS)) == ["sglang-decode-i0-r0", "sglang-decode-i0-r1", "sglang-router-i0"]
    assert names(wdf.watched(with_api, dict(SETTINGS, sglang_watchdog_single_node="true"))) == names(with_api)
    assert wdf.watched(with_api, dict(SETTINGS, sglang_watchdog_enabled="false")) == []


def test_rank_configuration_carries_the_evidence_endpoint(plan):
    d1 = next(s for s in all_services(plan) if s.name == "sglang-decode-i0-r1")
    cfg = wdf.config(d1, SETTINGS)
    assert cfg["kind"] == "rank" and cfg["unit"] == "sglang-decode-i0-r1.service" and cfg["node_rank"] == 1
    assert cfg["interval"] == 10 and cfg["state_file"] == "/var/lib/sglang-watchdog/sglang-decode-i0-r1.json"
    assert cfg["evidence"] == dataclasses.asdict(d1.watchdog.evidence) and cfg["evidence"]["url"].endswith(":8990/rank0")


def test_router_configuration_lists_the_watched_instances(plan):
    router = with_router_url(next(s for s in all_services(plan) if s.role == "router"))
    assert [w["instance_label"] for w in wdf.config(router, SETTINGS)["workers"]] == ["decode instance 0"]
    assert len(wdf.config(router, dict(SETTINGS, sglang_watchdog_single_node=True))["workers"]) == 3


def test_configuration_holds_the_plans_facts_as_they_are(plan):
    """The facts typed again (facts_from_dict) give the plan's dict form back, key for key: a prefill worker has its
    bootstrap port, a decode worker no such key."""
    router = with_router_url(next(s for s in all_services(plan) if s.role == "router"))
    cfg = wdf.config(router, dict(SETTINGS, sglang_watchdog_single_node=True))
    assert cfg["workers"] == router.as_dict()["watchdog"]["workers"]
    assert "bootstrap_port" in cfg["workers"][0] and "bootstrap_port" not in cfg["workers"][2]
    d0 = next(s for s in all_services(plan) if s.name == "sglang-decode-i0-r0")
    assert wdf.config(d0, SETTINGS)["members"] == d0.as_dict()["watchdog"]["members"]
    assert isinstance(wdf.facts_from_dict(d0.as_dict()["watchdog"]), wdf.RankWatch)
    with pytest.raises(ValueError, match="sglang-decode-i0-r0 is watched but has no watchdog facts"):
        wdf.config(dataclasses.replace(d0, watchdog=None), SETTINGS)


def test_facts_of_another_shape_are_refused_at_the_boundary(plan):
    """Facts not made by the planner (a plan edited by hand) are refused where the plan is typed, never a
    traceback in the renderer."""
    data = plan.as_dict()
    host = next(h for h in data["hosts"].values() if any(s["name"] == "sglang-decode-i0-r0" for s in h["services"]))
    d0 = next(s for s in host["services"] if s["name"] == "sglang-decode-i0-r0")
    d0["watchdog"]["members"] = ["sglang-decode-i0-r0"]
    with pytest.raises(ValueError, match="not a plan of this collection"):
        typed_plan(data)


def test_files_of_names_each_watchdog_file_as_the_renderer_writes_it():
    dirs = {"sglang_systemd_dir": "/etc/systemd/system", "sglang_etc_dir": "/etc/sglang",
            "sglang_watchdog_state_dir": "/var/lib/sglang-watchdog"}
    assert wdf.files_of(["sglang-decode-i0-r1"], dirs) == [
        "/etc/systemd/system/sglang-watchdog-sglang-decode-i0-r1.service",
        "/etc/sglang/sglang-decode-i0-r1.watchdog.json",
        "/var/lib/sglang-watchdog/sglang-decode-i0-r1.json"]
    assert wdf.files_of([], dirs) == []
