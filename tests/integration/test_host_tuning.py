"""ascend.sglang.host_tuning's CPU governor step, against loopback (connection local) on a sysfs tree of its own:
it writes the governor of the CPUs that differ, changes nothing the second time, and, when this run's preflight
read the governors (deploy.yml), takes them from there without reading them again."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ansible_collections.ascend.sglang.plugins.module_utils.collect._host_probe import observe_governors

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
pytestmark = pytest.mark.ansible


def sysfs(tmp: Path, governors: dict[int, str | None]) -> Path:
    """cpu<N>/cpufreq/scaling_governor per CPU; None: a CPU without cpufreq (a VM's)."""
    base = tmp / "cpu"
    for cpu, value in governors.items():
        (base / f"cpu{cpu}").mkdir(parents=True, exist_ok=True)
        if value is not None:
            (base / f"cpu{cpu}" / "cpufreq").mkdir()
            (base / f"cpu{cpu}" / "cpufreq" / "scaling_governor").write_text(value + "\n", encoding="ascii")
    (base / "online").write_text("0-3\n", encoding="ascii")
    return base


def tune(tmp: Path, base: Path, preflight: dict | None = None, *flags: str) -> dict:
    """Runs the role; returns {task name: {changed, skipped}} of its governor tasks."""
    plan = {"hosts": {"h": {"services": [{"name": "s", "role": "mixed"}],
                            "host_tuning": {"cpu_governor": "performance", "sysctl": {}}}}}
    extra = {"sglang_plan": plan, "sglang_cpu_sysfs_dir": str(base), "sglang_host_tuning_sysctl": False}
    if preflight is not None:
        extra["sglang_preflight_result"] = preflight
    (tmp / "vars.json").write_text(json.dumps(extra), encoding="utf-8")
    book = [{"hosts": "h", "gather_facts": False, "connection": "local",
             "vars": {"ansible_python_interpreter": sys.executable},
             "roles": [{"role": "ascend.sglang.host_tuning"}]}]
    (tmp / "play.yml").write_text(yaml.safe_dump(book), encoding="utf-8")
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_DISPLAY_SKIPPED_HOSTS="1", ANSIBLE_DISPLAY_OK_HOSTS="1")
    proc = subprocess.run([str(BIN / "ansible-playbook"), "-i", "h,", str(tmp / "play.yml"), "-e",
                           f"@{tmp / 'vars.json'}", *flags], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    # The default output: "TASK [role : name] ***" then "ok: [h]", "changed: [h]" or "skipping: [h]".
    got = {}
    for block in proc.stdout.split("\nTASK [")[1:]:
        name = block.split("]", 1)[0].split(" : ", 1)[-1]
        status = re.search(r"^(ok|changed|skipping): \[h\]", block, re.M)
        if "governor" in name and status:
            got[name] = {"changed": status.group(1) == "changed", "skipped": status.group(1) == "skipping"}
    return got


def governors(base: Path) -> dict[str, str]:
    return {p.parent.parent.name: p.read_text().strip() for p in sorted(base.glob("cpu*/cpufreq/scaling_governor"))}


def test_preflight_reads_every_cpu_governor(tmp_path: Path) -> None:
    base = sysfs(tmp_path, {0: "powersave", 1: "performance", 2: None})
    assert observe_governors(str(base)) == {str(base / "cpu0/cpufreq/scaling_governor"): "powersave",
                                            str(base / "cpu1/cpufreq/scaling_governor"): "performance"}
    assert observe_governors(str(tmp_path / "none")) == {}


def test_the_governors_that_differ_are_written_then_nothing_changes(tmp_path: Path) -> None:
    base = sysfs(tmp_path, {0: "powersave", 1: "performance", 2: "ondemand", 3: None})
    tune(tmp_path, base, None, "--check")  # writes nothing (the write is a command: skipped in check mode)
    assert governors(base) == {"cpu0": "powersave", "cpu1": "performance", "cpu2": "ondemand"}
    first = tune(tmp_path, base)
    assert not first["Read the current governor of every CPU"].get("skipped")
    assert first["Write the governor where it differs"].get("changed")
    assert governors(base) == {"cpu0": "performance", "cpu1": "performance", "cpu2": "performance"}
    again = tune(tmp_path, base)
    assert again["Write the governor where it differs"].get("skipped")


def test_the_governors_preflight_read_are_not_read_again(tmp_path: Path) -> None:
    """deploy.yml: the preflight's call read them (observed.governors); the role writes what differs there."""
    base = sysfs(tmp_path, {0: "powersave", 1: "performance"})
    seen = {"observed": {"governors": observe_governors(str(base))}}
    got = tune(tmp_path, base, seen)
    assert got["Read the current governor of every CPU"].get("skipped")
    assert got["Write the governor where it differs"].get("changed")
    assert governors(base) == {"cpu0": "performance", "cpu1": "performance"}
    # A preflight that did not run (sglang_preflight_skip) leaves a skipped result: the role reads them itself.
    base0 = base / "cpu0" / "cpufreq" / "scaling_governor"
    base0.write_text("powersave\n", encoding="ascii")
    skipped = tune(tmp_path, base, {"skipped": True, "changed": False})
    assert not skipped["Read the current governor of every CPU"].get("skipped")
    assert governors(base)["cpu0"] == "performance"
