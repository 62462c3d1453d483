"""The filters that choose a deploy.yml play's hosts once, when the play starts, instead of a condition on every
host's task (plugins/filter/sglang_rollout.py sglang_gate_hosts, plugins/filter/sglang_operations.py
sglang_runtime_due): given hostvars as Ansible gives them (host -> that host's variables)."""

from __future__ import annotations

import base64
import json

from ansible_collections.ascend.sglang.plugins.filter.sglang_operations import sglang_runtime, sglang_runtime_due
from ansible_collections.ascend.sglang.plugins.filter.sglang_rollout import sglang_gate_hosts

from tests.unit.planned_fleets import MIXED

QUIET = {"start": [], "stop_services": [], "pause_watchdogs": [], "daemon_reload": False}


def _files(*healthy: bool) -> dict:
    names = [f"sglang-mixed-i{n}" for n in range(len(healthy))]
    return {"services": [{"name": n} for n in names], "stale_watchdogs": [],
            "health": {n: {"healthy": ok, "status": "200" if ok else "503"} for n, ok in zip(names, healthy)}}


def test_the_gate_asks_the_hosts_that_restarted_or_were_not_healthy_and_every_host_it_knows_nothing_of() -> None:
    decisions = {"m0": QUIET, "m1": dict(QUIET, start=[{"unit": "sglang-mixed-i0.service"}]), "m2": QUIET}
    hostvars = {"m0": {"__sglang_files": _files(True), "__sglang_rollout": decisions},
                "m1": {"__sglang_files": _files(True), "__sglang_rollout": decisions},
                "m2": {"__sglang_files": _files(True, False), "__sglang_rollout": decisions},
                "m3": {}}
    assert sglang_gate_hosts(["m0", "m1", "m2", "m3", "gone"], hostvars) == ["m1", "m2", "m3", "gone"]
    assert sglang_gate_hosts(["m0"], {}) == ["m0"]  # no hostvars (a syntax check): every host


def _read(value) -> dict:
    return {"content": base64.b64encode(json.dumps(value, indent=4).encode()).decode()}


def test_the_record_is_written_where_it_is_missing_or_differs_from_the_plan() -> None:
    planned = {host: sglang_runtime(MIXED, host) for host in ("m0", "m1")}
    hostvars = {"localhost": {"sglang_plan": MIXED},
                "m0": {"__sglang_runtime_file": _read(planned["m0"])},
                "m1": {"__sglang_runtime_file": _read(dict(planned["m1"], sglang="0.0.1"))}}
    assert sglang_runtime_due(["m0", "m1"], hostvars) == ["m1"]
    hostvars["m1"] = {"__sglang_runtime_file": {"failed": False, "msg": "file not found"}}  # a first deploy
    assert sglang_runtime_due(["m0", "m1"], hostvars) == ["m1"]
    assert sglang_runtime_due(["m0", "m1"], {}) == ["m0", "m1"]  # no plan to compare with: written
