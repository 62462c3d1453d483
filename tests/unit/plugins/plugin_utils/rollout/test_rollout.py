"""The fleet's restart decision (plugin_utils/rollout/_rollout.py): what each host restarts, every instance as a whole,
from what each host's renderer reported; and the renderer's own bookkeeping (what it asks the host, what the
placed files changed, why each service is due). Pure Python."""

from __future__ import annotations

import dataclasses

import pytest

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import InstancePlan
from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._rollout import (
    CANN_ENV_CHANGED, RESTART_ALL, decide, due_instances, file_changes, gate_needed, host_facts, host_queries,
    restart_reason, service_facts, stale_watchdogs)

from tests.unit.plans import service

PENDING = "restart pending, it runs other files than its own (files changed since it started: /etc/sglang/x.env)"


def svc(name, key, *, due=(), running=True, unit_changed=False, new_unit=False, watchdog=None, enabled=False):
    return service_facts(name, key, due=list(due), running=running, unit_changed=unit_changed, new_unit=new_unit,
                         watchdog=watchdog, enabled=enabled)


def wd(name, *, due=(), unit_changed=False, new_unit=False, running=False, enabled=False):
    return {"unit": f"sglang-watchdog-{name}.service", "due": list(due), "unit_changed": unit_changed,
            "new_unit": new_unit, "running": running, "enabled": enabled}


def fleet(**overrides):
    """The pd_separation layout: two single-node prefill instances, a two-node decode instance, a router."""
    hosts = {
        "p0": {"services": [svc("sglang-prefill-i0-r0", "prefill-i0")]},
        "p1": {"services": [svc("sglang-prefill-i1-r0", "prefill-i1")]},
        "d0": {"services": [svc("sglang-decode-i0-r0", "decode-i0", watchdog=wd("sglang-decode-i0-r0"))]},
        "d1": {"services": [svc("sglang-decode-i0-r1", "decode-i0", watchdog=wd("sglang-decode-i0-r1"))]},
    }
    for host, services in overrides.items():
        hosts[host] = {"services": services}
    return hosts


def test_nothing_due_starts_what_does_not_run_and_restarts_nothing() -> None:
    got = decide(fleet())
    for host, plan in got.items():
        assert plan["restart"] == [] and plan["stop_services"] == [] and plan["pause_watchdogs"] == [] and not plan["why"]
        assert all(not unit["restart"] for unit in plan["start"]), host
    # Services first, then their watchdogs.
    assert [u["unit"] for u in got["d1"]["start"]] == [
        "sglang-decode-i0-r1.service", "sglang-watchdog-sglang-decode-i0-r1.service"]


def test_a_changed_file_restarts_its_service_and_stops_it_first() -> None:
    got = decide(fleet(p0=[svc("sglang-prefill-i0-r0", "prefill-i0", due=["its files changed (env)"])]))
    assert got["p0"]["restart"] == ["sglang-prefill-i0-r0"]
    assert got["p0"]["stop_services"] == ["sglang-prefill-i0-r0.service"]
    assert got["p0"]["why"] == {"sglang-prefill-i0-r0": "its files changed (env)"}
    assert got["p1"]["restart"] == [] and got["d0"]["restart"] == []


def test_a_restart_pending_from_an_earlier_run_is_due_although_nothing_changed_now() -> None:
    """The run that wrote the files died before the restart; this run changes no file."""
    got = decide(fleet(p1=[svc("sglang-prefill-i1-r0", "prefill-i1", due=[PENDING])]))
    assert got["p1"]["restart"] == ["sglang-prefill-i1-r0"] and got["p1"]["why"]["sglang-prefill-i1-r0"] == PENDING
    assert [u["restart"] for u in got["p1"]["start"]] == [True]


def test_one_rank_pending_restarts_the_whole_instance_on_every_host() -> None:
    """Rank 1 alone restarted would join the old rank 0 and hang: every rank restarts, and every host pauses the
    instance's watchdogs and stops its ranks before any starts again."""
    got = decide(fleet(d1=[svc("sglang-decode-i0-r1", "decode-i0", due=[PENDING], watchdog=wd("sglang-decode-i0-r1"))]))
    for host, name in (("d0", "sglang-decode-i0-r0"), ("d1", "sglang-decode-i0-r1")):
        assert got[host]["restart"] == [name]
        assert got[host]["stop_services"] == [name + ".service"]
        assert got[host]["pause_watchdogs"] == [f"sglang-watchdog-{name}.service"]
    assert got["d0"]["why"]["sglang-decode-i0-r0"] == f"sglang-decode-i0-r1 on d1: {PENDING}"
    assert got["p0"]["restart"] == [] and got["p1"]["restart"] == []
    assert due_instances(fleet()) == {}


def test_an_instance_partly_down_restarts_as_a_whole() -> None:
    """Cut short while stopping: rank 0 stopped, rank 1 still runs (its own files: nothing else is due)."""
    got = decide(fleet(d0=[svc("sglang-decode-i0-r0", "decode-i0", running=False, watchdog=wd("sglang-decode-i0-r0"))]))
    assert got["d0"]["restart"] == ["sglang-decode-i0-r0"] and got["d1"]["restart"] == ["sglang-decode-i0-r1"]
    assert "does not run (sglang-decode-i0-r0 on d0)" in got["d1"]["why"]["sglang-decode-i0-r1"]
    # Every rank down (a first deployment, after stop.yml): started, nothing to restart.
    down = decide(fleet(d0=[svc("sglang-decode-i0-r0", "decode-i0", running=False)],
                        d1=[svc("sglang-decode-i0-r1", "decode-i0", running=False)]))
    assert down["d0"]["restart"] == [] and down["d1"]["restart"] == []


def settled(name, key, *, due=(), watched=False, wd_due=()):
    """A service (and its watchdog) that runs and is enabled."""
    watchdog = wd(name, due=wd_due, running=True, enabled=True) if watched else None
    return svc(name, key, due=due, enabled=True, watchdog=watchdog)


def test_units_that_run_and_are_enabled_are_left_out_so_a_no_op_makes_no_call() -> None:
    calm = fleet(p0=[settled("sglang-prefill-i0-r0", "prefill-i0")],
                 d0=[settled("sglang-decode-i0-r0", "decode-i0", watched=True)],
                 d1=[settled("sglang-decode-i0-r1", "decode-i0", watched=True)])
    got = decide(calm)
    assert got["p0"]["start"] == [] and got["d0"]["start"] == [] and got["d1"]["start"] == []
    # p1 keeps the default of a report without it (enabled not known): started and enabled, as before.
    assert [u["unit"] for u in got["p1"]["start"]] == ["sglang-prefill-i1-r0.service"]
    # Running but disabled (systemctl disable by hand): enabled again; stopped: started again.
    off = decide(fleet(p0=[svc("sglang-prefill-i0-r0", "prefill-i0", enabled=False)],
                       p1=[svc("sglang-prefill-i1-r0", "prefill-i1", running=False, enabled=True)]))
    assert off["p0"]["start"] == [{"unit": "sglang-prefill-i0-r0.service", "restart": False, "new_unit": False}]
    assert off["p1"]["start"] == [{"unit": "sglang-prefill-i1-r0.service", "restart": False, "new_unit": False}]


def test_a_watchdog_paused_for_its_service_is_started_again() -> None:
    """Running and enabled, the watchdog of a restarting rank is stopped first: it must be started after."""
    got = decide(fleet(d0=[settled("sglang-decode-i0-r0", "decode-i0", due=["its files changed (env)"], watched=True)],
                       d1=[settled("sglang-decode-i0-r1", "decode-i0", watched=True)]))
    for host, rank in (("d0", "r0"), ("d1", "r1")):
        assert got[host]["pause_watchdogs"] == [f"sglang-watchdog-sglang-decode-i0-{rank}.service"]
        assert [(u["unit"], u["restart"]) for u in got[host]["start"]] == [
            (f"sglang-decode-i0-{rank}.service", True), (f"sglang-watchdog-sglang-decode-i0-{rank}.service", False)]
    # A watchdog due of its own (and running) restarts alone.
    alone = decide(fleet(d1=[settled("sglang-decode-i0-r1", "decode-i0", watched=True, wd_due=["its files changed"])]))
    assert [u["unit"] for u in alone["d1"]["start"]] == ["sglang-watchdog-sglang-decode-i0-r1.service"]


def test_new_units_are_started_not_stopped_first() -> None:
    watchdog = wd("sglang-decode-i0-r0", due=["its files changed"], unit_changed=True, new_unit=True)
    new = svc("sglang-decode-i0-r0", "decode-i0", due=["its files changed (env, launcher, unit)"], running=False,
              unit_changed=True, new_unit=True, watchdog=watchdog)
    got = decide(fleet(d0=[new]))
    assert got["d0"]["stop_services"] == [] and got["d0"]["pause_watchdogs"] == []
    assert got["d0"]["start"][0] == {"unit": "sglang-decode-i0-r0.service", "restart": True, "new_unit": True}
    # The installed rank of the same instance is stopped before the new one starts.
    assert got["d1"]["stop_services"] == ["sglang-decode-i0-r1.service"]


def test_a_watchdog_pending_restarts_only_the_watchdog() -> None:
    got = decide(fleet(d1=[svc("sglang-decode-i0-r1", "decode-i0",
                               watchdog=wd("sglang-decode-i0-r1", due=["restart pending, ..."]))]))
    assert got["d1"]["restart"] == [] and got["d0"]["restart"] == [] and got["d1"]["pause_watchdogs"] == []
    assert got["d1"]["start"][1] == {"unit": "sglang-watchdog-sglang-decode-i0-r1.service", "restart": True,
                                     "new_unit": False}
    assert got["d1"]["why"] == {"sglang-watchdog-sglang-decode-i0-r1.service": "restart pending, ..."}


# The plan's instances of fleet() (sglang_plan.instances, the fields _rollout reads).
INSTANCES = [InstancePlan(key="prefill-i0", role="prefill", instance=0, ranks=["sglang-prefill-i0-r0"], hosts=["p0"]),
             InstancePlan(key="prefill-i1", role="prefill", instance=1, ranks=["sglang-prefill-i1-r0"], hosts=["p1"]),
             InstancePlan(key="decode-i0", role="decode", instance=0, ranks=["sglang-decode-i0-r0", "sglang-decode-i0-r1"],
                          hosts=["d0", "d1"])]


def test_the_plans_instances_decide_as_the_reported_instance_keys() -> None:
    cases = [fleet(), fleet(d1=[svc("sglang-decode-i0-r1", "decode-i0", due=[PENDING])]),
             fleet(d0=[svc("sglang-decode-i0-r0", "decode-i0", running=False)]),
             fleet(p1=[svc("sglang-prefill-i1-r0", "prefill-i1", due=["its files changed (env)"])])]
    for hosts in cases:
        assert decide(hosts, INSTANCES) == decide(hosts)
        assert due_instances(hosts, INSTANCES) == due_instances(hosts)
    # A host that did not report (not in the play): its ranks are left out, as without the plan.
    partial = {"d1": fleet(d1=[svc("sglang-decode-i0-r1", "decode-i0", due=[PENDING])])["d1"]}
    assert decide(partial, INSTANCES) == decide(partial)
    # A reported service the plan does not list still goes by its own instance key.
    extra = dict(fleet(), x0={"services": [svc("sglang-mixed-i0-r0", "mixed-i0", due=["its files changed (env)"])]})
    assert decide(extra, INSTANCES)["x0"]["restart"] == ["sglang-mixed-i0-r0"]


def test_with_the_plans_instances_the_reason_names_the_first_rank_whatever_the_host_order() -> None:
    both = fleet(d0=[svc("sglang-decode-i0-r0", "decode-i0", due=["its files changed (env)"])],
                 d1=[svc("sglang-decode-i0-r1", "decode-i0", due=[PENDING])])
    reversed_hosts = dict(reversed(list(both.items())))
    assert due_instances(reversed_hosts)["decode-i0"].startswith("sglang-decode-i0-r1 on d1")
    assert due_instances(reversed_hosts, INSTANCES)["decode-i0"] == (
        "sglang-decode-i0-r0 on d0: its files changed (env)")


def test_daemon_reload_and_hosts_without_services() -> None:
    hosts = dict(fleet(), r0={}, p0={"services": fleet()["p0"]["services"], "daemon_reload": True})
    got = decide(hosts)
    assert got["r0"] == {"restart": [], "why": {}, "start": [], "pause_watchdogs": [], "stop_services": [],
                         "daemon_reload": False}
    assert got["p0"]["daemon_reload"] and not got["p1"]["daemon_reload"]


# The renderer's bookkeeping of one host: two services, the decode rank watched (a watchdog unit is written for it).
DEC, PRE = "sglang-decode-i0-r0", "sglang-prefill-i0-r0"
WD = f"sglang-watchdog-{DEC}.service"
PLANNED = [service(name=DEC, instance_key="decode-i0"), service(name=PRE, instance_key="prefill-i0"),
           service(name="sglang-router", instance_key="router", role="router")]
KINDS = {DEC: ("env", "launcher", "unit", "watchdog_config", "watchdog_unit"),
         PRE: ("env", "secrets", "launcher", "unit")}


def rows(changed=(), new=(), program=False):
    """The files report: every file of both services and the shared watchdog program; changed / new: (service,
    kind) pairs."""
    out = [{"path": f"/x/{name}.{kind}", "kind": kind, "service": name, "changed": (name, kind) in changed,
            "new": (name, kind) in new} for name in (DEC, PRE) for kind in KINDS[name]]
    return out + [{"path": "/x/sglang_watchdog.py", "kind": "watchdog_program", "service": None, "changed": program,
                   "new": False}]


def state(unit, *, running=True, pending=False, reason=None, files=(), reload=False, enabled=True):
    return {"unit": unit, "running": running, "pending": pending, "reason": reason, "files": list(files),
            "need_daemon_reload": reload, "enabled": enabled}


def up(*extra):
    """Both services and the watchdog run what their files say; extra: states that replace theirs."""
    got = {u: state(u) for u in (DEC + ".service", PRE + ".service", WD)}
    got.update({s["unit"]: s for s in extra})
    return got


def facts(files, running=None, restart_all=None):
    """host_facts() of both services (all running, unless running says otherwise)."""
    return host_facts(files, PLANNED[:2], up() if running is None else running, restart_all)


def named(whole):
    return {svc["name"]: svc for svc in whole["services"]}


def test_host_queries_asks_for_the_services_it_writes_and_their_stale_watchdogs() -> None:
    files = [{"kind": kind, "service": name} for name in (DEC, PRE) for kind in KINDS[name]]
    got = host_queries(PLANNED, files + [{"kind": "cann_env", "service": None}], "/etc/systemd/system")
    # The router's unit is not written by this call: neither asked nor reported.
    assert [s.name for s in got["services"]] == [DEC, PRE]
    # The prefill rank gets no watchdog now: an earlier deployment's unit is looked for.
    assert got["probe"] == {f"/etc/systemd/system/sglang-watchdog-{PRE}.service": PRE}
    assert got["running"] == [DEC + ".service", PRE + ".service", WD]
    # Only cann_env.sh: no service of this call.
    assert host_queries(PLANNED, [{"kind": "cann_env", "service": None}], "/s") == {
        "services": [], "probe": {}, "running": []}


def test_stale_watchdogs_are_the_probed_units_the_host_has() -> None:
    probe = {"/s/sglang-watchdog-a.service": "a", "/s/sglang-watchdog-b.service": "b"}
    assert stale_watchdogs(probe, ["/s/sglang-watchdog-b.service", "/s/other.service"]) == ["b"]
    assert stale_watchdogs(probe, []) == [] and stale_watchdogs({}, ["/s/x"]) == []


def test_file_changes_names_each_service_once_in_file_order() -> None:
    got = file_changes(rows(changed={(PRE, "env"), (PRE, "unit"), (DEC, "watchdog_config")}))
    assert got == {"changed_services": [PRE], "changed_units": [PRE], "watched": [DEC],
                   "changed_watchdogs": [DEC], "daemon_reload": True}
    quiet = file_changes(rows(changed={(DEC, "launcher")}))
    assert quiet["changed_services"] == [DEC] and quiet["changed_watchdogs"] == [] and not quiet["daemon_reload"]
    # The watchdog program changed: every watched service's watchdog.
    assert file_changes(rows(program=True))["changed_watchdogs"] == [DEC]
    assert file_changes(rows(changed={(DEC, "watchdog_unit")}))["daemon_reload"]


def test_nothing_changed_nothing_due() -> None:
    whole = facts(rows())
    got = named(whole)
    assert got[DEC] == service_facts(DEC, "decode-i0", due=[], running=True, unit_changed=False, new_unit=False,
                                     watchdog={"unit": WD, "due": [], "unit_changed": False, "new_unit": False,
                                               "running": True, "enabled": True}, enabled=True)
    assert got[PRE]["due"] == [] and got[PRE]["watchdog"] is None
    assert whole["pending"] == [] and whole["daemon_reload"] is False
    assert decide({"h": whole})["h"]["restart"] == []
    # Everything runs and is enabled: no unit to start, no call.
    assert decide({"h": whole})["h"]["start"] == []


def test_changed_files_are_named_in_the_reason() -> None:
    whole = facts(rows(changed={(PRE, "env"), (PRE, "secrets"), (PRE, "unit")}))
    got = named(whole)
    assert got[PRE]["due"] == ["its files changed (env, secrets, unit)"]
    assert got[PRE]["unit_changed"] and not got[PRE]["new_unit"] and whole["daemon_reload"]
    assert got[DEC]["due"] == []


def test_new_units_are_reported_new() -> None:
    new = {(DEC, "unit"), (DEC, "watchdog_unit")}
    got = named(facts(rows(changed=new, new=new), running={}))
    assert got[DEC]["new_unit"] and got[DEC]["unit_changed"] and not got[DEC]["running"]
    assert got[DEC]["watchdog"] == {"unit": WD, "due": ["its files changed"], "unit_changed": True, "new_unit": True,
                                    "running": False, "enabled": False}
    assert not got[PRE]["new_unit"]


def test_restart_all_makes_every_service_due() -> None:
    got = named(facts(rows(changed={(DEC, "env")}), restart_all=RESTART_ALL))
    assert got[DEC]["due"] == ["its files changed (env)", RESTART_ALL] and got[PRE]["due"] == [RESTART_ALL]
    # Not the watchdogs: they restart with their services.
    assert got[DEC]["watchdog"]["due"] == []


def test_a_restart_pending_on_the_host_is_due_and_listed() -> None:
    pending = state(PRE + ".service", pending=True, reason="files changed since it started", files=["/e/p.env"])
    whole = facts(rows(), running=up(pending))
    got = named(whole)
    assert got[PRE]["due"] == ["restart pending, it runs other files than its own "
                               "(files changed since it started: /e/p.env)"]
    assert whole["pending"] == [{"unit": PRE + ".service", "reason": "files changed since it started",
                                 "files": ["/e/p.env"]}]
    # Without files, the reason alone.
    bare = state(PRE + ".service", pending=True, reason="no record of the files it started from")
    assert named(facts(rows(), running=up(bare)))[PRE]["due"] == [
        "restart pending, it runs other files than its own (no record of the files it started from)"]


def test_a_service_that_does_not_run_is_reported_down() -> None:
    got = named(facts(rows(), running=up(state(PRE + ".service", running=False))))
    assert not got[PRE]["running"] and got[DEC]["running"]
    # A unit the host did not report does not run either.
    assert not named(facts(rows(), running={}))[DEC]["running"]


def test_watchdog_reasons() -> None:
    program = named(facts(rows(program=True)))
    assert program[DEC]["watchdog"]["due"] == ["the watchdog program changed"]
    assert not program[DEC]["watchdog"]["new_unit"] and program[DEC]["due"] == []
    config = named(facts(rows(changed={(DEC, "watchdog_config")})))
    assert config[DEC]["watchdog"]["due"] == ["its files changed"] and config[DEC]["watchdog"]["unit_changed"]
    pending = state(WD, pending=True, reason="its start record is of an earlier start")
    whole = facts(rows(), running=up(pending))
    got = named(whole)
    assert got[DEC]["watchdog"]["due"] == [
        "restart pending, it runs other files than its own (its start record is of an earlier start)"]
    assert got[DEC]["due"] == [] and [row["unit"] for row in whole["pending"]] == [WD]
    assert decide({"h": whole})["h"]["why"] == {WD: got[DEC]["watchdog"]["due"][0]}


def test_daemon_reload_when_systemd_wants_it_and_instance_key_defaults_to_the_name() -> None:
    whole = facts(rows(), running=up(state(WD, reload=True)))
    assert whole["daemon_reload"] is True
    got = host_facts(rows(), [service(name=PRE, instance_key="")], {}, None)
    assert got["services"][0]["instance_key"] == PRE and got["daemon_reload"] is False


def test_a_cann_env_change_of_the_same_call_makes_the_services_that_source_it_due() -> None:
    cann = [{"kind": "cann_env", "changed": True}, {"kind": "env", "changed": False}]
    same = [{"kind": "cann_env", "changed": False}]
    server, router = service(name="s", role="prefill"), service(name="r", role="router")
    container = dataclasses.replace(server, name="c", role="decode", container=object())
    assert restart_reason(False, cann, [server]) == CANN_ENV_CHANGED
    # A router sources no cann_env.sh, nor does a container (its image brings CANN).
    assert restart_reason(False, cann, [router]) is None and restart_reason(False, cann, [container]) is None
    assert restart_reason(False, same, [server]) is None and restart_reason(False, [], [server]) is None
    # The caller's reason (an earlier cann_env.sh task, installed packages) whatever the call changed.
    assert restart_reason(True, same, [router]) == RESTART_ALL


# ------------------------------------------------------------------ deploy.yml's health gate: which hosts it asks
QUIET = {"start": [], "stop_services": [], "pause_watchdogs": [], "daemon_reload": False, "restart": [], "why": {}}


def _report(health: dict, **extra) -> dict:
    return {"services": [{"name": name} for name in health], "stale_watchdogs": [],
            "health": {name: {"healthy": ok, "status": "200" if ok else "503"} for name, ok in health.items()},
            **extra}


def test_a_host_that_restarted_nothing_and_was_healthy_at_the_look_is_not_asked_again() -> None:
    assert not gate_needed(_report({"sglang-mixed-i0": True, "sglang-mixed-i1": True}), QUIET)


@pytest.mark.parametrize("report, decision", [
    (_report({"sglang-mixed-i0": True, "sglang-mixed-i1": False}), QUIET),  # one not healthy at the look
    (_report({"sglang-mixed-i0": True}), dict(QUIET, start=[{"unit": "sglang-mixed-i0.service"}])),  # started
    (_report({"sglang-mixed-i0": True}), dict(QUIET, stop_services=["sglang-mixed-i0.service"])),
    (_report({"sglang-mixed-i0": True}), dict(QUIET, pause_watchdogs=["sglang-watchdog-sglang-mixed-i0.service"])),
    (_report({"sglang-mixed-i0": True}), dict(QUIET, daemon_reload=True)),
    (_report({"sglang-mixed-i0": True}, stale_watchdogs=["sglang-mixed-i0"]), QUIET),
    ({"services": [{"name": "sglang-mixed-i0"}], "stale_watchdogs": []}, QUIET),  # no look taken
    (_report({"sglang-mixed-i0": True}, failed=True), QUIET),  # the files' step failed
    ({"skipped": True}, QUIET), (None, QUIET),  # no report: the start play did not run there
    (_report({"sglang-mixed-i0": True}), None),  # no decision
    (_report({}), QUIET),  # no service looked at
], ids=["unhealthy", "started", "stopped", "watchdog paused", "daemon reload", "stale watchdog", "no look",
        "failed", "skipped", "no report", "no decision", "no service"])
def test_every_other_host_goes_through_the_gate(report, decision) -> None:
    assert gate_needed(report, decision)
