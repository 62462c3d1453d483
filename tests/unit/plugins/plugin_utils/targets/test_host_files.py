"""The one file list of a host (plugin_utils/targets/_host_files.py) and the atomic placement (module_utils/files/_atomic_files.py)
shared by deployment and render mode."""

from __future__ import annotations

import json
import os
import stat

import pytest

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import HostPlan
from ansible_collections.ascend.sglang.plugins.plugin_utils.targets import _host_files
from ansible_collections.ascend.sglang.plugins.module_utils.files._atomic_files import place_all

from tests.unit.plans import make_plan

DECODE = {"name": "sglang-decode-i0-r1", "role": "decode", "instance": 0, "node_rank": 1, "nnodes": 2,
          "argv": ["python3", "-m", "sglang.launch_server"], "env": {"A": "1"}, "secret_flags": ["--api-key"],
          "watchdog": {"instance_label": "decode instance 0", "health_url": "http://10.0.0.1:8001/health_generate",
                       "members": [{"host": "d0", "service": "sglang-decode-i0-r0", "node_rank": 0},
                                   {"host": "d1", "service": "sglang-decode-i0-r1", "node_rank": 1}],
                       "evidence": {"address": "10.0.0.1", "port": 8990, "url": "http://10.0.0.1:8990/rank0"}}}
ROUTER = {"name": "sglang-router-i0", "role": "router", "instance": 0, "node_rank": 0, "nnodes": 1,
          "argv": ["python3", "-m", "sglang_router.launch_router"], "env": {},
          "watchdog": {"router_url": "http://127.0.0.1:6688",
                       "workers": [{"instance_label": "decode instance 0", "nnodes": 2, "url": "http://10.0.0.1:8001",
                                    "worker_type": "decode", "health_url": "http://10.0.0.1:8001/health_generate"},
                                   {"instance_label": "mixed instance 0", "nnodes": 1, "url": "http://10.0.0.2:8000",
                                    "worker_type": "regular", "health_url": "http://10.0.0.2:8000/health_generate"}]}}
HOST = {"services": [DECODE, ROUTER], "cann": {"sources": ["/usr/local/Ascend/set_env.sh"]},
        "host_tuning": {"sysctl": {"vm.swappiness": 0}}}
DIRS = {"sglang_etc_dir": "/e", "sglang_libexec_dir": "/l", "sglang_systemd_dir": "/s"}
# What the fixtures above leave out of a service: the renderer does not read it.
_UNREAD = {"inventory_host": "h", "host": "10.0.0.9", "port": 8000, "bootstrap_port": None, "dist_init_addr": None,
           "health_url": None, "ready_url": None, "depends_on": [], "listens": {}}


def typed(host_plan: dict) -> HostPlan:
    """A host's plan entry of the fixtures above, typed as the renderer takes it (the plan's records)."""
    services = [dict(_UNREAD, instance_key=svc.get("name"), **svc) for svc in host_plan["services"]]
    return HostPlan.from_dict({"host_tuning": host_plan.get("host_tuning") or {}, "cann": host_plan.get("cann") or {},
                               "services": services})


def host_files(host_plan, settings=None, **kwargs):
    """_host_files.host_files of a fixture."""
    plan = host_plan if isinstance(host_plan, HostPlan) else typed(host_plan)
    return _host_files.host_files(plan, settings, **kwargs)


def kinds(files):
    return [(f.kind, f.service) for f in files]


def test_deployment_lists_every_file_of_a_role_and_keeps_env_out_of_the_other_files() -> None:
    files = host_files(HOST, {"sglang_etc_dir": "/e"}, roles=["decode"], secrets={"decode": {"--api-key": "k"}})
    # The record program first: no unit that runs it is written before it (a run cut short between two files).
    assert kinds(files) == [("record_program", None), ("env", DECODE["name"]), ("secrets", DECODE["name"]),
                            ("launcher", DECODE["name"]),
                            ("unit", DECODE["name"]), ("watchdog_program", None), ("watchdog_config", DECODE["name"]),
                            ("watchdog_unit", DECODE["name"])]
    by_kind = {f.kind: f for f in files}
    assert by_kind["secrets"].mode == "0600" and by_kind["secrets"].owner == "root" and by_kind["secrets"].sensitive
    assert by_kind["env"].sensitive and by_kind["env"].variables["sglang_tpl_service"]["env"] == {"A": "1"}
    for kind in ("launcher", "unit", "secrets", "watchdog_unit"):
        assert "env" not in by_kind[kind].variables["sglang_tpl_service"], kind
    assert by_kind["launcher"].variables["sglang_tpl_etc_dir"] == "/e"


def test_every_unit_records_the_files_it_starts_from() -> None:
    """The start record of each unit (module_utils/files/_started.py) lists every file that defines what it runs."""
    name = DECODE["name"]
    files = {(f.kind, f.service): f for f in host_files(HOST, DIRS, secrets={"decode": {"--api-key": "k"}})}
    record = files[("unit", name)].variables["sglang_tpl_record"]
    assert record == {"program": "/l/sglang_record_start.sh", "path": f"/run/sglang/{name}.service.started",
                      "files": [f"/e/{name}.env", f"/e/{name}.secrets", f"/l/{name}.sh", f"/s/{name}.service",
                                "/e/cann_env.sh"]}
    # Container runtime: the image brings CANN, the host's cann_env.sh is not sourced; the run settings are in the
    # launcher and the unit. No secrets file without secret flags.
    boxed = dict(ROUTER, container={"engine": "podman", "image": "i", "name": ROUTER["name"], "npus": [], "devices": [],
                                    "mounts": [], "visible_devices": None, "env_names": [],
                                    "engine_path": "/usr/bin/podman", "run": ["podman", "run"], "remove": ["x"],
                                    "from_archive": False})
    router = host_files({"services": [boxed]}, DIRS)
    record = next(f for f in router if f.kind == "unit").variables["sglang_tpl_record"]
    assert record["files"] == ["/e/sglang-router-i0.env", "/l/sglang-router-i0.sh", "/s/sglang-router-i0.service"]
    # A router on the host runtime sources no cann_env.sh either (no NPU, no CANN), even beside a server.
    record = files[("unit", ROUTER["name"])].variables["sglang_tpl_record"]
    assert record["files"] == ["/e/sglang-router-i0.env", "/l/sglang-router-i0.sh", "/s/sglang-router-i0.service"]
    assert files[("launcher", ROUTER["name"])].variables["sglang_tpl_cann_env"] is False
    assert files[("launcher", name)].variables["sglang_tpl_cann_env"] is True
    watchdog = files[("watchdog_unit", name)].variables["sglang_tpl_record"]
    assert watchdog["path"] == f"/run/sglang/sglang-watchdog-{name}.service.started"
    assert watchdog["files"] == [f"/e/{name}.watchdog.json", f"/s/sglang-watchdog-{name}.service",
                                 "/l/sglang_watchdog.py"]
    # Render mode renders the same units, without the program (it writes nothing to run).
    rendered = host_files(HOST, DIRS, render=True)
    assert "record_program" not in {f.kind for f in rendered}
    assert next(f for f in rendered if f.kind == "unit" and f.service == name).variables["sglang_tpl_record"] == \
        files[("unit", name)].variables["sglang_tpl_record"]


def test_host_files_come_without_roles_and_render_mode_has_summaries_but_no_secrets() -> None:
    assert kinds(host_files(HOST, kinds=["cann_env", "sysctl"])) == [("cann_env", None), ("sysctl", None)]
    rendered = host_files(HOST, render=True)
    assert [f.render_name for f in rendered][:2] == ["cann_env.sh", "sysctl.conf"]
    # Render mode shows the watchdogs too, but neither secrets nor the watchdog program.
    assert {f.kind for f in rendered} == {"cann_env", "sysctl", "summary", "env", "launcher", "unit",
                                          "watchdog_config", "watchdog_unit"}
    assert [f.render_name for f in rendered if f.service == DECODE["name"]] == [
        DECODE["name"] + ext for ext in (".json", ".env", ".sh", ".service")] + [
        DECODE["name"] + ".watchdog.json", "sglang-watchdog-" + DECODE["name"] + ".service"]
    summary = next(f for f in rendered if f.kind == "summary" and f.service == DECODE["name"])
    assert json.loads(summary.content) == {k: DECODE[k] for k in ("role", "instance", "node_rank", "argv", "env")}
    assert summary.content.endswith("}\n") and summary.sensitive and summary.mode == "0640"


def config_of(files, service):
    return next(f.variables["sglang_tpl_watchdog_config"] for f in files
                if f.kind == "watchdog_config" and f.service == service)


def test_watchdogs_follow_the_settings() -> None:
    assert not [f for f in host_files(HOST, {"sglang_watchdog_enabled": False}) if f.kind.startswith("watchdog")]
    files = host_files(HOST)
    assert [f.service for f in files if f.kind == "watchdog_unit"] == [DECODE["name"], ROUTER["name"]]
    router = config_of(files, ROUTER["name"])
    assert router["kind"] == "router" and [w["url"] for w in router["workers"]] == ["http://10.0.0.1:8001"]
    single = config_of(host_files(HOST, {"sglang_watchdog_single_node": "true"}), ROUTER["name"])
    assert len(single["workers"]) == 2
    rank = config_of(host_files(HOST, {"sglang_watchdog_interval": "7", "sglang_watchdog_state_dir": "/s"}),
                     DECODE["name"])
    assert rank["interval"] == 7 and rank["unit"] == "sglang-decode-i0-r1.service" and rank["node_rank"] == 1
    assert rank["state_file"] == "/s/sglang-decode-i0-r1.json"


def test_render_mode_names_every_file_of_a_real_plan_once() -> None:
    _unused, plan = make_plan("deepseek_r1_pd32", prefill=2, decode=2, router=1)
    router_only = 0
    for host_plan in plan["hosts"].values():
        names = [f.render_name for f in host_files(HostPlan.from_dict(host_plan), render=True)]
        servers = [s for s in host_plan["services"] if s["role"] != "router"]
        # Only a host running a server gets the CANN environment and the kernel settings.
        assert (names[:2] == ["cann_env.sh", "sysctl.conf"]) == bool(servers), names
        assert bool(servers) or not {"cann_env.sh", "sysctl.conf"} & set(names)
        router_only += not servers
        assert len(names) == len(set(names))
        for svc in host_plan["services"]:
            assert {f"{svc['name']}.{ext}" for ext in ("json", "env", "sh", "service")} <= set(names)
            # The 2-node decode instance's ranks are watched; nothing else is in this profile.
            watched = svc["nnodes"] > 1
            assert (f"sglang-watchdog-{svc['name']}.service" in names) == watched
            assert (f"{svc['name']}.watchdog.json" in names) == watched
    assert router_only == 1


def test_placement_is_atomic_idempotent_and_keeps_sensitive_content_out_of_the_diff(tmp_path) -> None:
    target = tmp_path / "etc"
    files = [{"path": str(target / "a.conf"), "data": b"a\n", "mode": 0o644},
             {"path": str(target / "s.env"), "data": b"SECRET=1\n", "mode": 0o600, "sensitive": True}]
    dirs = [{"path": str(target), "mode": 0o755}]
    checked = place_all(dirs, files, check_mode=True, want_diff=True)
    assert checked["changed"] and not target.exists()
    first = place_all(dirs, files, check_mode=False, want_diff=True)
    assert [f["changed"] for f in first["files"]] == [True, True]
    assert [d["after_header"] for d in first["diff"]] == [str(target / "a.conf")]
    assert "SECRET" not in json.dumps(first)
    assert stat.S_IMODE(os.stat(target / "s.env").st_mode) == 0o600 and (target / "s.env").read_bytes() == b"SECRET=1\n"
    assert not [p for p in os.listdir(target) if p.startswith(".sglang-")]
    again = place_all(dirs, files, check_mode=False, want_diff=True)
    assert not again["changed"] and not again["diff"]
    os.chmod(target / "a.conf", 0o600)
    fixed = place_all(dirs, files, check_mode=False, want_diff=False)
    assert [f["changed"] for f in fixed["files"]] == [True, False]
    assert stat.S_IMODE(os.stat(target / "a.conf").st_mode) == 0o644


@pytest.mark.parametrize("change", [
    {"name": "a/b"}, {"name": "x\n"}, {"name": ".hidden"}, {"role": "worker"}, {"argv": []}, {"argv": "python3"},
    {"env": {"1A": "x"}}, {"env": {"A B": "x"}}, {"env": {"A": "1\nid"}}, {"argv": ["python3", "a\x00"]}])
def test_an_unfit_service_stops_the_rendering_before_anything_is_written(change) -> None:
    bad = dict(DECODE, **change)
    with pytest.raises(ValueError, match="Invalid service in the plan") as failure:
        host_files({"services": [bad]}, roles=["decode", "worker"])
    assert "1\nid" not in str(failure.value) and "\x00" not in str(failure.value)
