"""The fleet's restart decision (plugin_utils/_rollout.py): what each host restarts, every instance as a whole,
from what each host's renderer reported. Pure Python."""

from __future__ import annotations

from ansible_collections.ascend.sglang.plugins.plugin_utils._rollout import decide, due_instances, service_facts

PENDING = "restart pending, it runs other files than its own (files changed since it started: /etc/sglang/x.env)"


def svc(name, key, *, due=(), running=True, unit_changed=False, new_unit=False, watchdog=None):
    return service_facts(name, key, due=list(due), running=running, unit_changed=unit_changed, new_unit=new_unit,
                         watchdog=watchdog)


def wd(name, *, due=(), unit_changed=False, new_unit=False):
    return {"unit": f"sglang-watchdog-{name}.service", "due": list(due), "unit_changed": unit_changed,
            "new_unit": new_unit}


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


def test_daemon_reload_and_hosts_without_services() -> None:
    hosts = dict(fleet(), r0={}, p0={"services": fleet()["p0"]["services"], "daemon_reload": True})
    got = decide(hosts)
    assert got["r0"] == {"restart": [], "why": {}, "start": [], "pause_watchdogs": [], "stop_services": [],
                         "daemon_reload": False}
    assert got["p0"]["daemon_reload"] and not got["p1"]["daemon_reload"]
