"""ascend.sglang.retire through the real ansible-playbook: the operator's sglang_retire, given as -e, in the
inventory's all: vars and as the controller's host vars (Ansible's own tagged types), reaches the plan's check and
the retire set; a wrong one is refused before any host is contacted, with the reason. The retirement itself, on
systemd hosts behind the real router: Molecule pd_mixed (tasks/retire_replica.yml)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from test_playbooks import ROOT, ansible

pytestmark = pytest.mark.ansible
FLEET = ROOT / "inventories" / "mixed_fleet"  # six PD-mixed replicas behind the Rust router
PD32 = ROOT / "inventories" / "example"  # DeepSeek-R1 PD behind the mini load balancer


def retire(inventory: Path, *extra: str, cwd: Path = ROOT):
    return ansible("ansible-playbook", "-i", str(inventory), "ascend.sglang.retire", *extra, cwd=cwd, check=False)


def with_vars(tmp_path: Path, how: str, values: dict) -> Path:
    """The fleet inventory, plus the values in its all: vars or as the controller's host vars."""
    inv = tmp_path / "inv"
    inv.mkdir()
    (inv / "hosts.yml").write_text((FLEET / "hosts.yml").read_text())
    for sub in ("group_vars", "host_vars"):
        (inv / sub).mkdir()
        for path in (FLEET / sub).glob("*.yml"):
            (inv / sub / path.name).write_text(path.read_text())
    if how == "all-vars":
        data = yaml.safe_load((inv / "group_vars" / "all.yml").read_text())
        (inv / "group_vars" / "all.yml").write_text(yaml.safe_dump(dict(data, **values)))
    else:
        (inv / "host_vars" / "localhost.yml").write_text(yaml.safe_dump(dict(values, ansible_connection="local")))
    return inv


@pytest.mark.parametrize("how", ["extra-vars", "all-vars", "host-vars"])
def test_the_operators_value_reaches_the_retire_set(tmp_path: Path, how: str) -> None:
    values = {"sglang_retire": ["mixed-i9", "mixed-i1"]}
    if how == "extra-vars":
        proc = retire(FLEET, "-e", json.dumps(values), cwd=tmp_path)
    else:
        proc = retire(with_vars(tmp_path, how, values), cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    assert "sglang_retire: mixed-i9 is neither an instance of the plan nor one of its hosts" in out, out[-3000:]
    # Refused before any host was contacted (the fleet's hosts do not exist).
    assert "UNREACHABLE" not in out and "Take them out of the routers" not in out


def test_every_instance_of_a_role_and_a_mini_lb_router_are_refused(tmp_path: Path) -> None:
    keys = ",".join(f"mixed-i{i}" for i in range(6))
    proc = retire(FLEET, "-e", f"sglang_retire={keys}", cwd=tmp_path)
    assert proc.returncode != 0 and "would retire every mixed instance" in proc.stdout, proc.stdout[-3000:]
    proc = retire(PD32, "-e", "sglang_profile=deepseek_r1_pd32", "-e", "sglang_retire=a3-prefill-1", cwd=tmp_path)
    assert proc.returncode != 0 and "sglang-router-i0 runs --mini-lb (no worker API)" in proc.stdout, \
        proc.stdout[-3000:]
    # A value the settings table refuses is named as the other plan errors are.
    proc = retire(FLEET, "-e", '{"sglang_retire": [["mixed-i1"]]}', cwd=tmp_path)
    assert proc.returncode != 0 and "sglang_retire" in proc.stdout and "must be instance keys or inventory hosts" \
        in proc.stdout, proc.stdout[-3000:]
