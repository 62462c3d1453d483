"""Defence in depth: the env-file, launcher and unit templates refuse a value with a control character
(or a blank where it would split a unit line) even when a caller bypassed the plan's contract; the
secret file renders root-only values quoted. One ansible-playbook run renders every case."""

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
TEMPLATES = ROOT / "roles" / "sglang_service" / "templates"
pytestmark = pytest.mark.ansible

SERVICE = {"name": "sglang-mixed-i0-r0", "role": "mixed", "instance": 0, "node_rank": 0, "nnodes": 1,
           "instance_key": "mixed-i0", "argv": ["python3", "-m", "sglang.launch_server", "--port", "8000"],
           "env": {"A": "1"}, "secret_flags": []}
RECORD = {"program": "/usr/local/libexec/sglang/sglang_record_start.sh",
          "path": "/run/sglang/sglang-mixed-i0-r0.service.started", "files": ["/etc/sglang/sglang-mixed-i0-r0.env"]}
UNIT = {"sglang_tpl_profile": "p", "sglang_tpl_libexec_dir": "/usr/local/libexec/sglang",
        "sglang_tpl_restart_sec": 10, "sglang_tpl_timeout_stop_sec": 60, "sglang_tpl_limit_nofile": 1048576,
        "sglang_tpl_record": RECORD}

# (case id, template, template vars, text the failure must contain)
REFUSED = [
    ("env name with a trailing newline", "sglang.env.j2",
     {"sglang_tpl_service": dict(SERVICE, env={"NAME\n": "1"})}, "refusing to write the environment variable name"),
    ("env name with a blank", "sglang.env.j2",
     {"sglang_tpl_service": dict(SERVICE, env={"A B": "1"})}, "refusing to write the environment variable name"),
    ("env value with a newline", "sglang.env.j2",
     {"sglang_tpl_service": dict(SERVICE, env={"A": "1\nid"})}, "refusing to write the value of A"),
    ("env value with a NUL", "sglang.env.j2",
     {"sglang_tpl_service": dict(SERVICE, env={"A": "1\x00"})}, "refusing to write the value of A"),
    ("unit path with a newline", "sglang.service.j2",
     dict(UNIT, sglang_tpl_service=SERVICE, sglang_tpl_libexec_dir="/x\nExecStartPre=/bin/id"), "ExecStart"),
    ("unit path with a blank", "sglang.service.j2",
     dict(UNIT, sglang_tpl_service=SERVICE, sglang_tpl_libexec_dir="/opt/my dir"), "refusing to write ExecStart"),
    ("unit start record file with a blank", "sglang.service.j2",
     dict(UNIT, sglang_tpl_service=SERVICE, sglang_tpl_record=dict(RECORD, files=["/etc/my dir/a.env"])),
     "refusing to write ExecStartPre"),
    ("unit start record path with a newline", "sglang.service.j2",
     dict(UNIT, sglang_tpl_service=SERVICE, sglang_tpl_record=dict(RECORD, path="/run/x\nExecStart=/bin/id")),
     "refusing to write ExecStartPre"),
    ("unit restart sec with a newline", "sglang.service.j2",
     dict(UNIT, sglang_tpl_service=SERVICE, sglang_tpl_restart_sec="1\nExecStartPre=/bin/id"), "RestartSec"),
    ("unit profile with a newline", "sglang.service.j2",
     dict(UNIT, sglang_tpl_service=SERVICE, sglang_tpl_profile="p\n[Service]"), "the unit Description"),
    ("unit CPU list with a newline", "sglang.service.j2",
     dict(UNIT, sglang_tpl_service=dict(SERVICE, cpus="0-3\nExecStartPre=/bin/id")), "refusing to write CPUAffinity"),
    ("launcher argument with a newline", "sglang.sh.j2",
     {"sglang_tpl_etc_dir": "/etc/sglang", "sglang_tpl_cann_env": True, "sglang_tpl_workers_file": None,
      "sglang_tpl_service": dict(SERVICE, argv=["python3", "a\nb"]), "sglang_tpl_argv": ["python3", "a\nb"]},
     "refusing to write an argument"),
    ("launcher workers file with a newline", "sglang.sh.j2",
     {"sglang_tpl_etc_dir": "/etc/sglang", "sglang_tpl_cann_env": False, "sglang_tpl_workers_file": "/etc/x\nid",
      "sglang_tpl_service": dict(SERVICE, role="router"), "sglang_tpl_argv": ["python3", None]},
     "refusing to write sglang_etc_dir"),
    ("secret with a newline", "sglang.secrets.j2",
     {"sglang_tpl_service": dict(SERVICE, secret_flags=["--api-key"]), "sglang_tpl_secrets": {"--api-key": "k\nid"}},
     "refusing to write a secret value"),
]


def playbook(cases: list, out: Path) -> list:
    tasks = []
    for index, (_unused, template, variables, _unused) in enumerate(cases):
        tasks.append({"name": f"case {index}", "block": [
            {"ansible.builtin.template": {"src": str(TEMPLATES / template), "dest": str(out / f"{index}.out"),
                                          "mode": "0600"}, "vars": variables}],
            "rescue": [{"ansible.builtin.set_fact": {"guard_messages": "{{ guard_messages + [[%d, ansible_failed_result.msg]] }}" % index}}]})
    tasks.append({"ansible.builtin.copy": {"content": "{{ guard_messages | to_json }}", "dest": str(out / "messages.json"),
                                           "mode": "0600"}})
    return [{"hosts": "localhost", "gather_facts": False, "connection": "local",
             "vars": {"guard_messages": [], "ansible_python_interpreter": sys.executable}, "tasks": tasks}]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> tuple[Path, dict[int, str]]:
    out = tmp_path_factory.mktemp("guards")
    ok = ("secret file", "sglang.secrets.j2",
          {"sglang_tpl_service": dict(SERVICE, secret_flags=["--api-key", "--admin-key"]),
           "sglang_tpl_secrets": {"--api-key": "it's $(secret)", "--admin-key": "k2"}}, None)
    book = out / "play.yml"
    book.write_text(yaml.safe_dump(playbook(REFUSED + [ok], out)), encoding="utf-8")
    env = dict(os.environ, ANSIBLE_NOCOLOR="1")
    proc = subprocess.run([str(BIN / "ansible-playbook"), "-i", "localhost,", str(book)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    messages = dict(json.loads((out / "messages.json").read_text()))
    return out, messages


@pytest.mark.parametrize("index", range(len(REFUSED)), ids=[c[0] for c in REFUSED])
def test_template_refuses_a_bad_value(index: int, rendered) -> None:
    out, messages = rendered
    assert index in messages, f"{REFUSED[index][0]} was rendered: {(out / f'{index}.out').read_text()!r}"
    assert REFUSED[index][3] in messages[index]
    assert not (out / f"{index}.out").exists()


def test_secret_file_is_quoted_and_root_only(rendered) -> None:
    out, messages = rendered
    path = out / f"{len(REFUSED)}.out"
    assert len(REFUSED) not in messages
    lines = [line for line in path.read_text().splitlines() if not line.startswith("#")]
    assert lines == ["SGLANG_SECRET_0='it'\"'\"'s $(secret)'", "SGLANG_SECRET_1=k2"]
    # Sourced by bash, the value is the literal secret.
    got = subprocess.run(["bash", "-c", f'. "{path}"; printf %s "$SGLANG_SECRET_0"'], capture_output=True, text=True,
                         check=False)
    assert got.stdout == "it's $(secret)"
