"""ascend.sglang.upgrade through the real ansible-playbook: the operator's upgrade values, given as -e, in the
inventory's all: vars and as the controller's host vars (Ansible's own tagged types), reach the plan's check; a
wrong one is refused before any host is contacted. The upgrade itself (canary, benchmark gate, waves, rollback of a
failed canary) on systemd hosts behind the real router: Molecule pd_mixed (tasks/upgrade.yml)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from test_playbooks import ROOT, ansible
from test_retire_playbook import FLEET, with_vars

pytestmark = pytest.mark.ansible


def upgrade(inventory: Path, *extra: str, cwd: Path = ROOT):
    return ansible("ansible-playbook", "-i", str(inventory), "ascend.sglang.upgrade", *extra, cwd=cwd, check=False)


@pytest.mark.parametrize("how", ["extra-vars", "all-vars", "host-vars"])
@pytest.mark.parametrize("values,error", [
    ({"sglang_upgrade_tpot_factor": 0.5}, "must be a number from 1 to 100, got a number 0.5"),
    ({"sglang_upgrade_tpot_factor": "fast"}, "must be a number from 1 to 100, got a string"),
    ({"sglang_upgrade_bench_prompts": 0}, "sglang_upgrade_bench_prompts"),
    ({"sglang_generation_dir": "relative/dir"}, "sglang_generation_dir"),
])
def test_the_operators_values_reach_the_plans_check(tmp_path: Path, how: str, values: dict, error: str) -> None:
    if how == "extra-vars":
        proc = upgrade(FLEET, "-e", json.dumps(values), cwd=tmp_path)
    else:
        inv = with_vars(tmp_path, how, values)
        if how == "host-vars" and "sglang_generation_dir" in values:
            # A host's own setting: in a server host's vars (the controller's would not apply to it).
            host = inv / "host_vars" / "a3-mixed-2.yml"
            host.write_text(host.read_text() + yaml.safe_dump(values))
        proc = upgrade(inv, cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    assert error in out, out[-3000:]
    # Refused in the plan, before any host was contacted (the fleet's hosts do not exist).
    assert "UNREACHABLE" not in out and "Keep this host's server files" not in out
