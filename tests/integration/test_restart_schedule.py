"""restart.yml's and upgrade.yml's schedules through the real ansible-playbook: the operator's sglang_restart_batch
and sglang_restart_only, given as -e, in the inventory's all: vars and as the controller's host vars (Ansible's own
tagged types), reach the plan resolved (a count of instances, the planned keys) and the batches and waves are cut
from that. The restarts themselves, on systemd hosts behind the real router: Molecule pd_mixed
(tasks/packed_batches.yml, ops_restart.yml)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from test_fleet_record_playbooks import _record
from test_playbooks import ansible
from test_retire_playbook import with_vars

pytestmark = pytest.mark.ansible
# 34% of the fleet's six replicas: two instances at a time; three instances named as an operator types them.
VALUES = {"sglang_restart_batch": "34%", "sglang_restart_only": "mixed-i4, mixed-i0,mixed-i2"}


def _unreachable(inv: Path) -> None:
    """Every host's connection refused at once (a closed port on the loopback), its planned address kept: the run
    stops at the first host task, after the schedule is shown, and no host is touched."""
    for path in (inv / "host_vars").glob("*.yml"):
        if path.name == "localhost.yml":
            continue
        data = yaml.safe_load(path.read_text()) or {}
        data.update(sglang_host_ip=data["ansible_host"], ansible_host="127.0.0.1", ansible_port=9)
        path.write_text(yaml.safe_dump(data))
    hosts = yaml.safe_load((inv / "hosts.yml").read_text())
    hosts["all"]["children"]["router"]["hosts"]["router-0"] = {"ansible_host": "127.0.0.1", "ansible_port": 9}
    (inv / "hosts.yml").write_text(yaml.safe_dump(hosts))


def _inventory(tmp_path: Path, how: str, values: dict) -> "tuple[Path, list[str]]":
    inv = with_vars(tmp_path, "all-vars" if how == "extra-vars" else how, {} if how == "extra-vars" else values)
    return inv, (["-e", json.dumps(values)] if how == "extra-vars" else [])


@pytest.mark.parametrize("how", ["extra-vars", "all-vars", "host-vars"])
def test_the_operators_batch_and_instances_reach_the_restart_schedule(tmp_path: Path, how: str) -> None:
    inv, extra = _inventory(tmp_path, how, VALUES)
    plan_file = tmp_path / "plan.json"
    ansible("ansible-playbook", "-i", str(inv), "ascend.sglang.plan", "-e", f"sglang_plan_file={plan_file}", *extra,
            cwd=tmp_path)
    settings = json.loads(plan_file.read_text())["plan"]["settings"]
    assert settings["sglang_restart_batch"] == 2
    assert settings["sglang_restart_only"] == ["mixed-i0", "mixed-i2", "mixed-i4"]

    _unreachable(inv)
    proc = ansible("ansible-playbook", "-i", str(inv), "ascend.sglang.restart", *extra, cwd=tmp_path, check=False)
    out = proc.stdout
    assert "batch 1 of 2: mixed instance 0, mixed instance 2" in out, out[-3000:]
    assert "batch 2 of 2: mixed instance 4" in out, out[-3000:]
    assert proc.returncode != 0  # no host answers


@pytest.mark.parametrize("how", ["extra-vars", "host-vars"])
def test_a_key_the_plan_lacks_is_refused_before_any_host(tmp_path: Path, how: str) -> None:
    inv, extra = _inventory(tmp_path, how, {"sglang_restart_only": "mixed-i9,mixed-i1"})
    proc = ansible("ansible-playbook", "-i", str(inv), "ascend.sglang.restart", *extra, cwd=tmp_path, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    assert "sglang_restart_only" in out and "mixed-i9 is not an instance of the plan" in out, out[-3000:]
    assert "UNREACHABLE" not in out and "batch 1 of" not in out


@pytest.mark.parametrize("how", ["extra-vars", "all-vars", "host-vars"])
def test_the_operators_batch_reaches_the_upgrade_waves(tmp_path: Path, how: str) -> None:
    state = tmp_path / "records"
    _record(tmp_path, state)
    values = {"sglang_state_dir": str(state), "sglang_restart_batch": "50%"}
    inv, extra = _inventory(tmp_path, how, values)
    proc = ansible("ansible-playbook", "-i", str(inv), "ascend.sglang.plan", "-e",
                   "sglang_python=/opt/sglang-next/bin/python3", *extra, cwd=tmp_path, check=False)
    out = proc.stdout
    assert proc.returncode == 0, out[-3000:]
    # One canary, then three of the six at a time (50%), then the last two.
    assert "wave 1: canary mixed instance 0 on a3-mixed-0" in out, out[-3000:]
    assert "wave 2: mixed instance 1, mixed instance 2, mixed instance 3" in out, out[-3000:]
    assert "wave 3: mixed instance 4, mixed instance 5" in out, out[-3000:]
