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


def planned(tmp: Path, **host_vars) -> dict:
    """A real plan of one PD-mixed host "h" whose kernel settings are read and written under tmp."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._planner import plan
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import load_profile
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._topology import build_inventory
    own = {"sglang_host_ip": "10.0.0.11", "sglang_nic": "eth0", "sglang_proc_sys_dir": str(tmp / "proc-sys"),
           "sglang_sysctl_dir": str(tmp / "sysctl.d"), "sglang_host_tuning_governor": False, **host_vars}
    groups = {"prefill": [], "decode": [], "mixed": ["h"], "router": []}
    variables = {"sglang_model_path": "/m", "sglang_draft_model_path": "/d"}
    return plan(load_profile("qwen3_32b_a3_2c_mixed_2k_2k_50ms"), build_inventory(groups, {"h": own}, variables)).as_dict()


def proc_sys(tmp: Path, values: dict[str, str]) -> Path:
    for name, value in values.items():
        path = tmp / "proc-sys" / name.replace(".", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(value + "\n", encoding="ascii")
    return tmp / "proc-sys"


def tune_sysctl(tmp: Path, plan: dict, *flags: str) -> subprocess.CompletedProcess:
    (tmp / "vars.json").write_text(json.dumps({"sglang_plan": plan}), encoding="utf-8")
    book = [{"hosts": "h", "gather_facts": False, "connection": "local",
             "vars": {"ansible_python_interpreter": sys.executable},
             "roles": [{"role": "ascend.sglang.host_tuning"}]}]
    (tmp / "play.yml").write_text(yaml.safe_dump(book), encoding="utf-8")
    env = dict(os.environ, ANSIBLE_NOCOLOR="1")
    return subprocess.run([str(BIN / "ansible-playbook"), "-i", "h,", str(tmp / "play.yml"), "-e",
                           f"@{tmp / 'vars.json'}", *flags], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300, check=False)


def live(base: Path) -> dict[str, str]:
    return {str(p.relative_to(base)): p.read_text() for p in sorted(base.rglob("*")) if p.is_file()}


def test_the_kernel_settings_are_persisted_and_the_live_values_that_differ_applied_in_one_call(tmp_path: Path) -> None:
    plan = planned(tmp_path)
    wanted = plan["hosts"]["h"]["host_tuning"]["sysctl"]
    assert wanted == {"vm.swappiness": "0", "kernel.numa_balancing": "0", "kernel.sched_migration_cost_ns": "50000"}
    base = proc_sys(tmp_path, {"vm.swappiness": "60", "kernel.numa_balancing": "0",
                               "kernel.sched_migration_cost_ns": "500000"})
    before = live(base)
    dry = tune_sysctl(tmp_path, plan, "--check", "--diff")
    assert dry.returncode == 0, (dry.stdout + dry.stderr)[-3000:]
    assert live(base) == before and not (tmp_path / "sysctl.d").exists()  # check mode writes nothing
    # --diff shows the file, then the live values that would change, not the one already at the plan's.
    live_diff = dry.stdout.split("(live kernel settings)", 1)[1]
    assert "-vm.swappiness = 60" in live_diff and "+vm.swappiness = 0" in live_diff
    assert "kernel.numa_balancing" not in live_diff
    first = tune_sysctl(tmp_path, plan)
    assert first.returncode == 0, (first.stdout + first.stderr)[-3000:]
    assert re.search(r"^changed: \[h\]", first.stdout, re.M)
    assert live(base) == {"kernel/numa_balancing": "0\n", "kernel/sched_migration_cost_ns": "50000\n",
                          "vm/swappiness": "0\n"}
    conf = (tmp_path / "sysctl.d" / "90-sglang.conf").read_text(encoding="utf-8")
    assert "vm.swappiness = 0" in conf or "vm.swappiness=0" in conf
    again = tune_sysctl(tmp_path, plan)
    assert again.returncode == 0 and "changed=0" in again.stdout, again.stdout[-3000:]
    # A value changed behind our back is repaired (the live value, not only the file, is compared).
    (base / "vm" / "swappiness").write_text("10\n", encoding="ascii")
    repaired = tune_sysctl(tmp_path, plan)
    assert "changed=1" in repaired.stdout and (base / "vm" / "swappiness").read_text() == "0\n"


def test_a_kernel_setting_the_host_lacks_fails_naming_it(tmp_path: Path) -> None:
    plan = planned(tmp_path)
    proc_sys(tmp_path, {"vm.swappiness": "60", "kernel.numa_balancing": "1"})
    run = tune_sysctl(tmp_path, plan)
    assert run.returncode != 0
    assert "kernel setting kernel.sched_migration_cost_ns: cannot read" in run.stdout, run.stdout[-3000:]
