"""deploy.yml tells an upgrade from a deploy with the record of what a host's servers run (runtime.json in
sglang_generation_dir), which preflight's call reads on a server host: through the real ansible-playbook (connection
local, the plan as -e), its text comes back with the result, None where there is none, and the filters deploy.yml's
refusal and record plays use read it from there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ansible_collections.ascend.sglang.plugins.filter.sglang_operations import sglang_runtime

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
pytestmark = pytest.mark.ansible


def _plan(generations: Path) -> dict:
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._planner import plan
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import load_profile
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._topology import build_inventory
    own = {"sglang_host_ip": "127.0.0.1", "sglang_nic": "lo", "sglang_generation_dir": str(generations)}
    hostvars = {"m0": own, "r0": {"sglang_host_ip": "127.0.0.1", "sglang_nic": "lo"}}
    groups = {"prefill": [], "decode": [], "mixed": ["m0"], "router": ["r0"]}
    return plan(load_profile("qwen3_32b_a3_2c_mixed_2k_2k_50ms"),
                build_inventory(groups, hostvars, {"sglang_model_path": "/m", "sglang_draft_model_path": "/d"})
                ).as_dict()


def _preflight(tmp: Path, plan: dict) -> dict:
    """Preflight's call on m0 (and r0, a router host: no record read there), then what deploy.yml's filters make
    of the result, written as JSON."""
    out = tmp / "out.json"
    book = [{"hosts": "m0:r0", "gather_facts": False, "connection": "local",
             "vars": {"ansible_python_interpreter": sys.executable}, "tasks": [
                 {"name": "Preflight", "ascend.sglang.sglang_preflight": {
                     "mode": "preflight", "probe_timeout": 1, "runtime_timeout": 5},
                  "register": "sglang_preflight_result"},
                 {"name": "What deploy.yml reads", "ansible.builtin.copy": {
                     "dest": str(out) + "-{{ inventory_hostname }}", "mode": "0600",
                     "content": "{{ {'result': sglang_preflight_result.runtime_record | default('absent'),"
                                " 'recorded': hostvars[inventory_hostname] | ascend.sglang.sglang_runtime_recorded,"
                                " 'change': hostvars[inventory_hostname] | ascend.sglang.sglang_runtime_recorded"
                                " | ascend.sglang.sglang_runtime_change(sglang_plan"
                                " | ascend.sglang.sglang_runtime(inventory_hostname))} | to_json }}"}}]}]
    (tmp / "play.yml").write_text(yaml.safe_dump(book), encoding="utf-8")
    (tmp / "vars.json").write_text(json.dumps({"sglang_plan": plan}), encoding="utf-8")
    proc = subprocess.run([str(BIN / "ansible-playbook"), "-i", "m0,r0,", str(tmp / "play.yml"), "-e",
                           f"@{tmp / 'vars.json'}"], cwd=ROOT, env=dict(os.environ, ANSIBLE_NOCOLOR="1"),
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    return {host: json.loads(Path(f"{out}-{host}").read_text(encoding="utf-8")) for host in ("m0", "r0")}


def test_preflights_call_reads_the_record_of_a_server_host(tmp_path: Path) -> None:
    generations = tmp_path / "generations"
    plan = _plan(generations)
    planned = sglang_runtime(plan, "m0")
    first = _preflight(tmp_path, plan)  # a first deploy: no record yet
    assert first["m0"] == {"result": None, "recorded": None, "change": []}
    assert first["r0"] == {"result": "absent", "recorded": None, "change": []}  # a router host: not read
    generations.mkdir()
    older = json.dumps(dict(planned, sglang="0.0.1"), indent=4) + "\n"
    (generations / "runtime.json").write_text(older, encoding="utf-8")
    again = _preflight(tmp_path, plan)
    assert again["m0"] == {"result": older, "recorded": older,
                           "change": [f"SGLang release 0.0.1 -> {planned['sglang']}"]}
