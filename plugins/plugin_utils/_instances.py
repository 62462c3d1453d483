# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The plan's server instances and routers as the operations playbooks (restart, stop, status) take them: the
instances in rollout order with their ranks and router registration, the routers with their address, the
instances with a restart pending, and the services without their environment for the modules that probe them.

Private to the collection; pure, no Ansible import.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

ROLE_ORDER = ("prefill", "decode", "mixed")


def planned_services(plan: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every planned service, each with the inventory host it runs on."""
    out = []
    for host, hp in (plan.get("hosts") or {}).items():
        for svc in (hp or {}).get("services") or []:
            out.append(dict(svc, inventory_host=svc.get("inventory_host") or host))
    return out


def without_env(services: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Services as a module that probes them needs them: everything but the environment, whose values a
    module's arguments would show (-vvv, the host's journal) where plan.yml keeps them out of the log."""
    return [{k: v for k, v in svc.items() if k != "env"} for svc in services or []]


def routers(plan: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The router services, each with ``base_url`` and the plan's ``mini_lb`` (no worker API)."""
    out = []
    for svc in planned_services(plan):
        if svc["role"] == "router":
            out.append(dict(svc, base_url=f"http://{svc['host']}:{svc['port']}", mini_lb=bool(svc.get("mini_lb"))))
    return sorted(out, key=lambda s: s["instance"])


def instances(plan: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Server instances of the plan (``instances``) in rollout order (prefill, decode, mixed; by instance index),
    each with its ranks' services (rank order), its rank 0, its router registration (url, worker_type,
    bootstrap_port) and how many instances its role has (a role with one instance cannot serve while it
    restarts)."""
    by_name = {svc["name"]: svc for svc in planned_services(plan)}
    planned = [i for i in plan.get("instances") or [] if i["role"] in ROLE_ORDER]
    per_role: dict[str, int] = {}
    for inst in planned:
        per_role[inst["role"]] = per_role.get(inst["role"], 0) + 1
    out = []
    for inst in planned:
        ranks = [by_name[name] for name in inst["ranks"]]
        out.append({"key": inst["key"], "role": inst["role"], "instance": inst["instance"],
                    "label": f"{inst['role']} instance {inst['instance']}", "hosts": list(inst["hosts"]),
                    "services": ranks, "rank0": ranks[0], "worker": dict(inst["worker"]),
                    "role_instances": per_role[inst["role"]]})
    out.sort(key=lambda i: (ROLE_ORDER.index(i["role"]), i["instance"]))
    return out


def pending_instances(plan: Mapping[str, Any], status_by_host: Mapping[str, Any]) -> list[str]:
    """Keys of the server instances (rollout order) one of whose ranks, or its watchdog, runs other files than its
    own (``sglang_service_status`` ``pending``; module_utils/_started.py). status_by_host: host -> that host's
    sglang_service_status result."""
    out = []
    for inst in instances(plan):
        for svc in inst["services"]:
            got = (((status_by_host or {}).get(svc["inventory_host"]) or {}).get("services") or {}).get(svc["name"])
            if isinstance(got, Mapping) and got.get("pending"):
                out.append(inst["key"])
                break
    return out
