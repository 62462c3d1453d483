# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The status of a deployment: every host's sglang_service_status result -> one row per planned service (systemd
state, health, uptime, an instance's load from rank 0's /metrics, the files it runs, the router's view of it, its
watchdog), the table of those rows, and the verdicts on them (action ascend.sglang.sglang_status_report; doctor.yml's
watchdog lines).

Private to the collection; pure, no Ansible import.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from ansible_collections.ascend.sglang.plugins.module_utils.http._router_workers import find_worker
from ansible_collections.ascend.sglang.plugins.module_utils.files._started import pending_text
from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._instances import instances, routers
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import Plan, Service
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import SERVER_ROLES
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._table import render

COLUMNS = (("host", "host"), ("role", "role"), ("instance", "inst"), ("node_rank", "rank"), ("port", "port"),
           ("service", "service"), ("state", "systemd"), ("health", "health"), ("uptime", "uptime"),
           ("run", "run"), ("queue", "queue"), ("tpot", "tpot_ms"), ("config", "running config"),
           ("router_view", "router's view"), ("watchdog", "watchdog"))
# A metrics error in the table is cut to this many characters; the row (and the JSON) keeps all of it.
METRICS_ERROR_WIDTH = 32


def router_view(plan: Plan, listing: Mapping[str, Any] | None, mini_lb: bool) -> dict[str, str]:
    """Per planned upstream URL, what the router says about it: healthy, unhealthy, not registered,
    or, for --mini-lb, that it cannot tell; plus unplanned workers it routes to (key ``extra:<url>``)."""
    view: dict[str, str] = {}
    planned = [i["worker"]["url"] for i in instances(plan)]
    for url in planned:
        if mini_lb:
            view[url] = "configured (mini-lb: no worker API)"
        elif listing is None:
            view[url] = "unknown (router not answering)"
        else:
            worker = find_worker(listing, url)
            view[url] = ("not registered" if worker is None else
                         f"{worker.get('worker_type', '?')} {'healthy' if worker.get('is_healthy') else 'UNHEALTHY'}")
    if listing and not mini_lb:
        for worker in listing.get("workers") or []:
            url = str(worker.get("url", "")).rstrip("/")
            if url not in planned:
                view[f"extra:{url}"] = f"{worker.get('worker_type', '?')} not in the plan"
    return view


def format_duration(seconds: int | None) -> str:
    """``[<days>d ]HH:MM:SS``, ``-`` for no duration (a unit that is not active)."""
    if seconds is None:
        return "-"
    days, rest = divmod(int(seconds), 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return (f"{days}d " if days else "") + f"{hours:02d}:{minutes:02d}:{secs:02d}"


def metrics_cells(svc: Service, got: Mapping[str, Any] | None) -> dict[str, str]:
    """The ``run``, ``queue`` and ``tpot`` cells of a service: rank 0 of a server instance with metrics on shows
    its load (``tpot`` ``-`` before its first output token); a failed read shows its error, cut short, under
    ``run``; ``-`` for metrics off and every other service, ``?`` where the host said nothing about it."""
    if not (svc.metrics_url and svc.role in SERVER_ROLES and svc.node_rank == 0):
        return {"run": "-", "queue": "-", "tpot": "-"}
    got = got or {}
    load = got.get("metrics")
    if isinstance(load, Mapping):
        tpot = load.get("tpot_ms")
        return {"run": _figure(load.get("running")), "queue": _figure(load.get("queued")),
                "tpot": f"{tpot:.1f}" if isinstance(tpot, (int, float)) else "-"}
    if got.get("metrics_error"):
        return {"run": metrics_error_cell(str(got["metrics_error"])), "queue": "?", "tpot": "?"}
    return {"run": "?", "queue": "?", "tpot": "?"}


def metrics_error_cell(error: str) -> str:
    """A metrics error cut short for the table (the row keeps all of it): the columns already say it is about
    /metrics, and why a page did not answer is the health column's business too."""
    text = " ".join(error.split())
    if text.startswith("GET /metrics: "):
        text = text[len("GET /metrics: "):]
        if text.isdigit():
            text = f"HTTP {text}"
        elif text.startswith("no answer ("):
            text = "no answer"
    return text if len(text) <= METRICS_ERROR_WIDTH else text[:METRICS_ERROR_WIDTH - 3].rstrip() + "..."


def _figure(value: Any) -> str:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return "?"
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"


def status_rows(plan: Plan, observed: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per planned service.  ``observed[host]`` is the host's sglang_service_status result
    (``{"services": {name: {...}}}``) or None when the host gave none (unreachable)."""
    router_list = routers(plan)
    views: dict[str, str] = {}
    for router in router_list:
        got = ((observed.get(router["inventory_host"]) or {}).get("services") or {}).get(router["name"]) or {}
        listing = got.get("workers") if isinstance(got.get("workers"), Mapping) else None
        for url, text in router_view(plan, listing, router["mini_lb"]).items():
            prefix = f"{router['name']}: " if len(router_list) > 1 else ""
            views[url] = (views[url] + "; " if url in views else "") + prefix + text
    rows = []
    # Rollout order: each server service sorts by its instance's place in the plan's instances.
    order = {svc["name"]: n for n, inst in enumerate(instances(plan)) for svc in inst["services"]}
    for inventory_host, svc in ((svc.inventory_host or host, svc) for host, host_plan in plan.hosts.items()
                                for svc in host_plan.services):
        host_result = observed.get(inventory_host)
        got = ((host_result or {}).get("services") or {}).get(svc.name) or {}
        config = (pending_text(got["pending"]) if got.get("pending")
                  else "current" if got.get("state") in ("active", "reloading") else "-")
        if host_result is None:
            state, health = "unknown (no answer from host)", "-"
        else:
            state = got.get("state") or "unknown"
            if got.get("sub_state") and got.get("sub_state") != state:
                state = f"{state} ({got['sub_state']})"
            health = got.get("health") or ("-" if not svc.health_url else "unknown")
        if svc.role == "router":
            if svc.mini_lb:
                view = "mini-lb: no worker API"
            elif isinstance(got.get("workers"), Mapping):
                workers = got["workers"].get("workers") or []
                ok = sum(1 for w in workers if w.get("is_healthy"))
                view = f"{ok}/{len(workers)} workers healthy"
            else:
                view = got.get("workers_error") or "-"
        elif svc.worker:
            view = views.get(svc.worker["url"], "-")
        else:
            view = "-"
        rows.append({"host": inventory_host, "service": svc.name, "role": svc.role,
                     "watchdog": watchdog_text(got.get("watchdog")), "watchdog_state": got.get("watchdog"),
                     "instance": svc.instance, "node_rank": svc.node_rank, "port": svc.port,
                     "state": state, "health": health, "uptime_s": got.get("uptime_s"),
                     "uptime": format_duration(got.get("uptime_s")), "router_view": view,
                     "restarts": got.get("restarts"), "config": config, "pending": list(got.get("pending") or []),
                     # Informational: a failed read is shown, never a reason for healthy() to say no.
                     "metrics": dict(got["metrics"]) if isinstance(got.get("metrics"), Mapping) else None,
                     "metrics_error": got.get("metrics_error"),
                     **metrics_cells(svc, None if host_result is None else got)})
    rows.sort(key=lambda r: (r["role"] == "router", order.get(r["service"], 0), r["node_rank"]))
    for url, text in views.items():
        if url.startswith("extra:"):
            rows.append({"host": "-", "service": url[len("extra:"):], "role": "?", "instance": "-", "node_rank": "-",
                         "port": "-", "state": "-", "health": "-", "uptime_s": None, "uptime": "-",
                         "router_view": text, "restarts": None, "watchdog": "-", "watchdog_state": None,
                         "config": "-", "pending": [], "metrics": None, "metrics_error": None,
                         "run": "-", "queue": "-", "tpot": "-"})
    return rows


def pending_services(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """The services of a status table that run other files than their own (theirs or their watchdog's)."""
    return [str(r["service"]) for r in rows if r.get("pending")]


def watchdog_text(state: Mapping[str, Any] | None) -> str:
    """One cell for a service's instance watchdog state (files/sglang_watchdog.py); ``last_check_age_s`` is
    computed on the watchdog's host (its clock)."""
    if not isinstance(state, Mapping):
        return "-"
    if state.get("kind") == "router":
        out = [w.get("instance", "?") for w in state.get("workers") or [] if w.get("removed")]
        return ("took out: " + ", ".join(out)) if out else "watching"
    age_s = state.get("last_check_age_s")
    age = f", checked {format_duration(int(age_s))} ago" if isinstance(age_s, (int, float)) else ""
    text = f"{state.get('status') or '?'}, {state.get('restarts', 0)} restarts{age}"
    if state.get("given_up"):
        text = f"GAVE UP after {state.get('restarts', 0)} restarts: {state.get('reason') or '?'}"
    return text


def watchdog_lines(status_by_host: Mapping[str, Any]) -> list[str]:
    """``host service: state`` for each service whose host reported a watchdog state (doctor.yml); input:
    host -> its sglang_service_status result."""
    lines = []
    for host, result in sorted((status_by_host or {}).items()):
        for name, got in sorted(((result or {}).get("services") or {}).items()):
            if isinstance(got, Mapping) and got.get("watchdog"):
                lines.append(f"{host} {name}: {watchdog_text(got['watchdog'])}")
    return lines


def healthy(rows: Iterable[Mapping[str, Any]]) -> bool:
    """Every service active and every health endpoint answering 200."""
    return all(str(r["state"]).startswith("active") and r["health"] in ("200", "-")
               and not (r.get("watchdog_state") or {}).get("given_up") for r in rows if r["role"] != "?")


def render_table(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The status table (plugin_utils/core/_table.py): one line per service, the COLUMNS' titles as its header."""
    cells = [[str(r.get(key, "")) for key, _unused in COLUMNS] for r in rows]
    return render([title for _unused, title in COLUMNS], cells)
