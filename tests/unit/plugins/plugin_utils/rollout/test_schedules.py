"""The schedule of each day-two operation (plugin_utils/rollout/_schedules.py, stage/_stage_schedule.py): one call
types the plan once and gives what the playbook loops over (batches, waves' candidates, retired instances, a
stage's rounds), the routers, labels and each host's settings. Pure Python on real plans; the playbooks:
tests/integration/test_restart_schedule.py, test_retire_playbook.py, test_upgrade_playbook.py,
test_stage_playbook.py."""

from __future__ import annotations

import dataclasses

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.ascend.sglang.plugins.filter import sglang_schedules as filters
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import typed_plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout import _schedules as sched
from ansible_collections.ascend.sglang.plugins.plugin_utils.stage._stage_schedule import stage_inputs, stage_schedule
from ansible_collections.ascend.sglang.tests.unit.planned_fleets import PD, PD_RUST, MIXED, make_plan


def _with(plan: dict, **settings) -> dict:
    return dict(plan, settings=dict(plan["settings"], **settings))


def _services(value):
    """Every service dict anywhere in a schedule."""
    if isinstance(value, dict):
        found = [value] if "inventory_host" in value and "name" in value else []
        return found + [s for v in value.values() for s in _services(v)]
    if isinstance(value, list):
        return [s for v in value for s in _services(v)]
    return []


def test_a_restart_schedule_holds_the_batches_routers_and_each_hosts_settings() -> None:
    got = filters.sglang_restart_schedule(_with(PD_RUST, sglang_restart_batch=2), {})
    # Two prefill instances, one decode instance of two nodes (d0, d1).
    assert [b["label"] for b in got["steps"]] == ["prefill instance 0, prefill instance 1", "decode instance 0"]
    assert got["only"] == ["prefill-i0", "prefill-i1", "decode-i0"] and not got["pending"]
    assert [r["name"] for r in got["api_routers"]] == [r["name"] for r in got["routers"]]
    assert set(got["hosts"]) == {"p0", "p1", "d0", "d1"}
    assert got["hosts"]["p0"] == typed_plan(PD_RUST).hosts["p0"].settings
    assert [b["number"] for b in got["whole_role_batches"]] == [1]
    # The schedule is kept in a fact and shown: no service in it carries its environment.
    assert _services(got) and not [s for s in _services(got) if "env" in s]


def test_a_mini_lb_router_has_no_worker_api_and_pending_reads_the_hosts_status() -> None:
    plan = _with(PD, sglang_restart_only="pending")
    status = {"d1": {"services": {"sglang-decode-i0-r1": {"pending": [{"reason": "files changed"}]}}}}
    hostvars = {"d1": {"sglang_status_result": status["d1"]}}
    got = filters.sglang_restart_schedule(plan, hostvars)
    assert got["pending"] and got["only"] == ["decode-i0"] and got["api_routers"] == []
    assert [b["label"] for b in got["steps"]] == ["decode instance 0"] and list(got["hosts"]) == ["d0", "d1"]


def test_a_plan_not_made_by_the_planner_is_refused_naming_the_variable() -> None:
    with pytest.raises(AnsibleFilterError, match="sglang_restart_batch: the count of instances"):
        filters.sglang_restart_schedule(_with(MIXED, sglang_restart_batch="50%"))


def test_an_upgrade_schedule_then_its_waves_without_the_plan() -> None:
    plan = _with(PD_RUST, sglang_restart_batch=1)
    got = filters.sglang_upgrade_schedule(plan, {}, ["p0", "p1", "d0", "d1", "spare"])
    # Nothing reported yet: every rank is named as not running.
    assert len(got["not_ready"]) == sum(len(row["services"]) for row in got["steps"]) and got["in_place"] == []
    assert got["hosts"]["p0"]["generation"][0]["name"].startswith("sglang-prefill-i0")
    assert got["hosts"]["spare"]["generation"] == []
    decisions = {"p0": {"restart": [svc["name"] for svc in got["steps"][0]["services"]]},
                 "d1": {"restart": [got["steps"][2]["services"][1]["name"]]}}
    waves = filters.sglang_upgrade_waves(got, decisions)
    assert [w["line"].split(" on ")[0] for w in waves] == ["wave 1: canary prefill instance 0, decode instance 0"]
    with pytest.raises(AnsibleFilterError, match="takes the schedule"):
        filters.sglang_upgrade_waves(plan, decisions)


def test_an_in_place_install_is_named() -> None:
    plan = typed_plan(PD_RUST)
    hosts = dict(plan.hosts)
    hosts["d0"] = dataclasses.replace(hosts["d0"], settings=dict(hosts["d0"].settings, sglang_server_install=True))
    got = sched.upgrade_schedule(dataclasses.replace(plan, hosts=hosts), {}, ["p0", "d0"]).as_dict()
    assert got["in_place"] == ["d0"]


def test_a_retire_schedule_holds_the_instances_their_files_and_hosts() -> None:
    got = filters.sglang_retire_schedule(_with(PD_RUST, sglang_retire=["p1"]))
    assert got["keys"] == ["prefill-i1"] and [s["inventory_host"] for s in got["services"]] == ["p1"]
    assert {f["host"] for f in got["files"]} == {"p1"} and list(got["hosts"]) == ["p1"]
    assert "sglang_watchdog_state_dir" in got["hosts"]["p1"]
    with pytest.raises(AnsibleFilterError, match="would retire every prefill instance"):
        filters.sglang_retire_schedule(_with(PD_RUST, sglang_retire=["p0", "p1"]))


def test_a_stage_from_its_inputs_and_what_the_hosts_observed() -> None:
    data = make_plan("qwen3_32b_a3_2c_mixed_2k_2k_50ms", {"mixed": ["m0", "m1"], "router": ["r0"]},
                     {"sglang_model_source": "w:/export/M"})
    inputs = stage_inputs(typed_plan(data), ["m0", "m1", "gone"]).as_dict()
    assert inputs["hosts"]["m0"]["models"] == [{"path": "/m", "source": "w:/export/M"}]
    assert inputs["hosts"]["gone"]["models"] == [] and inputs["hosts"]["gone"]["address"] == "gone"
    assert inputs["options"]["sglang_stage_verify"] == data["settings"]["sglang_stage_verify"]
    files = {"a.safetensors": [10, 1]}
    observed = {"m0": {"models": [{"path": "/m", "files": files, "free": 100, "source": files}],
                       "addresses": ["10.0.0.11"]},
                "m1": {"models": [{"path": "/m", "files": {}, "free": 100, "source": files}]}}
    got = stage_schedule(inputs, observed, "tok")
    assert got["lines"][-1].startswith("round 1: m1 receives /m from m0")
    pull = got["parts"]["m1"][0]["pulls"][0]
    assert pull["source"] == f"rsync://{inputs['hosts']['m0']['address']}:{inputs['hosts']['m0']['port']}/sglang-tok-0/"
    assert got["parts"]["m0"][0]["serve"] == [{"name": "sglang-tok-0", "path": "/m"}]
    assert got["parts"]["gone"] == [{"serve": [], "allow": [], "pulls": []}]
    observed["m1"]["models"][0]["free"] = 1
    with pytest.raises(ValueError, match="host m1: /m needs"):
        stage_schedule(inputs, observed, "tok")
