# Copyright: ascend.sglang contributors
# Apache License 2.0
"""What will run where: the plan as one table row per service, and one line per router with its
upstreams; what plan.yml prints and writes as JSON (sglang_plan_file).

Private to the collection; pure, no Ansible import.
"""

from __future__ import annotations

from typing import Any

from ansible_collections.ascend.sglang.plugins.module_utils.npu._npu_topo import runs
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import SERVER_ROLES
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._table import render
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import Plan

HEADER = ("host", "role", "inst", "rank", "address", "ports", "npus", "runtime", "release")
# The ports a service listens on, in this order, under these names (Service.listens keys).
PORT_NAMES = (("http", "http"), ("bootstrap", "bootstrap"), ("dist_init", "dist-init"), ("watchdog", "watchdog"),
              ("memfabric_store", "memfabric"), ("metrics", "metrics"))


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def rows(plan: Plan) -> list[dict[str, Any]]:
    """One row per service, servers by role and instance, then routers."""
    out = []
    for host, host_plan in plan.hosts.items():
        for svc in host_plan.services:
            router = svc.role == "router"
            out.append({
                "host": host, "role": svc.role, "instance": svc.instance, "node_rank": svc.node_rank,
                "nnodes": svc.nnodes, "service": svc.name, "address": svc.host,
                "ports": {name: svc.listens[key] for key, name in PORT_NAMES if key in svc.listens},
                "npus": list(svc.devices), "cpus": svc.cpus, "runtime": plan.runtime,
                "release": (f"sglang-router {plan.releases.get('sglang_router')}" if router
                            else f"sglang {plan.releases.get('sglang')}")})
    order = {"prefill": 0, "decode": 1, "mixed": 2, "router": 3}
    return sorted(out, key=lambda r: (order.get(r["role"], 4), r["instance"], r["node_rank"]))


def routers(plan: Plan) -> list[dict[str, Any]]:
    """Each router with its upstreams (prefill with their bootstrap ports, decode, PD-mixed), and how a change of
    them reaches it (membership: ``api``, through its worker API, no restart; ``restart``, --mini-lb or a list the
    launcher holds)."""
    ups = plan.router_upstreams
    services = {s.name: s for h in plan.hosts.values() for s in h.services}
    return [{"service": inst.ranks[0], "host": inst.hosts[0], "url": inst.router_url, "mini_lb": inst.mini_lb,
             "membership": "api" if services[inst.ranks[0]].boot_workers else "restart",
             "upstreams": {role: [dict(u) for u in ups.get(role) or []] for role in SERVER_ROLES if ups.get(role)}}
            for inst in plan.instances if inst.role == "router"]


# How a change of the instances reaches a router, as plan.yml's line of it says.
MEMBERSHIP = {"api": "a change of instances goes through its worker API, no restart",
              "restart": "a change of instances restarts it"}


def summary(plan: Plan) -> str:
    """The plan in one line; the router release only where a router runs."""
    services = [s for h in plan.hosts.values() for s in h.services]
    line = (f"{plan.title}: {_plural(len(plan.hosts), 'host')}, {_plural(len(services), 'service')}, "
            f"sglang {plan.releases.get('sglang')}")
    if any(s.role == "router" for s in services):
        line += f", sglang-router {plan.releases.get('sglang_router')}"
    return line + f" ({plan.runtime} runtime)"


def source(plan: Plan) -> str:
    """Where the profile comes from: its document generation and release, and the page (repository, path, commit,
    anchor) or the January document and section."""
    src = plan.source
    if not src:
        return ""
    if src.get("repository"):
        where = (f"{src['repository']} {src.get('path')}@{str(src.get('commit'))[:12]}"
                 + (f"#{src['anchor']}" if src.get("anchor") else ""))
    else:
        where = f"document {src.get('document')}, section '{src.get('section')}'"
    return f"source: generation {src.get('generation')}, {where}; planned release sglang {plan.releases.get('sglang')}"


def lines(plan: Plan) -> list[str]:
    """The summary, the profile's source, the table, and one line per router."""
    table = render(HEADER, [[r["host"], r["role"], str(r["instance"]), f"{r['node_rank']}/{r['nnodes']}", r["address"],
                             " ".join(f"{k} {v}" for k, v in r["ports"].items()),
                             ",".join(runs(r["npus"])) or "-", r["runtime"], r["release"]] for r in rows(plan)])
    out = [summary(plan), *([source(plan)] if plan.source else []), *table]
    for router in routers(plan):
        parts = []
        for role, ups in router["upstreams"].items():
            shown = [u["url"] + (f" (bootstrap {u['bootstrap_port']})" if "bootstrap_port" in u else "") for u in ups]
            parts.append(f"{role} " + ", ".join(shown))
        kind = "mini-lb" if router["mini_lb"] else "router"
        out.append(f"{router['service']} on {router['host']} ({kind}, {router['url']}; "
                   f"{MEMBERSHIP[router['membership']]}): " + "; ".join(parts))
    return out


def document(plan: Plan) -> dict[str, Any]:
    """The JSON of sglang_plan_file: the rows, the routers and the whole plan (its dict form)."""
    return {"summary": summary(plan), "services": rows(plan), "routers": routers(plan), "plan": plan.as_dict()}
