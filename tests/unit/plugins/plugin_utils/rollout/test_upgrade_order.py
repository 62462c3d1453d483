"""The order of an upgrade (plugin_utils/rollout/_upgrade.py): canaries, waves with the roles in step, and what a
failed wave puts back."""

from __future__ import annotations

import itertools

import pytest

from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._upgrade import (
    due_keys, not_ready, record_due, rollback, upgrade_waves)


def _rows(prefill: int = 0, decode: int = 0, mixed: int = 0, nodes: int = 1) -> list[dict]:
    rows = []
    for role, count in (("prefill", prefill), ("decode", decode), ("mixed", mixed)):
        for i in range(count):
            key = f"{role}-i{i}"
            services = [{"name": f"sglang-{role}-i{i}-r{r}", "inventory_host": f"{role}-{i}-{r}",
                         "health_url": "http://x/health" if r == 0 else None} for r in range(nodes)]
            rows.append({"key": key, "role": role, "instance": i, "label": f"{role} instance {i}",
                         "hosts": [s["inventory_host"] for s in services], "services": services,
                         "rank0": services[0], "worker": {}, "role_instances": count})
    return rows


def test_one_canary_per_role_first_then_the_others_in_waves():
    waves = upgrade_waves(_rows(prefill=2, decode=4), 2)
    assert waves[0]["canary"] and waves[0]["instance_keys"] == ["prefill-i0", "decode-i0"]
    assert waves[0]["label"] == "canary prefill instance 0, decode instance 0"
    assert [w["instance_keys"] for w in waves[1:]] == [["decode-i1", "decode-i2"], ["prefill-i1", "decode-i3"]]
    assert [w["number"] for w in waves] == [1, 2, 3] and {w["count"] for w in waves} == {3}
    assert not any(w["canary"] for w in waves[1:])


def test_a_mixed_deployment_upgrades_one_canary_then_batches():
    waves = upgrade_waves(_rows(mixed=5), 2)
    assert [w["instance_keys"] for w in waves] == [["mixed-i0"], ["mixed-i1", "mixed-i2"], ["mixed-i3", "mixed-i4"]]
    assert waves[1]["services"] == [s for k in (1, 2) for s in _rows(mixed=5)[k]["services"]]


@pytest.mark.parametrize("prefill,decode,size", list(itertools.product(range(1, 7), range(1, 9), (1, 2, 3))))
def test_the_roles_stay_in_step(prefill, decode, size):
    """After every wave (and within it), the upgraded share of prefill and decode differ by at most one instance:
    the P:D ratio of the instances in service stays within one instance of the plan's."""
    waves = upgrade_waves(_rows(prefill=prefill, decode=decode), size)
    keys = [k for w in waves for k in w["instance_keys"]]
    assert sorted(keys) == sorted(r["key"] for r in _rows(prefill=prefill, decode=decode))
    assert all(len(w["instance_keys"]) <= size for w in waves[1:])
    done = {"prefill": 0, "decode": 0}
    for key in keys:
        done[key.split("-")[0]] += 1
        # prefill's progress in decode's units, against decode's own: one instance apart at most
        assert abs(done["prefill"] * decode / prefill - done["decode"]) <= max(1, decode / prefill) + 1e-9
        assert abs(done["decode"] * prefill / decode - done["prefill"]) <= max(1, prefill / decode) + 1e-9


def test_a_role_of_one_instance_is_wholly_out_with_its_canary():
    waves = upgrade_waves(_rows(prefill=1, decode=3), 1)
    assert waves[0]["whole_roles"] == ["prefill"] and waves[0]["whole_role"]
    assert not any(w["whole_role"] for w in waves[1:])


def test_nothing_to_upgrade_has_no_wave():
    assert upgrade_waves([], 1) == []
    with pytest.raises(ValueError):
        upgrade_waves(_rows(mixed=1), 0)


def test_a_failed_canary_puts_every_instance_back_and_restarts_only_the_canary():
    waves = upgrade_waves(_rows(prefill=2, decode=2, nodes=2), 1)
    back = rollback(waves, 1)
    assert back["restart"] == ["prefill-i0", "decode-i0"]
    assert sorted(back["restore"]) == ["decode-i0", "decode-i1", "prefill-i0", "prefill-i1"]
    assert back["upgraded"] == []
    assert back["services"]["prefill-0-1"] == ["sglang-prefill-i0-r1"]
    assert set(back["hosts"]) == {f"{r}-{i}-{n}" for r in ("prefill", "decode") for i in (0, 1) for n in (0, 1)}


def test_a_failed_later_wave_keeps_the_earlier_ones_upgraded():
    waves = upgrade_waves(_rows(mixed=4), 1)
    back = rollback(waves, 3)
    assert back == {"restore": ["mixed-i2", "mixed-i3"], "restart": ["mixed-i2"],
                    "upgraded": ["mixed-i0", "mixed-i1"],
                    "services": {"mixed-2-0": ["sglang-mixed-i2-r0"], "mixed-3-0": ["sglang-mixed-i3-r0"]},
                    "hosts": ["mixed-2-0", "mixed-3-0"]}
    with pytest.raises(ValueError, match="no upgrade wave 9"):
        rollback(waves, 9)


def test_the_instances_to_upgrade_are_those_the_fleet_restarts():
    rows = _rows(prefill=1, decode=2, nodes=2)
    decisions = {"decode-1-1": {"restart": ["sglang-decode-i1-r1"]}, "prefill-0-0": {"restart": []}}
    assert due_keys(rows, decisions) == ["decode-i1"]


def test_an_upgrade_starts_from_a_deployment_that_runs_its_files():
    rows = _rows(mixed=2)
    ok = {"state": "active", "pending": [], "health": "200"}
    status = {"mixed-0-0": {"services": {"sglang-mixed-i0-r0": ok}},
              "mixed-1-0": {"services": {"sglang-mixed-i1-r0": dict(ok, pending=[{"reason": "its files changed"}])}}}
    assert not_ready(rows, status) == [
        "sglang-mixed-i1-r0 on mixed-1-0 (mixed-i1) runs other files than its own (its files changed)"]
    status["mixed-0-0"]["services"]["sglang-mixed-i0-r0"] = dict(ok, health="503")
    del status["mixed-1-0"]
    assert not_ready(rows, status) == ["sglang-mixed-i0-r0 on mixed-0-0 (mixed-i0) is not healthy (503)",
                                       "sglang-mixed-i1-r0 on mixed-1-0 (mixed-i1) does not run (not reported)"]


def test_the_runtime_a_host_runs_and_how_the_plan_changes_it():
    from types import SimpleNamespace as NS
    from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._upgrade import (
        runtime_change, runtime_identity)
    servers = [NS(role="mixed", python="/opt/sglang/bin/python3"), NS(role="router", python="/opt/r/bin/python3")]
    plan = NS(hosts={"h": NS(services=servers)}, releases={"sglang": "0.5.9"}, container=None, runtime="host")
    now = runtime_identity(plan, "h")
    assert now == {"sglang": "0.5.9", "image": None, "python": ["/opt/sglang/bin/python3"]}
    assert runtime_identity(plan, "elsewhere") == {"sglang": "0.5.9", "image": None, "python": []}
    # Nothing recorded (a first deploy, or one before the record): no change to refuse.
    assert runtime_change(None, now) == [] and runtime_change(now, now) == []
    later = dict(now, sglang="0.5.10", python=["/opt/sglang-0.5.10/bin/python3"])
    assert runtime_change(now, later) == ["SGLang release 0.5.9 -> 0.5.10",
                                          "server interpreter /opt/sglang/bin/python3 -> /opt/sglang-0.5.10/bin/python3"]
    boxed = NS(hosts=plan.hosts, releases=plan.releases, container=NS(image="reg/sglang:b"), runtime="container")
    assert runtime_change(dict(now, image="reg/sglang:a"), dict(runtime_identity(boxed, "h"), python=now["python"])) \
        == ["container image reg/sglang:a -> reg/sglang:b"]


def test_the_runtime_record_is_written_only_where_it_differs_from_the_plan() -> None:
    planned = {"sglang": "0.5.10", "image": None, "python": ["/opt/sglang/bin/python"]}
    same = '{\n    "image": null,\n    "python": [\n        "/opt/sglang/bin/python"\n    ],\n    "sglang": "0.5.10"\n}\n'
    assert not record_due(same, planned)
    assert not record_due('{"sglang": "0.5.10", "image": null, "python": ["/opt/sglang/bin/python"]}', planned)
    assert record_due(same.replace("0.5.10", "0.5.9"), planned)
    assert record_due(None, planned)  # no record: a first deploy
    assert record_due("not json", planned)
    assert record_due("{}", planned)
