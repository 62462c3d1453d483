"""The filters that choose a deploy.yml play's hosts once, when the play starts, instead of a condition on every
host's task (plugins/filter/sglang_rollout.py sglang_gate_hosts, plugins/filter/sglang_operations.py
sglang_runtime_due and sglang_install_hosts): given hostvars as Ansible gives them (host -> that host's variables)."""

from __future__ import annotations

import base64
import json

from ansible_collections.ascend.sglang.plugins.filter.sglang_operations import (
    sglang_runtime, sglang_runtime_change, sglang_runtime_due, sglang_runtime_recorded,
)
from ansible_collections.ascend.sglang.plugins.filter.sglang_rollout import sglang_gate_hosts

from tests.unit.planned_fleets import MIXED

QUIET = {"start": [], "stop_services": [], "pause_watchdogs": [], "daemon_reload": False}


def _files(*healthy: bool) -> dict:
    names = [f"sglang-mixed-i{n}" for n in range(len(healthy))]
    return {"services": [{"name": n} for n in names], "stale_watchdogs": [],
            "health": {n: {"healthy": ok, "status": "200" if ok else "503"} for n, ok in zip(names, healthy)}}


def test_the_gate_asks_the_hosts_that_restarted_or_were_not_healthy_and_every_host_it_knows_nothing_of() -> None:
    decisions = {"m0": QUIET, "m1": dict(QUIET, start=[{"unit": "sglang-mixed-i0.service"}]), "m2": QUIET}
    hostvars = {"m0": {"__sglang_files": _files(True), "__sglang_rollout": decisions},
                "m1": {"__sglang_files": _files(True), "__sglang_rollout": decisions},
                "m2": {"__sglang_files": _files(True, False), "__sglang_rollout": decisions},
                "m3": {}}
    assert sglang_gate_hosts(["m0", "m1", "m2", "m3", "gone"], hostvars) == ["m1", "m2", "m3", "gone"]
    assert sglang_gate_hosts(["m0"], {}) == ["m0"]  # no hostvars (a syntax check): every host


def _read(value) -> dict:
    return {"content": base64.b64encode(json.dumps(value, indent=4).encode()).decode()}


def test_the_record_is_written_where_it_is_missing_or_differs_from_the_plan() -> None:
    planned = {host: sglang_runtime(MIXED, host) for host in ("m0", "m1")}
    hostvars = {"localhost": {"sglang_plan": MIXED},
                "m0": {"__sglang_runtime_file": _read(planned["m0"])},
                "m1": {"__sglang_runtime_file": _read(dict(planned["m1"], sglang="0.0.1"))}}
    assert sglang_runtime_due(["m0", "m1"], hostvars) == ["m1"]
    hostvars["m1"] = {"__sglang_runtime_file": {"failed": False, "msg": "file not found"}}  # a first deploy
    assert sglang_runtime_due(["m0", "m1"], hostvars) == ["m1"]
    assert sglang_runtime_due(["m0", "m1"], {}) == ["m0", "m1"]  # no plan to compare with: written


def test_the_record_preflights_call_read_is_the_one_compared() -> None:
    """Without sglang_preflight_skip the record comes with preflight's result (its text, None where there is
    none); a skipped preflight leaves a skipped result, and the record read by a task of its own counts."""
    planned = {host: sglang_runtime(MIXED, host) for host in ("m0", "m1", "m2")}
    older = json.dumps(dict(planned["m1"], sglang="0.0.1"), indent=4)
    hostvars = {"localhost": {"sglang_plan": MIXED},
                "m0": {"sglang_preflight_result": {"findings": [], "runtime_record": json.dumps(planned["m0"])}},
                "m1": {"sglang_preflight_result": {"findings": [], "runtime_record": older}},
                "m2": {"sglang_preflight_result": {"findings": [], "runtime_record": None}}}
    assert sglang_runtime_due(["m0", "m1", "m2"], hostvars) == ["m1", "m2"]
    assert sglang_runtime_recorded(hostvars["m1"]) == older
    assert sglang_runtime_change(sglang_runtime_recorded(hostvars["m1"]), planned["m1"]) == [
        f"SGLang release 0.0.1 -> {planned['m1']['sglang']}"]
    assert sglang_runtime_change(sglang_runtime_recorded(hostvars["m2"]), planned["m2"]) == []  # a first deploy
    assert sglang_runtime_change("not json", planned["m2"]) == []
    hostvars["m0"] = {"sglang_preflight_result": {"skipped": True, "changed": False},
                      "__sglang_runtime_file": _read(planned["m0"])}
    assert sglang_runtime_due(["m0"], hostvars) == []
    assert json.loads(sglang_runtime_recorded(hostvars["m0"])) == planned["m0"]


def _mixed(m0_vars: dict, m1_vars: dict) -> dict:
    """A plan of two PD-mixed hosts with host-scope settings of their own (Ansible hands all: vars over as each
    host's variables too)."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._planner import plan
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import load_profile
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._topology import build_inventory
    hostvars = {"m0": {"sglang_host_ip": "10.0.0.11", "sglang_nic": "eth0", **m0_vars},
                "m1": {"sglang_host_ip": "10.0.0.12", "sglang_nic": "eth0", **m1_vars},
                "r0": {"sglang_host_ip": "10.0.0.13", "sglang_nic": "eth0"}}
    groups = {"prefill": [], "decode": [], "mixed": ["m0", "m1"], "router": ["r0"]}
    variables = {"sglang_model_path": "/m", "sglang_draft_model_path": "/d"}
    return plan(load_profile("qwen3_32b_a3_2c_mixed_2k_2k_50ms"), build_inventory(groups, hostvars, variables)).as_dict()


def test_the_stack_play_takes_the_server_hosts_whose_own_settings_turn_the_install_on() -> None:
    from ansible_collections.ascend.sglang.plugins.filter.sglang_operations import sglang_install_hosts
    every = _mixed({"sglang_server_install": True}, {"sglang_server_install": True})
    assert sglang_install_hosts(["m0", "m1"], {"localhost": {"sglang_plan": every}}) == ["m0", "m1"]
    # Off on one host; a host the plan has no part for has nothing to install.
    one = _mixed({"sglang_server_install": True}, {"sglang_server_install": False})
    assert sglang_install_hosts(["m0", "m1", "gone"], {"localhost": {"sglang_plan": one}}) == ["m0"]
    assert sglang_install_hosts(["m0", "m1"], {"localhost": {"sglang_plan": MIXED}}) == []  # the default: off
    assert sglang_install_hosts(["m0", "m1"], {}) == ["m0", "m1"]  # no hostvars (a syntax check): every host


def _looked(distributions: dict) -> dict:
    """A preflight result with its look at the server stack (module sglang_preflight on a host whose stack the roles
    install)."""
    look = {"distributions": distributions, "requires": [], "markers": {}, "venv": True, "prefix": "/opt/sglang"}
    return {"sglang_preflight_result": {
        "stack": {"findings": [], "status": "ok"},
        "observed": {"runtimes": {"/opt/sglang/bin/python3|sglang": {"version": "0.5.7", "stack": {"look": look}}}}}}


def test_the_stack_play_leaves_out_a_host_whose_preflight_saw_every_package_to_install_present() -> None:
    from ansible_collections.ascend.sglang.plugins.filter.sglang_operations import sglang_install_hosts
    own = {"sglang_server_install": True, "sglang_server_packages": ["sglang==0.5.7", "torch==2.6.0"]}
    plan = _mixed(own, own)
    hostvars = {"localhost": {"sglang_plan": plan},
                "m0": _looked({"sglang": "0.5.7", "torch": "2.6.0+cpu"}),
                "m1": _looked({"sglang": "0.5.6", "torch": "2.6.0+cpu"})}
    assert sglang_install_hosts(["m0", "m1"], hostvars) == ["m1"]
    # Preflight skipped (sglang_preflight_skip), or it did not look: the play installs and checks as before.
    hostvars["m0"] = {"sglang_preflight_result": {"skipped": True}}
    assert sglang_install_hosts(["m0", "m1"], hostvars) == ["m0", "m1"]


def test_the_stack_play_reads_the_packages_as_the_role_does_when_they_refer_to_the_plan() -> None:
    """A host's sglang_server_packages that refers to the plan is left at its default by the plan (it cannot
    evaluate it) and evaluated by the role after the plan: the decision reads the host's own value, as the preflight
    action evaluated it on the host's task, checked."""
    from ansible_collections.ascend.sglang.plugins.filter.sglang_operations import sglang_install_hosts
    plan = _mixed({"sglang_server_install": True}, {"sglang_server_install": True})

    def looked(**own) -> dict:
        current = _looked({"sglang": "0.5.7+standin", "torch": "2.6.0+cpu"})
        return {"sglang_preflight_result": dict(current["sglang_preflight_result"], install_settings=own)}

    hostvars = {"localhost": {"sglang_plan": plan},
                "m0": looked(sglang_server_packages=["sglang==0.5.7+standin", "torch==2.6.0+cpu"]),
                "m1": looked(sglang_server_packages=["sglang==0.5.8+standin"])}
    assert sglang_install_hosts(["m0", "m1"], hostvars) == ["m1"]
    # A value the settings table refuses, or another virtualenv than the one preflight looked in: kept.
    hostvars["m0"] = looked(sglang_server_packages="sglang")
    hostvars["m1"] = looked(sglang_server_packages=["sglang==0.5.7+standin"], sglang_server_venv="/opt/other")
    assert sglang_install_hosts(["m0", "m1"], hostvars) == ["m0", "m1"]


def _preflight(*governors: str) -> dict:
    return {"sglang_preflight_result": {"observed": {"governors": {f"cpu{n}": g for n, g in enumerate(governors)}}}}


def test_the_tuning_play_takes_the_hosts_with_kernel_settings_or_a_governor_preflight_did_not_read_at_the_plan() -> None:
    from ansible_collections.ascend.sglang.plugins.filter.sglang_operations import sglang_tuning_hosts
    governor_only = {"sglang_host_tuning_sysctl": False}
    plan = _mixed(governor_only, governor_only)
    hostvars = {"localhost": {"sglang_plan": plan}, "m0": _preflight("performance", "performance"),
                "m1": _preflight("performance", "powersave")}
    assert sglang_tuning_hosts(["m0", "m1"], hostvars) == ["m1"]
    # Preflight skipped (its result has no observation) or not run on the host: tuned.
    hostvars["m0"] = {"sglang_preflight_result": {"skipped": True}}
    assert sglang_tuning_hosts(["m0", "gone"], hostvars) == ["m0"]
    # Kernel settings on (the default): the hosts where preflight did not read them all at the plan's, live and in
    # their file.
    from ansible_collections.ascend.sglang.plugins.plugin_utils.targets._host_files import sysctl_conf
    wanted = MIXED["hosts"]["m0"]["host_tuning"]["sysctl"]
    current = {"live": {name: str(value) for name, value in wanted.items()}, "conf": sysctl_conf(wanted)}
    both = {"localhost": {"sglang_plan": MIXED}, "m0": _preflight("performance"), "m1": _preflight("performance")}
    assert sglang_tuning_hosts(["m0", "m1"], both) == ["m0", "m1"]  # preflight read none
    both["m0"]["sglang_preflight_result"]["observed"]["sysctl"] = current
    both["m1"]["sglang_preflight_result"]["observed"]["sysctl"] = dict(current, conf=None)  # no persisted file
    assert sglang_tuning_hosts(["m0", "m1"], both) == ["m1"]
    both["m1"]["sglang_preflight_result"]["observed"]["sysctl"] = dict(
        current, live=dict(current["live"], **{"vm.swappiness": "60"}))
    assert sglang_tuning_hosts(["m0", "m1"], both) == ["m1"]
    both["m1"]["sglang_preflight_result"]["observed"]["sysctl"] = dict(
        current, live=dict(current["live"], **{"vm.swappiness": None}))  # not readable: the role says why
    assert sglang_tuning_hosts(["m0", "m1"], both) == ["m1"]
    # Both off on a host: nothing to tune there.
    off = {"sglang_host_tuning_sysctl": False, "sglang_host_tuning_governor": False}
    hostvars = {"localhost": {"sglang_plan": _mixed(off, governor_only)}, "m0": {}, "m1": _preflight("ondemand")}
    assert sglang_tuning_hosts(["m0", "m1"], hostvars) == ["m1"]
    assert sglang_tuning_hosts(["m0", "m1"], {}) == ["m0", "m1"]  # no hostvars (a syntax check): every host
