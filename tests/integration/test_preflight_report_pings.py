"""ascend.sglang.sglang_preflight_report joins each host's ping results to its findings: a ping call that failed
(a module error, a host lost between the two preflight calls) is a failure of that host in the table, never a
table without it (connection local, two inventory hosts, no remote)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
pytestmark = pytest.mark.ansible

CHECKED = {"changed": False, "findings": [
    {"host": "HOST", "check": "npu_link", "severity": "ok", "found": "16 devices UP", "expected": "UP", "fix": "",
     "service": None}]}
PINGED = {"changed": False, "findings": [
    {"host": "h1", "check": "npu_ping", "severity": "ok", "found": "16 pings, no loss", "expected": "no loss",
     "fix": "", "service": None}]}


def _play(tmp_path: Path, book: list, per_host: dict) -> None:
    """Runs ``book`` with the real ansible-playbook over the hosts of ``per_host`` and localhost, ``per_host`` given
    as -e; it must pass."""
    (tmp_path / "play.yml").write_text(yaml.safe_dump(book), encoding="utf-8")
    (tmp_path / "vars.json").write_text(json.dumps({"per_host": per_host}), encoding="utf-8")
    inventory = ",".join([*per_host, "localhost"]) + ","
    proc = subprocess.run([str(BIN / "ansible-playbook"), "-i", inventory, str(tmp_path / "play.yml"),
                           "-e", f"@{tmp_path / 'vars.json'}"], cwd=ROOT, env=dict(os.environ, ANSIBLE_NOCOLOR="1"),
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]


def test_a_failed_ping_call_fails_its_host(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    per_host = {
        "h1": {"sglang_preflight_result": dict(CHECKED, findings=[dict(CHECKED["findings"][0], host="h1")]),
               "sglang_preflight_ping": PINGED},
        "h2": {"sglang_preflight_result": dict(CHECKED, findings=[dict(CHECKED["findings"][0], host="h2")]),
               "sglang_preflight_ping": {"failed": True, "msg": "hccn_tool ping call lost: MODULE FAILURE"}},
    }
    book = [
        {"hosts": "h1:h2", "gather_facts": False, "connection": "local",
         "vars": {"ansible_python_interpreter": sys.executable}, "tasks": [
             {"name": "results", "ansible.builtin.set_fact": {
                 "sglang_preflight_result": "{{ per_host[inventory_hostname].sglang_preflight_result }}",
                 "sglang_preflight_ping": "{{ per_host[inventory_hostname].sglang_preflight_ping }}"}}]},
        {"hosts": "localhost", "gather_facts": False, "connection": "local",
         "vars": {"ansible_python_interpreter": sys.executable}, "tasks": [
             {"name": "report", "ascend.sglang.sglang_preflight_report": {
                 "hosts": ["h1", "h2"], "ping_var": "sglang_preflight_ping", "fail_on": "never",
                 "json_path": str(out)}, "register": "r"}]},
    ]
    _play(tmp_path, book, per_host)
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["status"] == "failures" and doc["counts"]["fail"] == 1, doc
    findings = [f for host in doc["hosts"].values() for f in host["findings"]]
    failed = [f for f in findings if f["severity"] == "fail"]
    assert [(f["host"], f["found"]) for f in failed] == [("h2", "hccn_tool ping call lost: MODULE FAILURE")]
    # The host whose pings ran keeps both findings.
    assert sorted(f["check"] for f in findings if f["host"] == "h1") == ["npu_link", "npu_ping"]


def _stack(host: str, severity: str) -> dict:
    return {"changed": False, "findings": [
        {"host": host, "check": "stack_npus", "severity": severity, "found": "torch.npu.device_count() = 8",
         "expected": ">= 8 NPUs", "fix": "" if severity == "ok" else "make the NPUs visible", "service": None}]}


def test_the_stack_report_takes_preflights_look_for_a_host_the_stack_play_left_out(tmp_path: Path) -> None:
    """deploy.yml's stack report (look_key: stack): a host the stack play ran for reports its own check; one it did
    not run for (its stack was current) the checks preflight's call ran on it; a host whose check was skipped (check
    mode with packages to install) is not reported, even with preflight's look."""
    out = tmp_path / "report.json"
    per_host = {
        "h1": {"sglang_stack_result": _stack("h1", "ok"), "sglang_preflight_result": {"stack": _stack("h1", "fail")}},
        "h2": {"sglang_preflight_result": {"findings": [], "stack": _stack("h2", "fail")}},
        "h3": {"sglang_stack_result": {"skipped": True}, "sglang_preflight_result": {"stack": _stack("h3", "fail")}},
        "h4": {"sglang_preflight_result": {"findings": []}},
    }
    book = [
        {"hosts": "h1:h2:h3:h4", "gather_facts": False, "connection": "local",
         "vars": {"ansible_python_interpreter": sys.executable}, "tasks": [
             {"name": "results", "ansible.builtin.set_fact": {
                 "sglang_preflight_result": "{{ per_host[inventory_hostname].sglang_preflight_result }}"}},
             {"name": "stack results", "ansible.builtin.set_fact": {
                 "sglang_stack_result": "{{ per_host[inventory_hostname].sglang_stack_result }}"},
              "when": "per_host[inventory_hostname].sglang_stack_result is defined"}]},
        {"hosts": "localhost", "gather_facts": False, "connection": "local",
         "vars": {"ansible_python_interpreter": sys.executable}, "tasks": [
             {"name": "report", "ascend.sglang.sglang_preflight_report": {
                 "hosts": ["h1", "h2", "h3", "h4"], "result_var": "sglang_stack_result", "look_key": "stack",
                 "mode": "stack", "fail_on": "fail", "fail_task": False, "json_path": str(out)}, "register": "r"},
             {"name": "keep", "ansible.builtin.copy": {"content": "{{ r | to_json }}", "dest": str(tmp_path / "r.json")}}]},
    ]
    _play(tmp_path, book, per_host)
    result = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert result["hosts"] == ["h1", "h2"] and result["stop"] is True
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert [(f["host"], f["severity"]) for host in doc["hosts"].values() for f in host["findings"]] == \
        [("h1", "ok"), ("h2", "fail")]
