"""ascend.sglang.sglang_render_files in deployment mode, against loopback (connection local) into a temporary
directory: check mode writes nothing, a run writes every file with its mode, a second run changes nothing, one
changed environment value restarts that service only, and no environment or secret value reaches the output
(-v --diff)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.unit.plans import plan_dict

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
pytestmark = pytest.mark.ansible
ROOT_USER = os.geteuid() == 0

SERVICE = {"name": "sglang-decode-i0-r0", "role": "decode", "instance": 0, "node_rank": 0, "nnodes": 2,
           "instance_key": "decode-i0", "argv": ["python3", "-m", "sglang.launch_server", "--port", "8001"],
           "env": {"HCCL_BUFFSIZE": "600", "TOKEN_LIKE": "s3cr3t-env-value"},
           "secret_flags": ["--api-key"] if ROOT_USER else [],
           "watchdog": {"instance_label": "decode instance 0", "health_url": "http://127.0.0.1:8001/health_generate",
                        "members": [{"host": "h", "node_rank": 0, "service": "sglang-decode-i0-r0"}]}}
OTHER = dict(SERVICE, name="sglang-decode-i1-r0", instance=1, instance_key="decode-i1", nnodes=1,
             env={"HCCL_BUFFSIZE": "600"})


def run(tmp: Path, services: list, *flags: str, settings: dict | None = None,
        record_start: float | None = None, secrets: dict | None = None, ok: bool = True,
        cann: dict | None = None, roles: tuple = ("decode",), host_secrets: dict | None = None) -> tuple[dict, str]:
    """host_secrets: no secrets option; the host's sglang_secrets are these (None: unset), as deploy.yml runs it."""
    plan = plan_dict({"h": {"services": services, **({"cann": cann} if cann is not None else {})}})
    out = tmp / "result.json"
    book = [{"hosts": "h", "gather_facts": False, "connection": "local",
             "vars": {"ansible_python_interpreter": sys.executable,
                      **({"sglang_secrets": host_secrets} if host_secrets else {})}, "tasks": [
                 {"name": "files", "ascend.sglang.sglang_render_files": {
                     "plan": plan, "roles": list(roles),
                     **({} if host_secrets is not None else
                        {"secrets": {"decode": {"--api-key": "api-key-value"}} if secrets is None else secrets}),
                     "settings": {"sglang_etc_dir": str(tmp / "etc"), "sglang_libexec_dir": str(tmp / "libexec"),
                                  "sglang_systemd_dir": str(tmp / "systemd"), **(settings or {})},
                     **({"record_start": record_start, "record_path": str(tmp / "state" / "last-deploy.json")}
                        if record_start is not None else {}),
                     **({"cann_env": True} if cann is not None else {})},
                  "register": "r"},
                 # The fleet's decision, made as the role makes it (filter ascend.sglang.sglang_rollout), beside
                 # the host's report.
                 {"name": "keep", "delegate_to": "localhost", "ansible.builtin.copy": {
                     "content": "{{ r | combine(({'h': r} | ascend.sglang.sglang_rollout(none)).h) | to_json }}",
                     "dest": str(out), "mode": "0600"}, "check_mode": False,
                  "diff": False}]}]
    (tmp / "play.yml").write_text(yaml.safe_dump(book), encoding="utf-8")
    env = dict(os.environ, ANSIBLE_NOCOLOR="1")
    proc = subprocess.run([str(BIN / "ansible-playbook"), "-i", "h,", str(tmp / "play.yml"), "-v", *flags], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert (proc.returncode == 0) == ok, (proc.stdout + proc.stderr)[-3000:]
    return (json.loads(out.read_text()) if ok else {}), proc.stdout + proc.stderr


def test_deploy_mode_writes_reports_and_restarts_like_the_template_tasks(tmp_path: Path) -> None:
    checked, text = run(tmp_path, [SERVICE, OTHER], "--check", "--diff")
    assert checked["changed"] and not (tmp_path / "etc").exists()
    assert checked["restart"] == [SERVICE["name"], OTHER["name"]]
    assert all(item["new_unit"] for item in checked["start"])

    first, text = run(tmp_path, [SERVICE, OTHER], "--diff")
    for secret in ("s3cr3t-env-value", "api-key-value", "HCCL_BUFFSIZE"):
        assert secret not in text and secret not in json.dumps(first), secret
    assert "ExecStart=" in text  # the unit's diff is shown
    modes = {p.relative_to(tmp_path).as_posix(): stat.S_IMODE(p.stat().st_mode) for p in tmp_path.rglob("*")
             if p.is_file() and p.parent != tmp_path}
    want = {f"etc/{SERVICE['name']}.env": 0o640, f"etc/{OTHER['name']}.env": 0o640,
            f"libexec/{SERVICE['name']}.sh": 0o755, f"libexec/{OTHER['name']}.sh": 0o755,
            f"systemd/{SERVICE['name']}.service": 0o644, f"systemd/{OTHER['name']}.service": 0o644,
            "libexec/sglang_watchdog.py": 0o755, "libexec/sglang_record_start.sh": 0o755,
            f"etc/{SERVICE['name']}.watchdog.json": 0o644,
            f"systemd/sglang-watchdog-{SERVICE['name']}.service": 0o644}
    if ROOT_USER:  # secret files are owned by root
        want.update({f"etc/{SERVICE['name']}.secrets": 0o600, f"etc/{OTHER['name']}.secrets": 0o600})
    assert modes == want
    assert first["watched"] == [SERVICE["name"]] and first["daemon_reload"]
    # Each unit records the files it starts from (module_utils/files/_started.py): the program its ExecStartPre runs is
    # the one placed here. No systemd here: nothing runs, nothing is pending.
    unit = (tmp_path / "systemd" / f"{SERVICE['name']}.service").read_text()
    assert (f"ExecStartPre=-{tmp_path}/libexec/sglang_record_start.sh /run/sglang/{SERVICE['name']}.service.started "
            f"{tmp_path}/etc/{SERVICE['name']}.env") in unit
    assert first["pending"] == [] and [s["running"] for s in first["services"]] == [False, False]
    # New units: nothing installed before to stop first.
    assert first["stop_services"] == [] and first["pause_watchdogs"] == []

    second, _unused = run(tmp_path, [SERVICE, OTHER])
    assert not second["changed"] and second["restart"] == [] and not second["daemon_reload"]
    assert second["stop_services"] == [] and second["pause_watchdogs"] == []
    assert [item["restart"] for item in second["start"]] == [False, False, False]

    # A changed value that no temporary path or checksum can contain by chance (a bare number can).
    changed = dict(OTHER, env={"HCCL_BUFFSIZE": "700", "TOKEN_LIKE": "changed-env-value"})
    third, text = run(tmp_path, [SERVICE, changed], "--diff")
    assert third["restart"] == [OTHER["name"]] and third["changed_units"] == [] and not third["daemon_reload"]
    # Installed before and about to restart: stopped on every host before any starts again.
    assert third["stop_services"] == [OTHER["name"] + ".service"]
    for secret in ("changed-env-value", "HCCL_BUFFSIZE"):
        assert secret not in text and secret not in json.dumps(third), secret
    assert (tmp_path / "etc" / f"{OTHER['name']}.env").read_text().count("HCCL_BUFFSIZE=700") == 1
    assert third["stale_watchdogs"] == []

    # Watchdogs switched off: the renderer finds the one an earlier run installed (the role removes it); check
    # mode looks too, and neither removes anything itself.
    for flags in (("--check",), ()):
        off, _unused = run(tmp_path, [SERVICE, changed], *flags, settings={"sglang_watchdog_enabled": False})
        assert off["stale_watchdogs"] == [SERVICE["name"]] and off["watched"] == []
        # Their files by path, named with this host's settings (the role removes these).
        assert off["stale_watchdog_files"] == [
            str(tmp_path / "systemd" / f"sglang-watchdog-{SERVICE['name']}.service"),
            str(tmp_path / "etc" / f"{SERVICE['name']}.watchdog.json"),
            f"/var/lib/sglang-watchdog/{SERVICE['name']}.json"]
        assert (tmp_path / "systemd" / f"sglang-watchdog-{SERVICE['name']}.service").exists()


def test_the_deploy_start_is_recorded_in_the_same_call_and_is_no_change(tmp_path: Path) -> None:
    """deploy.yml records its start (collect.yml's default journal window) in the call that places the files."""
    record = tmp_path / "state" / "last-deploy.json"
    run(tmp_path, [SERVICE], "--check", record_start=1764064800.5)
    assert not record.exists()
    run(tmp_path, [SERVICE], record_start=1764064800.5)
    assert json.loads(record.read_text())["started_epoch"] == 1764064800.5
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    again, _text = run(tmp_path, [SERVICE], record_start=1764068400.0)
    # Files unchanged: nothing changed, although the record holds this run's start.
    assert not again["changed"] and json.loads(record.read_text())["started_epoch"] == 1764068400.0
    assert json.loads(record.read_text())["profile"] == "p"


@pytest.mark.skipif(not ROOT_USER, reason="secret files are owned by root: the plan gives secret flags as root only")
def test_a_secret_value_the_host_does_not_see_stops_before_anything_is_written(tmp_path: Path) -> None:
    _got, text = run(tmp_path, [SERVICE], secrets={"decode": {"--other": "x"}}, ok=False)
    assert ("sglang-decode-i0-r0: the plan gives --api-key from sglang_secrets.decode, but this host does not see "
            "--api-key (define sglang_secrets for the server hosts too") in " ".join(text.split())
    assert not (tmp_path / "etc").exists()


@pytest.mark.skipif(not ROOT_USER, reason="secret files are owned by root: the plan gives secret flags as root only")
def test_without_the_secrets_option_the_action_reads_the_hosts_own_sglang_secrets(tmp_path: Path) -> None:
    """deploy.yml and upgrade.yml pass no secrets: the action reads the host's sglang_secrets, the one place their
    values are read (they never enter the plan); unset, the plan's secret flag is missing and nothing is written."""
    _got, text = run(tmp_path, [SERVICE], host_secrets={"decode": {"--api-key": "host-key-value"}})
    assert "host-key-value" in (tmp_path / "etc" / f"{SERVICE['name']}.secrets").read_text(encoding="utf-8")
    assert "host-key-value" not in text
    (tmp_path / "unset").mkdir()
    _got, text = run(tmp_path / "unset", [SERVICE], host_secrets={}, ok=False)
    assert "this host does not see --api-key" in " ".join(text.split())
    assert not (tmp_path / "unset" / "etc").exists()


def test_cann_env_in_the_same_call_restarts_the_services_that_source_it_when_it_changes(tmp_path: Path) -> None:
    """deploy.yml writes a server host's cann_env.sh with its service files: one call, and a change of it restarts
    every instance of the call (its launchers source it)."""
    cann = {"sources": ["/usr/local/Ascend/ascend-toolkit/set_env.sh"]}
    first, _text = run(tmp_path, [SERVICE, OTHER], cann=cann)
    assert (tmp_path / "etc" / "cann_env.sh").read_text().count("ascend-toolkit/set_env.sh") >= 1
    assert [row["kind"] for row in first["files"]][0] == "cann_env"
    again, _text = run(tmp_path, [SERVICE, OTHER], cann=cann)
    assert not again["changed"]
    moved, _text = run(tmp_path, [SERVICE, OTHER], "--check", cann={"sources": ["/opt/cann/set_env.sh"]})
    assert moved["changed"] and moved["restart"] == [SERVICE["name"], OTHER["name"]]
    assert set(moved["why"].values()) == {"cann_env.sh changed"}


ROUTER = {"name": "sglang-router-i0", "role": "router", "instance": 0, "node_rank": 0, "nnodes": 1,
          "instance_key": "router-i0", "env": {"SGLANG_DP_ROUND_ROBIN": "1"}, "boot_workers": [3, 5],
          "argv": ["python3", "-m", "sglang_router.launch_router", "--worker-urls", "http://127.0.0.1:7239",
                   "--policy", "cache_aware", "--host", "127.0.0.1", "--port", "6688"]}


def test_a_change_of_the_routers_workers_alone_restarts_nothing(tmp_path: Path) -> None:
    """The router's workers at start are in <name>.workers, which its launcher reads: a change of the planned
    instances rewrites that file only, and the fleet's decision restarts nothing (the deploy applies the list
    through the router's worker API). The launcher, run with a stand-in interpreter, still starts the planned argv."""
    first, _unused = run(tmp_path, [ROUTER], roles=("router",), secrets={})
    assert first["restart"] == [ROUTER["name"]]
    workers = tmp_path / "etc" / f"{ROUTER['name']}.workers"
    assert workers.read_text() == "--worker-urls\nhttp://127.0.0.1:7239\n"
    bigger = dict(ROUTER, boot_workers=[3, 6], argv=ROUTER["argv"][:5] + ["http://127.0.0.1:8239"] + ROUTER["argv"][5:])
    launcher = tmp_path / "libexec" / f"{ROUTER['name']}.sh"
    before = launcher.read_text()
    second, _unused = run(tmp_path, [bigger], roles=("router",), secrets={})
    assert [(f["kind"], f["changed"]) for f in second["files"] if f["changed"]] == [("router_workers", True)]
    # (Started, not restarted: no unit runs on this loopback host.)
    assert second["restart"] == [] and second["changed_services"] == [] and second["stop_services"] == []
    assert not [item for item in second["start"] if item["restart"]]
    assert launcher.read_text() == before
    assert workers.read_text() == "--worker-urls\nhttp://127.0.0.1:7239\nhttp://127.0.0.1:8239\n"
    # The launcher as systemd runs it, its interpreter a stand-in that prints the arguments it was given.
    stub = tmp_path / "bin"
    stub.mkdir()
    (stub / "python3").write_text("#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done\n", encoding="utf-8")
    (stub / "python3").chmod(0o755)
    proc = subprocess.run(["bash", str(launcher)], env={"PATH": f"{stub}:/usr/bin:/bin"}, capture_output=True,
                          text=True, timeout=30, check=True)
    assert proc.stdout.splitlines() == bigger["argv"][1:]
