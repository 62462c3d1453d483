# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Which services a deployment restarts, and how: decided from what every host reported, for the whole fleet.

Private to the collection; pure, no Ansible import. The renderer (action ascend.sglang.sglang_render_files)
reports per host, for each service, why it is due for a restart of its own:
- one of its files changed in this run (environment, secrets, launcher, unit);
- every service of the host is due (cann_env.sh or the installed packages changed: ``restart_all``);
- it runs something else than its files say (its start record, module_utils/files/_started.py): a restart that an
  earlier run decided and never did, because it was cut short after writing the files.
An instance restarts as a whole, on every host: all its ranks when one of them is due, or when some of its
ranks run and others do not (a rank started alone would wait for, or join, peers that are not its own start).
The filter ascend.sglang.sglang_rollout applies decide() to every host of the play at once: the one place the
decision is made (the renderer only reports).

The renderer's own bookkeeping is here too, so that it only gathers data and copies results: host_queries() (what
to ask the host when placing the files), file_changes() (what the placed files changed), stale_watchdogs() and
host_facts() (each service's report for decide()).
"""

from __future__ import annotations

import posixpath
from typing import Any, Iterable, Mapping, Sequence

from ansible_collections.ascend.sglang.plugins.module_utils.files._started import pending_rows
from ansible_collections.ascend.sglang.plugins.plugin_utils.targets._host_files import (
    SERVICE_KINDS, WATCHDOG_KINDS, sources_cann_env)
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import InstancePlan, Service
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._watchdog import unit_name

# The reason every service of a host is due (the renderer's restart_all).
RESTART_ALL = "cann_env.sh or the installed packages changed"
# The reason every service that sources cann_env.sh is due when the same call changed it.
CANN_ENV_CHANGED = "cann_env.sh changed"


def restart_reason(restart_all: bool, files: Sequence[Mapping[str, Any]], services: Sequence[Service]) -> str | None:
    """Why every service of the call is due, if so: the caller says so (restart_all: cann_env.sh written by an
    earlier task, or packages installed), or this call changed cann_env.sh and its services source it (a
    server's on the host runtime; not a router's, not a container's). files: the placed files ({kind, changed});
    services: the call's services."""
    if restart_all:
        return RESTART_ALL
    changed = any(row["changed"] for row in files if row["kind"] == "cann_env")
    return CANN_ENV_CHANGED if changed and any(sources_cann_env(svc) for svc in services) else None


def service_facts(name: str, instance_key: str, *, due: list[str], running: bool, unit_changed: bool,
                  new_unit: bool, watchdog: Mapping[str, Any] | None = None, enabled: bool = False) -> dict[str, Any]:
    """One service as the renderer reports it. due: the reasons it is due of its own; running / enabled: its unit
    runs / is enabled (False when not known: the unit is then started and enabled, which changes nothing where it
    already is); unit_changed / new_unit: its unit file changed / was not there before this run; watchdog: None,
    or its watchdog's {unit, due, unit_changed, new_unit, running, enabled}."""
    return {"name": name, "unit": name + ".service", "instance_key": instance_key, "due": list(due),
            "running": bool(running), "enabled": bool(enabled), "unit_changed": bool(unit_changed),
            "new_unit": bool(new_unit), "watchdog": dict(watchdog) if watchdog else None}


def host_queries(services: Sequence[Service], files: Iterable[Mapping[str, Any]], systemd_dir: str) -> dict[str, Any]:
    """What the renderer asks the host in the call that places the files.

    services: the host's planned services; files: the files of this call, {kind, service} each; systemd_dir: where
    the units are. Returns services: the planned services whose unit this call writes (none when it writes only
    cann_env.sh, say), in plan order; probe: path -> service of the watchdog units of those services that get none
    now (an earlier deployment's, looked for); running: the units whose state is judged against their files
    (module_utils/files/_started.py), those services' then their watchdogs'."""
    files = list(files)
    rendered = {row["service"] for row in files if row["kind"] == "unit"}
    watched = {row["service"] for row in files if row["kind"] == "watchdog_unit"}
    own = [svc for svc in services if svc.name in rendered]
    names = [svc.name for svc in own]
    return {"services": own,
            "probe": {posixpath.join(str(systemd_dir), unit_name(name)): name for name in names if name not in watched},
            "running": [name + ".service" for name in names] + [unit_name(name) for name in names if name in watched]}


def stale_watchdogs(probe: Mapping[str, str], present: Iterable[str]) -> list[str]:
    """Services whose watchdog unit of an earlier deployment is still installed although they get none now.

    probe: host_queries()'s path -> service; present: the probed paths the host found."""
    return [probe[path] for path in present if path in probe]


def file_changes(files: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What the placed files changed. files: one row per file, {path, kind, service, changed, new}.

    Returns changed_services (a service file changed: SERVICE_KINDS), changed_units, watched (the services that
    get a watchdog: a watchdog unit is written for each), changed_watchdogs (every watched service when the
    watchdog program changed, else those whose watchdog files changed) and daemon_reload (a unit file changed);
    service names in file order, each once."""
    def names(kinds: Sequence[str]) -> list[str]:
        out: list[str] = []
        for row in files:
            if row["changed"] and row["kind"] in kinds and row["service"] not in out:
                out.append(row["service"])
        return out

    watched = [row["service"] for row in files if row["kind"] == "watchdog_unit"]
    program = any(row["changed"] for row in files if row["kind"] == "watchdog_program")
    return {"changed_services": names(SERVICE_KINDS), "changed_units": names(("unit",)), "watched": watched,
            "changed_watchdogs": list(watched) if program else names(WATCHDOG_KINDS),
            "daemon_reload": any(row["changed"] for row in files if row["kind"] in ("unit", "watchdog_unit"))}


def _pending_text(state: Mapping[str, Any]) -> str:
    files = f": {', '.join(state['files'])}" if state.get("files") else ""
    return f"restart pending, it runs other files than its own ({state['reason']}{files})"


def host_facts(files: Sequence[Mapping[str, Any]], services: Sequence[Service],
               running: Mapping[str, Mapping[str, Any]], restart_all: str | None) -> dict[str, Any]:
    """One host's report for decide(): per service, why it is due of its own; the restarts pending on the host.

    files: the files report (file_changes()); services: host_queries()'s services; running: unit -> its state as
    the host judged it ({running, pending, reason, files, need_daemon_reload, ...}; a unit missing is not running);
    restart_all: None, or why every service is due (RESTART_ALL).
    Returns services (service_facts() each), pending ({unit, reason, files} of the units with a restart pending)
    and daemon_reload (a unit file changed, or systemd wants a reload of a unit)."""
    changes = file_changes(files)
    changed: dict[str, list[str]] = {}
    for row in files:
        if row["changed"] and row["kind"] in SERVICE_KINDS:
            changed.setdefault(row["service"], []).append(row["kind"])
    program = any(row["changed"] for row in files if row["kind"] == "watchdog_program")
    new_units = {row["service"] for row in files if row["kind"] == "unit" and row["new"]}
    new_watchdogs = {row["service"] for row in files if row["kind"] == "watchdog_unit" and row["new"]}
    changed_units, changed_watchdogs = set(changes["changed_units"]), set(changes["changed_watchdogs"])
    facts = []
    for svc in services:
        name = svc.name
        state = running.get(name + ".service") or {}
        due = [f"its files changed ({', '.join(changed[name])})"] if name in changed else []
        if restart_all:
            due.append(restart_all)
        if state.get("pending"):
            due.append(_pending_text(state))
        watchdog = None
        if name in changes["watched"]:
            wd_unit = unit_name(name)
            wd_state = running.get(wd_unit) or {}
            wd_due = ([("the watchdog program changed" if program else "its files changed")]
                      if name in changed_watchdogs else [])
            if wd_state.get("pending"):
                wd_due.append(_pending_text(wd_state))
            watchdog = {"unit": wd_unit, "due": wd_due, "unit_changed": name in changed_watchdogs,
                        "new_unit": name in new_watchdogs, "running": bool(wd_state.get("running")),
                        "enabled": bool(wd_state.get("enabled"))}
        facts.append(service_facts(name, str(svc.instance_key or name), due=due,
                                   running=bool(state.get("running")), unit_changed=name in changed_units,
                                   new_unit=name in new_units, watchdog=watchdog, enabled=bool(state.get("enabled"))))
    reload = changes["daemon_reload"] or any(state.get("need_daemon_reload") for state in running.values())
    return {"services": facts, "pending": pending_rows(list(running.values())), "daemon_reload": reload}


def _instances(hosts: Mapping[str, Mapping[str, Any]],
               planned: Sequence[InstancePlan] | None = None) -> dict[str, list[tuple[str, Mapping[str, Any]]]]:
    """instance key -> its reported ranks, (host, service report) each. planned: the plan's instances: each instance
    is its ranks as the plan lists them, in rank order, whatever the order of the reports. A reported service the
    plan does not list (or every one, without it) goes by the instance key it reports (the plan's
    Service.instance_key); ranks whose host did not report are left out either way."""
    reported = {(str(host), str(svc["name"])): svc
                for host, facts in hosts.items() for svc in (facts or {}).get("services") or []}
    out: dict[str, list[tuple[str, Mapping[str, Any]]]] = {}
    for inst in planned or ():
        ranks = [(host, reported.pop((host, name))) for name, host in zip(inst.ranks, inst.hosts)
                 if (host, name) in reported]
        if ranks:
            out[inst.key] = ranks
    for (host, _name), svc in reported.items():
        out.setdefault(str(svc["instance_key"]), []).append((host, svc))
    return out


def due_instances(hosts: Mapping[str, Mapping[str, Any]],
                  instances: Sequence[InstancePlan] | None = None) -> dict[str, str]:
    """instance key -> why the whole instance restarts (the first reason found, in rank order with the plan's
    ``instances``, naming the rank and its host)."""
    due: dict[str, str] = {}
    for key, ranks in _instances(hosts, instances).items():
        for host, svc in ranks:
            if svc["due"]:
                due[key] = f"{svc['name']} on {host}: {svc['due'][0]}"
                break
        else:
            down = [f"{svc['name']} on {host}" for host, svc in ranks if not svc["running"]]
            if down and len(down) < len(ranks):
                due[key] = f"part of the instance does not run ({', '.join(down)})"
    return due


def _busy(unit: Mapping[str, Any], restart: bool) -> bool:
    """A unit has something to do unless it runs, is enabled and is not restarted."""
    return restart or not (unit.get("running") and unit.get("enabled"))


def _start(unit: Mapping[str, Any], restart: bool) -> dict[str, Any]:
    return {"unit": unit["unit"], "restart": restart, "new_unit": unit["unit_changed"]}


def decide(hosts: Mapping[str, Mapping[str, Any]],
           instances: Sequence[InstancePlan] | None = None) -> dict[str, dict[str, Any]]:
    """Per host: restart (service names), why (name -> reason), start (the units with something to do, services
    first, then their watchdogs: {unit, restart, new_unit}; a unit that runs, is enabled and is not restarted is
    left out, so a host with nothing to do makes no call), pause_watchdogs (watchdog units stopped on every host
    before any service restarts), stop_services (units stopped on every host before any starts again) and daemon_reload.

    hosts: host -> the renderer's report ({services: [service_facts...], daemon_reload}); hosts without services
    (or without a report) get nothing to do. instances: the plan's instances (Plan.instances), which ranks form
    each instance."""
    due = due_instances(hosts, instances)
    out: dict[str, dict[str, Any]] = {}
    for host, facts in hosts.items():
        services = list((facts or {}).get("services") or [])
        restart = [svc for svc in services if svc["instance_key"] in due]
        why = {svc["name"]: (svc["due"][0] if svc["due"] else due[svc["instance_key"]]) for svc in restart}
        restart_names = {svc["name"] for svc in restart}
        watchdogs = [svc for svc in services if svc.get("watchdog")]
        for svc in watchdogs:
            if svc["watchdog"]["due"] and svc["name"] not in restart_names:
                why[svc["watchdog"]["unit"]] = svc["watchdog"]["due"][0]
        out[str(host)] = {
            "restart": [svc["name"] for svc in restart],
            "why": why,
            "start": ([_start(svc, svc["name"] in restart_names) for svc in services
                       if _busy(svc, svc["name"] in restart_names)]
                      # A watchdog paused below (its service restarts) is started again whatever it was doing.
                      + [_start(svc["watchdog"], bool(svc["watchdog"]["due"])) for svc in watchdogs
                         if _busy(svc["watchdog"], bool(svc["watchdog"]["due"]) or svc["name"] in restart_names)]),
            # Watchdogs of services about to restart: stopped on every host before any host restarts a service,
            # started again after them (a running one would see rank 0 restart first and restart its own rank,
            # possibly after that rank had joined the new rank 0).
            "pause_watchdogs": [svc["watchdog"]["unit"] for svc in restart
                                if svc.get("watchdog") and not svc["watchdog"]["new_unit"]],
            # Services about to restart whose unit was installed before: stopped on every host before any host
            # starts one again. Restarted host by host, a new rank > 0 of a multi-node instance could join the old
            # rank 0 still running on another host, and hang there as SGLang does.
            "stop_services": [svc["unit"] for svc in restart if not svc["new_unit"]],
            "daemon_reload": bool((facts or {}).get("daemon_reload")),
        }
    return out


def gate_needed(report: Mapping[str, Any] | None, decision: Mapping[str, Any] | None) -> bool:
    """Whether a server host must go through deploy.yml's health gate: unless the call that placed its files
    (report: its render result) looked at every one of its services and found each healthy, and the rollout
    (decision: decide()'s entry of the host) starts, stops, pauses and reloads nothing there. Then nothing changed
    on the host since that look, and the gate would make one more call to find what it already knows. A host
    without a usable report or decision (a failed or skipped step) always goes through it."""
    if not isinstance(report, Mapping) or report.get("failed") or report.get("skipped"):
        return True
    if not isinstance(decision, Mapping):
        return True
    health = report.get("health") or {}
    names = [str(svc.get("name")) for svc in report.get("services") or []]
    if not names or any(not (health.get(name) or {}).get("healthy") for name in names):
        return True
    busy = (list(decision.get("start") or []) + list(decision.get("stop_services") or [])
            + list(decision.get("pause_watchdogs") or []) + list(report.get("stale_watchdogs") or []))
    return bool(busy) or bool(decision.get("daemon_reload"))
