# Copyright: ascend.sglang contributors
# Apache License 2.0
"""What will run where: the plan (its dict form) as one table row per service, and one line per router with its
upstreams; what plan.yml prints and writes as JSON (sglang_plan_file).

Private to the collection; pure, no Ansible import.
"""

from __future__ import annotations

from typing import Any, Mapping

from ansible_collections.ascend.sglang.plugins.module_utils.npu._npu_topo import runs
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import SERVER_ROLES
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._table import render

HEADER = ("host", "role", "inst", "rank", "address", "ports", "npus", "runtime", "release")
# The ports a service listens on, in this order, under these names (Service.listens keys).
PORT_NAMES = (("http", "http"), ("bootstrap", "bootstrap"), ("dist_init", "dist-init"), ("watchdog", "watchdog"),
              ("memfabric_store", "memfabric"), ("metrics", "metrics"))


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def rows(plan: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per service, servers by role and instance, then routers."""
    releases = plan.get("releases") or {}
    out = []
    for host, host_plan in (plan.get("hosts") or {}).items():
        for svc in host_plan.get("services") or []:
            listens = svc.get("listens") or {}
            router = svc.get("role") == "router"
            out.append({
                "host": host, "role": svc["role"], "instance": svc["instance"], "node_rank": svc["node_rank"],
                "nnodes": svc["nnodes"], "service": svc["name"], "address": svc["host"],
                "ports": {name: listens[key] for key, name in PORT_NAMES if key in listens},
                "npus": list(svc.get("devices") or []), "cpus": svc.get("cpus"),
                "runtime": plan.get("runtime") or "host",
                "release": (f"sglang-router {releases.get('sglang_router')}" if router
                            else f"sglang {releases.get('sglang')}")})
    order = {"prefill": 0, "decode": 1, "mixed": 2, "router": 3}
    return sorted(out, key=lambda r: (order.get(r["role"], 4), r["instance"], r["node_rank"]))


def routers(plan: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each router with its upstreams (prefill with their bootstrap ports, decode, PD-mixed)."""
    ups = plan.get("router_upstreams") or {}
    out = []
    for inst in plan.get("instances") or []:
        if inst.get("role") != "router":
            continue
        out.append({"service": inst["ranks"][0], "host": inst["hosts"][0], "url": inst.get("router_url"),
                    "mini_lb": bool(inst.get("mini_lb")),
                    "upstreams": {role: [dict(u) for u in ups.get(role) or []] for role in SERVER_ROLES
                                  if ups.get(role)}})
    return out


def summary(plan: Mapping[str, Any]) -> str:
    """The plan in one line; the router release only where a router runs."""
    hosts = plan.get("hosts") or {}
    services = [s for h in hosts.values() for s in h.get("services") or []]
    releases = plan.get("releases") or {}
    line = (f"{plan.get('title')}: {_plural(len(hosts), 'host')}, {_plural(len(services), 'service')}, "
            f"sglang {releases.get('sglang')}")
    if any(s.get("role") == "router" for s in services):
        line += f", sglang-router {releases.get('sglang_router')}"
    return line + f" ({plan.get('runtime') or 'host'} runtime)"


def source(plan: Mapping[str, Any]) -> str:
    """Where the profile comes from: its document generation and release, and the page (repository, path, commit,
    anchor) or the January document and section."""
    src = plan.get("source") or {}
    if not src:
        return ""
    releases = plan.get("releases") or {}
    if src.get("repository"):
        where = (f"{src['repository']} {src.get('path')}@{str(src.get('commit'))[:12]}"
                 + (f"#{src['anchor']}" if src.get("anchor") else ""))
    else:
        where = f"document {src.get('document')}, section '{src.get('section')}'"
    return f"source: generation {src.get('generation')}, {where}; planned release sglang {releases.get('sglang')}"


def lines(plan: Mapping[str, Any]) -> list[str]:
    """The summary, the profile's source, the table, and one line per router."""
    table = render(HEADER, [[r["host"], r["role"], str(r["instance"]), f"{r['node_rank']}/{r['nnodes']}", r["address"],
                             " ".join(f"{k} {v}" for k, v in r["ports"].items()),
                             ",".join(runs(r["npus"])) or "-", r["runtime"], r["release"]] for r in rows(plan)])
    out = [summary(plan), *([source(plan)] if plan.get("source") else []), *table]
    for router in routers(plan):
        parts = []
        for role, ups in router["upstreams"].items():
            shown = [u["url"] + (f" (bootstrap {u['bootstrap_port']})" if "bootstrap_port" in u else "") for u in ups]
            parts.append(f"{role} " + ", ".join(shown))
        kind = "mini-lb" if router["mini_lb"] else "router"
        out.append(f"{router['service']} on {router['host']} ({kind}, {router['url']}): " + "; ".join(parts))
    return out


def document(plan: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON of sglang_plan_file: the rows, the routers and the whole plan."""
    return {"summary": summary(plan), "services": rows(plan), "routers": routers(plan), "plan": dict(plan)}
