"""The controller's record of what a deployment runs, through the real ansible-playbook: plan.yml reads it from
sglang_state_dir (the operator's value given as -e, in all: vars and as the controller's host vars) and says, before
anything runs, which instances the plan no longer has (a host left the inventory), and which hosts an upgrade
changes with the waves it would take; retire.yml finds an instance of a host that left the inventory in it. Written
by deploy.yml, upgrade.yml and retire.yml on systemd hosts: Molecule pd_mixed (tasks/upgrade.yml, host_left.yml)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import typed_plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._fleet_record import fleet_record

from test_playbooks import ansible
from test_retire_playbook import FLEET, with_vars

pytestmark = pytest.mark.ansible
PROFILE = "qwen3_32b_a3_4c_mixed_6k_1k5_18ms"  # the fleet's


def _record(tmp_path: Path, state: Path) -> dict:
    """The record a deploy of the whole fleet (six replicas) leaves, from the plan the real plan.yml computes."""
    plan_file = tmp_path / "plan.json"
    ansible("ansible-playbook", "-i", str(FLEET), "ascend.sglang.plan", "-e", f"sglang_plan_file={plan_file}",
            cwd=tmp_path)
    plan = typed_plan(json.loads(plan_file.read_text())["plan"])
    record = fleet_record(plan, {h: {"ansible_host": f"192.0.2.{60 + i}"} for i, h in enumerate(sorted(plan.hosts))})
    state.mkdir(parents=True, exist_ok=True)
    (state / f"{plan.deployment or plan.profile}.json").write_text(json.dumps(record))
    return record


def _without_last_host(inv: Path) -> None:
    hosts = yaml.safe_load((inv / "hosts.yml").read_text())
    hosts["all"]["children"]["mixed"]["hosts"] = {f"a3-mixed-{i}": None for i in range(5)}
    (inv / "hosts.yml").write_text(yaml.safe_dump(hosts))


@pytest.mark.parametrize("how", ["extra-vars", "all-vars", "host-vars"])
def test_plan_says_what_the_plan_changes_of_the_recorded_deployment(tmp_path: Path, how: str) -> None:
    state = tmp_path / "records"
    _record(tmp_path, state)
    values = {"sglang_state_dir": str(state)}
    inv = with_vars(tmp_path, "all-vars" if how == "extra-vars" else how, {} if how == "extra-vars" else values)
    _without_last_host(inv)  # a3-mixed-5 left the inventory
    extra = ["-e", json.dumps(values)] if how == "extra-vars" else []
    proc = ansible("ansible-playbook", "-i", str(inv), "ascend.sglang.plan", "-e",
                   "sglang_python=/opt/sglang-next/bin/python3", *extra, cwd=tmp_path, check=False)
    out = proc.stdout
    assert proc.returncode == 0, out[-3000:]
    assert "Adds no instance." in out
    assert "Runs but no longer planned (retire.yml -e sglang_retire=mixed-i5): mixed instance 5 on a3-mixed-5" in out
    assert "a3-mixed-0: server interpreter python3 -> /opt/sglang-next/bin/python3" in out
    assert "wave 1: canary mixed instance 0 on a3-mixed-0" in out and "wave 5: mixed instance 4 on a3-mixed-4" in out


def test_without_a_record_everything_planned_is_new(tmp_path: Path) -> None:
    proc = ansible("ansible-playbook", "-i", str(FLEET), "ascend.sglang.plan", cwd=tmp_path)
    assert "No record of a running deployment (sglang_state_dir): everything planned is new." in proc.stdout


def test_retire_finds_the_instances_of_a_host_that_left_the_inventory_in_the_record(tmp_path: Path) -> None:
    """--check: the instance of a3-mixed-5 (no longer in the inventory) is found in the record by its host, the host
    is reached as the record says, and the instance leaves the router first; a name neither planned nor recorded is
    refused before any host is contacted. Every host is this machine (local connection) and the router's address is
    a closed loopback port: the run ends at the router step, contacting nothing else."""
    _record(tmp_path, tmp_path / "sglang-state")
    inv = with_vars(tmp_path, "all-vars", {"ansible_connection": "local", "ansible_python_interpreter": sys.executable})
    _without_last_host(inv)
    hosts = yaml.safe_load((inv / "hosts.yml").read_text())
    hosts["all"]["children"]["router"]["hosts"] = {"router-0": {"ansible_host": "127.0.0.1"}}
    (inv / "hosts.yml").write_text(yaml.safe_dump(hosts))
    proc = ansible("ansible-playbook", "-i", str(inv), "ascend.sglang.retire", "-e", "sglang_retire=mixed-i7",
                   cwd=tmp_path, check=False)
    assert proc.returncode != 0 and "mixed-i7 is neither an instance of the plan nor one of its hosts" in proc.stdout
    assert "(item=" not in proc.stdout  # refused in the retire set, before any host
    proc = ansible("ansible-playbook", "-i", str(inv), "ascend.sglang.retire", "-e", "sglang_retire=a3-mixed-5",
                   "-e", "sglang_restart_router_timeout=2", "--check", cwd=tmp_path, check=False)
    out = proc.stdout
    assert "Runs but no longer planned (retire.yml -e sglang_retire=mixed-i5): mixed instance 5 on a3-mixed-5" in out
    assert "ok: [localhost] => (item=a3-mixed-5)" in out  # reached as the record says
    assert "Retiring mixed instance 5 (sglang-mixed-i5-r0); out of sglang-router-i0 first." in out, out[-3000:]
    assert "(item=mixed instance 5 from sglang-router-i0)" in out
