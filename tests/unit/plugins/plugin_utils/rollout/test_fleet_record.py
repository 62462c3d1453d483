"""The controller's record of what a deployment runs (plugin_utils/rollout/_fleet_record.py): what it keeps, the
instances the plan no longer has, what plan.yml says the plan changes, and retire.yml's choice among them.
Pure Python on real plans; through the real playbooks: tests/integration/test_fleet_record_playbooks.py."""

from __future__ import annotations

import json

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import typed_plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._fleet_record import (
    day_two, day_two_lines, fleet_record, orphans)
from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._retire import retire_set

from tests.unit.plans import make_plan

PACKED = "qwen3_32b_a3_2c_mixed_3k5_1k5_50ms"


def _plan(per_host=2, mixed=2, **variables):
    return typed_plan(make_plan(PACKED, variables or None, host_vars={"sglang_instances_per_host": per_host},
                                mixed=mixed, router=1)[1])


def _record(plan, previous=None, retired=()):
    conn = {host: {"ansible_host": f"192.0.2.{i}", "ansible_connection": "ssh", "ansible_password": "hunter2-pw"}
            for i, host in enumerate(plan.hosts, 10)}
    return json.loads(json.dumps(fleet_record(plan, conn, previous, retired)))


def test_the_record_keeps_instances_hosts_and_how_to_reach_them_never_a_secret():
    plan = _plan()
    record = _record(plan)
    assert [i["key"] for i in record["instances"]] == ["mixed-i0", "mixed-i1", "mixed-i2", "mixed-i3"]
    assert all("env" not in svc for i in record["instances"] for svc in i["services"])
    assert set(record["hosts"]) == {"mixed0", "mixed1"}  # server hosts only
    assert record["hosts"]["mixed0"]["connection"] == {"ansible_host": "192.0.2.10", "ansible_connection": "ssh"}
    assert record["hosts"]["mixed0"]["runtime"]["python"]
    assert "hunter2-pw" not in json.dumps(record)
    assert day_two(plan, record, 1) == {"recorded": True, "add": [], "retire": [], "upgrade": {}, "waves": []}


def test_a_host_that_left_the_inventory_stays_recorded_until_retired():
    before = _record(_plan())
    after = _plan(mixed=1)  # mixed1 left the inventory
    gone = orphans(before, after)
    assert [i["key"] for i in gone] == ["mixed-i2", "mixed-i3"] and gone[0]["hosts"] == ["mixed1"]
    # The next deploy keeps them, with how to reach their host, until retire.yml retires them.
    kept = _record(after, before)
    assert [i["key"] for i in kept["instances"]] == ["mixed-i0", "mixed-i1", "mixed-i2", "mixed-i3"]
    assert kept["hosts"]["mixed1"] == before["hosts"]["mixed1"]
    changes = day_two(after, kept, 1)
    assert [r["key"] for r in changes["retire"]] == ["mixed-i2", "mixed-i3"]
    assert "Runs but no longer planned (retire.yml -e sglang_retire=mixed-i2,mixed-i3)" in day_two_lines(changes)[1]
    # retire.yml finds them by the host that left, or by key, from the record.
    rows = retire_set(after, ["mixed1"], record=kept)
    assert [r["key"] for r in rows] == ["mixed-i2", "mixed-i3"] and all(r["orphan"] for r in rows)
    assert rows[0]["services"][0]["inventory_host"] == "mixed1"
    assert [r["key"] for r in retire_set(after, ["mixed-i3", "mixed-i0"], record=kept)] == ["mixed-i3", "mixed-i0"]
    # Retired: gone from the record.
    done = _record(after, kept, retired=["mixed-i2", "mixed-i3"])
    assert [i["key"] for i in done["instances"]] == ["mixed-i0", "mixed-i1"] and set(done["hosts"]) == {"mixed0"}
    assert day_two(after, done, 1)["retire"] == []


def test_plan_says_which_instances_a_deploy_adds_and_which_an_upgrade_restarts_in_what_order():
    one = _record(_plan(per_host=2, mixed=1))
    assert day_two(_plan(per_host=4, mixed=1), one, 1)["add"] == ["mixed instance 2", "mixed instance 3"]
    # Instances are numbered across the hosts: more per host on two hosts moves mixed-i2 from mixed1 to mixed0, and
    # plan.yml says so before anything runs (the one on mixed1 runs on, no longer planned, until retired).
    record = _record(_plan(per_host=2))
    more = _plan(per_host=3)
    assert day_two(more, record, 1)["add"] == ["mixed instance 2", "mixed instance 4", "mixed instance 5"]
    assert day_two(more, record, 1)["retire"] == [{"key": "mixed-i2", "label": "mixed instance 2", "hosts": ["mixed1"]}]
    upgraded = _plan(per_host=2, sglang_python="/opt/sglang-next/bin/python3")
    changes = day_two(upgraded, record, 2)
    assert changes["upgrade"] == {h: ["server interpreter python3 -> /opt/sglang-next/bin/python3"]
                                  for h in ("mixed0", "mixed1")}
    assert changes["waves"] == ["wave 1: canary mixed instance 0 on mixed0",
                                "wave 2: mixed instance 1, mixed instance 2 on mixed0, mixed1",
                                "wave 3: mixed instance 3 on mixed1"]
    lines = day_two_lines(changes)
    assert lines[0] == "Adds no instance." and lines[1] == "Retires no instance."
    assert lines[2].startswith("Upgrade (upgrade.yml; deploy.yml refuses it on running servers): mixed0: ")
    assert day_two_lines(day_two(more, None, 1)) == [
        "No record of a running deployment (sglang_state_dir): everything planned is new."]
