"""A few broken inventories end to end, through ansible-playbook: each stops the run on the controller before any
host task, with the text naming the group, host and variable (the whole table runs as a unit test:
tests/unit/plugins/plugin_utils/plan/test_refused_inputs.py).  These prove what the unit test assumes of Ansible:
how the inventory's all-vars, group vars and host vars reach the plan, templating, check mode and render mode.

The hosts of these inventories do not exist: had any play after the plan started, it would have tried to reach
them; the tests assert no later play began.
"""

from __future__ import annotations

import concurrent.futures
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from unit.broken_inputs import CASES  # noqa: E402  # pylint: disable=wrong-import-position

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
pytestmark = pytest.mark.ansible

# (case, playbook, extra arguments): the classes only Ansible can show.
END_TO_END = [
    ("value that cannot be templated", "playbooks/deploy.yml", []),
    ("misspelled variable of a group", "playbooks/deploy.yml", []),
    ("runtime set for one group", "playbooks/deploy.yml", ["--check"]),
    ("misspelled deployment variable", "playbooks/render.yml", ["-e", "sglang_render_dir={dir}/rendered"]),
    ("secrets set for one group", "playbooks/deploy.yml", []),
    ("typo'd flag in an override", "playbooks/deploy.yml", []),
    ("image archive missing on the controller", "playbooks/deploy.yml", []),
]
BY_NAME = {name: (case, expected) for name, case, expected in CASES}


def inventory_file(case: dict, path: Path) -> Path:
    children = {group: {"hosts": hosts, "vars": case.get("group_vars", {}).get(group, {})}
                for group, hosts in case["groups"].items()}
    path.write_text(yaml.safe_dump({"all": {"vars": case["vars"], "children": children}}), encoding="utf-8")
    return path


def run(name: str, playbook: str, extra: list, directory: Path) -> subprocess.CompletedProcess:
    case = BY_NAME[name][0]
    inv = inventory_file(case, directory / "inventory.yml")
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_DEPRECATION_WARNINGS="0")
    return subprocess.run(
        [str(BIN / "ansible-playbook"), "-i", str(inv), str(ROOT / playbook), "-e", f"sglang_profile={case['profile']}"]
        + [arg.replace("{dir}", str(directory)) for arg in extra], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> dict[str, subprocess.CompletedProcess]:
    """Two runs side by side (the CI machine has two cores): each spends most of its time starting Ansible."""
    root = tmp_path_factory.mktemp("broken")
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futures = {}
        for index, (name, playbook, extra) in enumerate(END_TO_END):
            (root / f"case{index}").mkdir()
            futures[name] = pool.submit(run, name, playbook, extra, root / f"case{index}")
        return {name: future.result() for name, future in futures.items()}


@pytest.mark.parametrize("name", [c[0] for c in END_TO_END])
def test_broken_input_stops_before_any_host_task(name: str, outputs) -> None:
    proc = outputs[name]
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    assert "hunter2" not in out  # a refused secret is never echoed
    assert " ".join(BY_NAME[name][1].split()) in " ".join(out.split()), out[-3000:]
    plays = [line.split(" ***")[0] for line in out.splitlines() if line.startswith("PLAY [")]
    assert plays and set(plays) == {"PLAY [Plan the SGLang deployment]"}, plays
