# Copyright: ascend.sglang contributors
# Apache License 2.0
"""What a deployment runs, as the controller keeps it between runs (``<sglang_state_dir>/<deployment>.json``), and
what the next plan changes of it.

deploy.yml, upgrade.yml and retire.yml write the record once they succeed: every server instance with its ranks
(without their environment) and, per server host, how Ansible reaches it, its settings and its runtime
(_upgrade.runtime_identity). An instance the plan no longer has (its host left the inventory, a smaller
sglang_instances_per_host) stays in the record until retire.yml retires it: it still runs, and only the record
knows it. plan.yml reads the record to say, before anything runs, which instances a deploy adds, which the record
holds that the plan does not (retire them) and which an upgrade restarts, in what order.

Private to the collection; pure, no Ansible import.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import Plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._instances import instances, without_env
from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._upgrade import (
    runtime_change, runtime_identity, upgrade_waves)

RECORD_VERSION = 1
# The host variables that say how Ansible reaches a host: kept so that retire.yml reaches a host that has left the
# inventory (add_host). Never a password: those stay in the operator's vault.
CONNECTION_VARS = ("ansible_host", "ansible_port", "ansible_user", "ansible_connection", "ansible_become",
                   "ansible_become_user", "ansible_python_interpreter", "ansible_ssh_common_args",
                   "ansible_ssh_private_key_file")


def _row(inst: Mapping[str, Any]) -> dict[str, Any]:
    services = without_env(inst["services"])
    return dict(inst, services=services, rank0=services[0])


def orphans(record: Mapping[str, Any] | None, plan: Plan) -> list[dict[str, Any]]:
    """The recorded instances the plan no longer has (rollout order of the record): its key is not planned, or is
    planned with other ranks (another host, another service). They still run until retire.yml retires them."""
    planned = {inst["key"]: [(s["name"], s["inventory_host"]) for s in inst["services"]] for inst in instances(plan)}
    out = []
    for inst in (record or {}).get("instances") or []:
        ranks = [(s["name"], s["inventory_host"]) for s in inst["services"]]
        if planned.get(inst["key"]) != ranks:
            out.append(dict(inst))
    return out


def fleet_record(plan: Plan, connections: Mapping[str, Mapping[str, Any]],
                 previous: Mapping[str, Any] | None = None, retired: Iterable[str] = ()) -> dict[str, Any]:
    """The record after a run that succeeded: the plan's instances, then the previous record's orphans (minus the
    ``retired`` keys: retire.yml's); per server host (the plan's, and the orphans' hosts as recorded) its connection
    (CONNECTION_VARS of ``connections``: host -> its hostvars), settings and runtime. With ``retired``, the planned
    instances of those keys are left out too (retire.yml retires planned instances the inventory still has)."""
    gone = set(retired)
    kept = [inst for inst in orphans(previous, plan) if inst["key"] not in gone]
    rows = [_row(inst) for inst in instances(plan) if inst["key"] not in gone] + kept
    old_hosts = dict((previous or {}).get("hosts") or {})
    hosts: dict[str, Any] = {}
    for inst in rows:
        for host in inst["hosts"]:
            if host in hosts:
                continue
            if host in plan.hosts:
                own = connections.get(host) or {}
                hosts[host] = {"connection": {k: own[k] for k in CONNECTION_VARS if own.get(k) is not None},
                               "settings": dict(plan.hosts[host].settings or {}),
                               "runtime": runtime_identity(plan, host)}
            elif host in old_hosts:
                hosts[host] = old_hosts[host]
    return {"record_version": RECORD_VERSION, "deployment": plan.deployment or plan.profile, "profile": plan.profile,
            "instances": rows, "hosts": hosts}


def day_two(plan: Plan, record: Mapping[str, Any] | None, batch: int) -> dict[str, Any]:
    """What the plan changes of the recorded deployment, before anything runs (plan.yml): ``add`` (labels of the
    planned instances the record lacks), ``retire`` (the orphans: {key, label, hosts}), ``upgrade`` (host -> how its
    runtime changes) and ``waves`` (the order upgrade.yml would restart the instances of those hosts in, one line per
    wave), ``recorded`` (whether there is a record at all)."""
    if not isinstance(record, Mapping) or record.get("record_version") != RECORD_VERSION:
        return {"recorded": False, "add": [], "retire": [], "upgrade": {}, "waves": []}
    rows = instances(plan)
    known = {inst["key"] for inst in record.get("instances") or []}
    gone = orphans(record, plan)
    upgrade = {}
    for host, entry in (record.get("hosts") or {}).items():
        if host in plan.hosts:
            change = runtime_change((entry or {}).get("runtime"), runtime_identity(plan, host))
            if change:
                upgrade[host] = change
    moving = [inst for inst in rows if inst["key"] in known and any(h in upgrade for h in inst["hosts"])]
    moved = {o["key"] for o in gone}  # planned again, but with other ranks: the plan's instance is new
    return {"recorded": True,
            "add": [inst["label"] for inst in rows if inst["key"] not in known or inst["key"] in moved],
            "retire": [{"key": o["key"], "label": o["label"], "hosts": list(o["hosts"])} for o in gone],
            "upgrade": upgrade, "waves": [w["line"] for w in upgrade_waves(moving, batch)]}


def day_two_lines(changes: Mapping[str, Any]) -> list[str]:
    """plan.yml's lines of day_two()."""
    if not changes.get("recorded"):
        return ["No record of a running deployment (sglang_state_dir): everything planned is new."]
    lines = [f"Adds: {', '.join(changes['add'])}" if changes["add"] else "Adds no instance."]
    if changes["retire"]:
        lines.append("Runs but no longer planned (retire.yml -e sglang_retire=" +
                     ",".join(r["key"] for r in changes["retire"]) + "): " +
                     "; ".join(f"{r['label']} on {', '.join(r['hosts'])}" for r in changes["retire"]))
    else:
        lines.append("Retires no instance.")
    if changes["upgrade"]:
        lines.append("Upgrade (upgrade.yml; deploy.yml refuses it on running servers): " +
                     "; ".join(f"{host}: {', '.join(what)}" for host, what in changes["upgrade"].items()))
        lines.extend(changes["waves"])
    else:
        lines.append("Upgrades no instance.")
    return lines


def recorded_retire_set(record: Mapping[str, Any] | None, plan: Plan, names: Sequence[str]) -> tuple[list, list]:
    """The orphans ``names`` selects (by key, or by a host one of their ranks ran on) and the names left for the
    plan's own retire set (retire_set), in that order."""
    gone = orphans(record, plan)
    chosen: dict[str, dict[str, Any]] = {}
    rest = []
    for name in names:
        hits = [o for o in gone if o["key"] == name or (name in o["hosts"] and name not in plan.hosts)]
        for inst in hits:
            chosen.setdefault(inst["key"], inst)
        if not hits:
            rest.append(name)
    return list(chosen.values()), rest
