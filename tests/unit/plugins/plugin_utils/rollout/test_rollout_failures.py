"""The filter that gathers a rollout's failures for the collection and the final error (plugins/filter/sglang_operations.py)."""

from __future__ import annotations

from ansible_collections.ascend.sglang.plugins.filter.sglang_operations import sglang_rollout_failures


def test_records_in_host_order_each_host_once_and_unknown_hosts_skipped():
    hostvars = {"p0": {"sglang_rollout_failure": {"host": "p0", "step": "health gate", "msg": "not healthy"}},
                "p1": {}, "localhost": {"sglang_rollout_failure": {"host": "localhost", "step": "restart", "msg": "x"}},
                "d0": {"sglang_rollout_failure": "not a record"}}
    found = sglang_rollout_failures(hostvars, ["localhost", "p1", "p0", "d0", "gone", "p0"])
    assert [f["host"] for f in found] == ["localhost", "p0"]
    assert sglang_rollout_failures(hostvars, []) == []
