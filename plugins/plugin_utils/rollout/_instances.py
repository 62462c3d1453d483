# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The plan's server instances and routers as the operations playbooks (restart, stop, status) take them: the
instances in rollout order with their ranks and router registration, the routers with their address, the
instances with a restart pending, and the services without their environment for the modules that probe them.

They take the typed plan (plan/_records.py Plan; the filters make it of sglang_plan) and give dicts: what the
playbooks loop over and the modules take.  Private to the collection; pure, no Ansible import.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import Plan

ROLE_ORDER = ("prefill", "decode", "mixed")


def planned_services(plan: Plan) -> list[dict[str, Any]]:
    """Every planned service in its dict form (what the playbooks and modules take), each with the inventory host
    it runs on."""
    return [dict(svc.as_dict(), inventory_host=svc.inventory_host or host)
            for host, host_plan in plan.hosts.items() for svc in host_plan.services]


def without_env(services: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Services as a module that probes them needs them: everything but the environment, whose values a
    module's arguments would show (-vvv, the host's journal) where plan.yml keeps them out of the log."""
    return [{k: v for k, v in svc.items() if k != "env"} for svc in services or []]


def routers(plan: Plan) -> list[dict[str, Any]]:
    """The router services, each with ``base_url`` and the plan's ``mini_lb`` (no worker API)."""
    out = []
    for svc in planned_services(plan):
        if svc["role"] == "router":
            out.append(dict(svc, base_url=f"http://{svc['host']}:{svc['port']}", mini_lb=bool(svc.get("mini_lb"))))
    return sorted(out, key=lambda s: s["instance"])


def instances(plan: Plan) -> list[dict[str, Any]]:
    """Server instances of the plan (``instances``) in rollout order (prefill, decode, mixed; by instance index),
    each with its ranks' services (rank order), its rank 0, its router registration (url, worker_type,
    bootstrap_port) and how many instances its role has (a role with one instance cannot serve while it
    restarts)."""
    by_name = {svc["name"]: svc for svc in planned_services(plan)}
    planned = [inst for inst in plan.instances if inst.role in ROLE_ORDER]
    per_role: dict[str, int] = {}
    for inst in planned:
        per_role[inst.role] = per_role.get(inst.role, 0) + 1
    out = []
    for inst in planned:
        ranks = [by_name[name] for name in inst.ranks]
        out.append({"key": inst.key, "role": inst.role, "instance": inst.instance,
                    "label": f"{inst.role} instance {inst.instance}", "hosts": list(inst.hosts),
                    "services": ranks, "rank0": ranks[0], "worker": dict(inst.worker or {}),
                    "role_instances": per_role[inst.role]})
    out.sort(key=lambda i: (ROLE_ORDER.index(i["role"]), i["instance"]))
    return out


def pending_instances(plan: Plan, status_by_host: Mapping[str, Any]) -> list[str]:
    """Keys of the server instances (rollout order) one of whose ranks, or its watchdog, runs other files than its
    own (``sglang_service_status`` ``pending``; module_utils/files/_started.py). status_by_host: host -> that host's
    sglang_service_status result."""
    out = []
    for inst in instances(plan):
        for svc in inst["services"]:
            got = (((status_by_host or {}).get(svc["inventory_host"]) or {}).get("services") or {}).get(svc["name"])
            if isinstance(got, Mapping) and got.get("pending"):
                out.append(inst["key"])
                break
    return out


def restart_batches(selected: Iterable[Mapping[str, Any]], size: int) -> list[dict[str, Any]]:
    """The batches of a rolling restart: the selected instances (``instances()`` items, rollout order) in runs of at
    most ``size``. A batch never mixes roles, so prefill instances are all back before any decode instance goes,
    as with one instance at a time. Each batch carries its instances, every rank's service, the ranks other than
    rank 0 (checked active once rank 0 is healthy), a label, and whether it takes every instance of its role out
    of service at once (restart.yml warns: the deployment cannot serve meanwhile)."""
    out: list[dict[str, Any]] = []
    for inst in selected:
        last = out[-1] if out else None
        if last is None or last["role"] != inst["role"] or len(last["instances"]) >= size:
            last = {"role": inst["role"], "instances": []}
            out.append(last)
        last["instances"].append(dict(inst))
    for number, batch in enumerate(out, 1):
        members = batch["instances"]
        batch.update(
            number=number, count=len(out), labels=[i["label"] for i in members],
            label=", ".join(i["label"] for i in members),
            services=[svc for i in members for svc in i["services"]],
            others=[svc for i in members for svc in i["services"][1:]],
            hosts=list(dict.fromkeys(h for i in members for h in i["hosts"])),
            whole_role=len(members) == members[0]["role_instances"] and len(members) > 1)
    return out


# The loop variables of restart.yml's tasks (playbooks/tasks/ops_restart_batch.yml) and what names each item.
_ITEM_NAMES = (("__sglang_inst", "label"), ("__sglang_svc", "name"))


def failed_items(result: Any) -> list[str]:
    """What a failed looped task of a rolling restart failed on: the label of each failed item's instance, the name
    of its service, or the instance of its (instance, router) pair; empty for a task without a loop."""
    out: list[str] = []
    items = result.get("results") if isinstance(result, Mapping) else None
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, Mapping) or not item.get("failed"):
            continue
        pair = item.get("__sglang_pair")
        named = [item[var].get(key) for var, key in _ITEM_NAMES if isinstance(item.get(var), Mapping)]
        if isinstance(pair, (list, tuple)) and pair and isinstance(pair[0], Mapping):
            named.append(pair[0].get("label"))
        out.extend(str(n) for n in named if n)
    return list(dict.fromkeys(out))
