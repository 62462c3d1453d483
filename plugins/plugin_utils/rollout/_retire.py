# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Which server instances retire.yml takes out of a running deployment: each instance as a whole (every rank, on
every host), named by its key or by a host one of its ranks runs on. Refused, naming what is wrong: a name that is
neither; a host that runs no server; every instance of a role (the deployment could not serve), and instances behind
a --mini-lb router (no worker API: it would keep sending them requests), unless forced.

Private to the collection; pure, no Ansible import."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import Plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._fleet_record import recorded_retire_set
from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._instances import instances, routers


def retire_set(plan: Plan, selectors: Sequence[str] | None, force: bool = False,
               record: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """The instances (rollout/_instances.py rows, rollout order) that ``selectors`` (sglang_retire: instance keys or
    inventory hosts) name; ValueError saying what is wrong. With the controller's ``record`` of the deployment
    (rollout/_fleet_record.py), a name also selects the recorded instances the plan no longer has (their host left
    the inventory, a smaller sglang_instances_per_host): they come first, as recorded, each with ``orphan`` true."""
    found, rest = recorded_retire_set(record, plan, list(selectors or []))
    found = [dict(inst, orphan=True) for inst in found]
    if found and not rest:
        return found
    planned = instances(plan)
    if not selectors:
        raise ValueError("sglang_retire: name the instances to retire, by key or by host (planned instances: "
                         f"{', '.join(i['key'] for i in planned)})")
    by_key = {inst["key"]: inst for inst in planned}
    chosen: dict[str, dict[str, Any]] = {}
    unknown, no_server = [], []
    for name in rest:
        if name in by_key:
            chosen.setdefault(name, by_key[name])
        elif name in plan.hosts:
            on_host = [inst for inst in planned if name in inst["hosts"]]
            if not on_host:
                no_server.append(name)
            for inst in on_host:
                chosen.setdefault(inst["key"], inst)
        else:
            unknown.append(name)
    if unknown:
        raise ValueError(f"sglang_retire: {', '.join(unknown)} is neither an instance of the plan nor one of its "
                         f"hosts (planned instances: {', '.join(by_key)})")
    if no_server:
        raise ValueError(f"sglang_retire: {', '.join(no_server)} runs no server instance (a router is not retired: "
                         "stop.yml stops it)")
    if not force:
        for role in dict.fromkeys(inst["role"] for inst in chosen.values()):
            left = [inst["key"] for inst in planned if inst["role"] == role and inst["key"] not in chosen]
            if not left:
                raise ValueError(f"sglang_retire would retire every {role} instance "
                                 f"({', '.join(k for k in chosen if chosen[k]['role'] == role)}): the deployment could "
                                 "not serve; set sglang_retire_force=true to do it anyway")
        mini = [router["name"] for router in routers(plan) if router["mini_lb"]]
        if mini:
            raise ValueError(f"sglang_retire: {', '.join(mini)} runs --mini-lb (no worker API): it would keep sending "
                             "requests to a retired instance until a deploy restarts it. Take the instance out of the "
                             "inventory and deploy (the router restarts without it), then retire it with "
                             "sglang_retire_force=true")
    order = [inst["key"] for inst in planned]
    return found + sorted(chosen.values(), key=lambda inst: order.index(inst["key"]))
