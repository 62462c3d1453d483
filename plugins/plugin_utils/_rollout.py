# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Which services a deployment restarts, and how: decided from what every host reported, for the whole fleet.

Private to the collection; pure, no Ansible import. The renderer (action ascend.sglang.sglang_render_files)
reports per host, for each service, why it is due for a restart of its own:
- one of its files changed in this run (environment, secrets, launcher, unit);
- every service of the host is due (cann_env.sh or the installed packages changed: ``restart_all``);
- it runs something else than its files say (its start record, module_utils/_started.py): a restart that an
  earlier run decided and never did, because it was cut short after writing the files.
An instance restarts as a whole, on every host: all its ranks when one of them is due, or when some of its
ranks run and others do not (a rank started alone would wait for, or join, peers that are not its own start).
The filter ascend.sglang.sglang_rollout applies decide() to every host of the play at once; the renderer applies
it to its own host alone (what that host would do by itself).
"""

from __future__ import annotations

from typing import Any, Mapping


def service_facts(name: str, instance_key: str, *, due: list[str], running: bool, unit_changed: bool,
                  new_unit: bool, watchdog: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One service as the renderer reports it. due: the reasons it is due of its own; running: its unit runs;
    unit_changed / new_unit: its unit file changed / was not there before this run; watchdog: None, or its
    watchdog's {unit, due, unit_changed, new_unit}."""
    return {"name": name, "unit": name + ".service", "instance_key": instance_key, "due": list(due),
            "running": bool(running), "unit_changed": bool(unit_changed), "new_unit": bool(new_unit),
            "watchdog": dict(watchdog) if watchdog else None}


def _instances(hosts: Mapping[str, Mapping[str, Any]]) -> dict[str, list[tuple[str, Mapping[str, Any]]]]:
    out: dict[str, list[tuple[str, Mapping[str, Any]]]] = {}
    for host, facts in hosts.items():
        for svc in (facts or {}).get("services") or []:
            out.setdefault(str(svc["instance_key"]), []).append((str(host), svc))
    return out


def due_instances(hosts: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """instance key -> why the whole instance restarts (the first reason found, naming the rank and its host)."""
    due: dict[str, str] = {}
    for key, ranks in _instances(hosts).items():
        for host, svc in ranks:
            if svc["due"]:
                due[key] = f"{svc['name']} on {host}: {svc['due'][0]}"
                break
        else:
            down = [f"{svc['name']} on {host}" for host, svc in ranks if not svc["running"]]
            if down and len(down) < len(ranks):
                due[key] = f"part of the instance does not run ({', '.join(down)})"
    return due


def decide(hosts: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per host: restart (service names), why (name -> reason), start (the units to start, services first, then
    their watchdogs: {unit, restart, new_unit}), pause_watchdogs (watchdog units stopped on every host before any
    service restarts), stop_services (units stopped on every host before any starts again) and daemon_reload.

    hosts: host -> the renderer's report ({services: [service_facts...], daemon_reload}); hosts without services
    (or without a report) get nothing to do."""
    due = due_instances(hosts)
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
            "start": ([{"unit": svc["unit"], "restart": svc["name"] in restart_names, "new_unit": svc["unit_changed"]}
                       for svc in services]
                      + [{"unit": svc["watchdog"]["unit"], "restart": bool(svc["watchdog"]["due"]),
                          "new_unit": svc["watchdog"]["unit_changed"]} for svc in watchdogs]),
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
