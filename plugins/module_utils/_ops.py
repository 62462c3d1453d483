# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Day-2 operations on a deployed plan: the rollout order of instances, the router's worker API
(sglang-router 0.3.0), and the status table.

Pure and typed; no Ansible import.

sglang-router 0.3.0 (the Rust model gateway) manages workers through a REST resource, checked against
the released wheel: ``GET /workers`` lists ``{"workers": [{"id", "url", "worker_type", "is_healthy",
"bootstrap_port"?...}], "total", "stats"}``; ``POST /workers`` with ``{"url", "worker_type":
"regular"|"prefill"|"decode", "bootstrap_port"?}`` queues an addition (202; the worker appears once its
/health answers; posting a listed URL again is accepted and changes nothing); ``DELETE /workers/{id}``
queues a removal (202).  Both answer ``{"worker_id", "location": "/workers/{id}", ...}``; while the worker
is not (or no longer) listed, ``GET /workers/{id}`` carries the queued job's ``job_status``
(``{"job_type", "status", "message"}``).  There is no ``/add_worker`` / ``/remove_worker`` in this release.
The ``--mini-lb`` router (pure Python) has none of these routes (404).

Measured on 0.3.0: a share of the changes fails inside the router for a healthy worker (from 1 in 30 on an
idle machine to 2 in 5 on a busy one; ``job_status.status == "failed"``, logged as "Failed job" after
"Workflow deadlocked: no steps ready and none running": its workflow scheduler can miss the completion of a
step that finishes at once).  The workflow stops after the step named in the message:
- before the change took effect ("at step create_worker" for an addition, "at step find_workers_to_remove"
  for a removal): nothing changed, and submitting the change again is safe;
- after it took effect: a removal failed "at step remove_from_worker_registry" has removed the worker and
  skipped only ``update_remaining_policies`` (the re-initialisation of the other workers' cache-aware
  policies); the API does not show that failure (``GET /workers/{id}`` answers 404, as for a completed
  removal), and there is nothing to repair; an addition that failed after its worker was listed has skipped the steps that register its
  tokenizer and policy, so the worker module takes it out and adds it again.
A change is therefore judged only once its job has settled (``job_settled``): an added worker is listed, and
even healthy, while its job is still processing.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

ROLE_ORDER = ("prefill", "decode", "mixed")


def _services(plan: Mapping[str, Any]) -> list[dict[str, Any]]:
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
    for svc in _services(plan):
        if svc["role"] == "router":
            out.append(dict(svc, base_url=f"http://{svc['host']}:{svc['port']}", mini_lb=bool(svc.get("mini_lb"))))
    return sorted(out, key=lambda s: s["instance"])


def instances(plan: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Server instances of the plan (``instances``) in rollout order (prefill, decode, mixed; by instance index),
    each with its ranks' services (rank order), its rank 0, its router registration (url, worker_type,
    bootstrap_port) and how many instances its role has (a role with one instance cannot serve while it
    restarts)."""
    by_name = {svc["name"]: svc for svc in _services(plan)}
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


# ------------------------------------------------------------------------------------- router API

def find_worker(listing: Mapping[str, Any] | None, url: str) -> dict[str, Any] | None:
    """The worker of ``url`` in a ``GET /workers`` answer (trailing slashes ignored)."""
    want = url.rstrip("/")
    for worker in (listing or {}).get("workers") or []:
        if str(worker.get("url", "")).rstrip("/") == want:
            return dict(worker)
    return None


def job_failure(record: Mapping[str, Any] | None) -> str | None:
    """The router's message when a ``GET /workers/{id}`` answer reports its queued job as failed; None while
    the job is queued or running, or once the worker is registered (no ``job_status``)."""
    job = (record or {}).get("job_status")
    if not isinstance(job, Mapping) or str(job.get("status", "")).lower() != "failed":
        return None
    return f"{job.get('job_type') or 'job'} failed: {job.get('message') or 'no message'}"


def job_settled(code: int, record: Mapping[str, Any] | None) -> bool:
    """Whether the job behind a ``GET /workers/{id}`` answer has finished (succeeded or failed).

    While the router works on a queued change the answer carries ``job_status`` ``pending`` or
    ``processing`` (an added worker is listed, even healthy, before its last steps ran); once it is done the
    answer is the worker's record without ``job_status`` (added), 404 (removed) or a ``failed`` job status."""
    if code == 404:
        return True
    job = (record or {}).get("job_status")
    if not isinstance(job, Mapping):
        return code == 200
    return str(job.get("status", "")).lower() not in ("pending", "processing", "queued", "running")


def worker_body(url: str, worker_type: str, bootstrap_port: int | None = None) -> dict[str, Any]:
    """The ``POST /workers`` body; PD prefill workers need their bootstrap port."""
    if worker_type not in ("regular", "prefill", "decode"):
        raise ValueError(f"worker_type must be regular, prefill or decode, not {worker_type!r}")
    body: dict[str, Any] = {"url": url, "worker_type": worker_type}
    if worker_type == "prefill" and bootstrap_port is not None:
        body["bootstrap_port"] = int(bootstrap_port)
    return body


def router_view(plan: Mapping[str, Any], listing: Mapping[str, Any] | None, mini_lb: bool) -> dict[str, str]:
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


# ------------------------------------------------------------------------------------------ status

def wait_target(service: Mapping[str, Any], readiness: bool) -> str | None:
    """The URL a health wait polls for a planned service: its ``ready_url`` (a router's /readiness) when
    ``readiness`` is asked and it has one, else its ``health_url``; None when it has neither (node ranks > 0
    serve no HTTP: their unit must be active)."""
    if readiness and service.get("ready_url"):
        return str(service["ready_url"])
    return str(service["health_url"]) if service.get("health_url") else None


def parse_systemctl_show(text: str) -> dict[str, str]:
    """``systemctl show -p A,B unit`` output -> {A: value, B: value}."""
    props: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            props[key.strip()] = value.strip()
    return props


def uptime_seconds(props: Mapping[str, str], now_monotonic_s: float) -> int | None:
    """Seconds since the unit became active (ActiveEnterTimestampMonotonic is microseconds since boot,
    the same clock as /proc/uptime); None when it is not active."""
    if props.get("ActiveState") != "active":
        return None
    try:
        entered = int(props.get("ActiveEnterTimestampMonotonic") or 0) / 1e6
    except ValueError:
        return None
    return max(0, int(now_monotonic_s - entered)) if entered > 0 else None


def format_duration(seconds: int | None) -> str:
    if seconds is None:
        return "-"
    days, rest = divmod(int(seconds), 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return (f"{days}d " if days else "") + f"{hours:02d}:{minutes:02d}:{secs:02d}"


def status_rows(plan: Mapping[str, Any], observed: Mapping[str, Any]) -> list[dict[str, Any]]:
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
    order = {i["key"]: n for n, i in enumerate(instances(plan))}
    for svc in _services(plan):
        host_result = observed.get(svc["inventory_host"])
        got = ((host_result or {}).get("services") or {}).get(svc["name"]) or {}
        config = (pending_text(got["pending"]) if got.get("pending")
                  else "current" if got.get("state") in ("active", "reloading") else "-")
        if host_result is None:
            state, health = "unknown (no answer from host)", "-"
        else:
            state = got.get("state") or "unknown"
            if got.get("sub_state") and got.get("sub_state") != state:
                state = f"{state} ({got['sub_state']})"
            health = got.get("health") or ("-" if not svc.get("health_url") else "unknown")
        if svc["role"] == "router":
            if svc.get("mini_lb"):
                view = "mini-lb: no worker API"
            elif isinstance(got.get("workers"), Mapping):
                workers = got["workers"].get("workers") or []
                ok = sum(1 for w in workers if w.get("is_healthy"))
                view = f"{ok}/{len(workers)} workers healthy"
            else:
                view = got.get("workers_error") or "-"
        elif svc.get("worker"):
            view = views.get(svc["worker"]["url"], "-")
        else:
            view = "-"
        rows.append({"host": svc["inventory_host"], "service": svc["name"], "role": svc["role"],
                     "watchdog": watchdog_text(got.get("watchdog")), "watchdog_state": got.get("watchdog"),
                     "instance": svc["instance"], "node_rank": svc["node_rank"], "port": svc["port"],
                     "state": state, "health": health, "uptime_s": got.get("uptime_s"),
                     "uptime": format_duration(got.get("uptime_s")), "router_view": view,
                     "restarts": got.get("restarts"), "config": config, "pending": list(got.get("pending") or [])})
    rows.sort(key=lambda r: (r["role"] == "router", order.get(_key_of(plan, r["service"]), 0), r["node_rank"]))
    for url, text in views.items():
        if url.startswith("extra:"):
            rows.append({"host": "-", "service": url[len("extra:"):], "role": "?", "instance": "-", "node_rank": "-",
                         "port": "-", "state": "-", "health": "-", "uptime_s": None, "uptime": "-",
                         "router_view": text, "restarts": None, "watchdog": "-", "watchdog_state": None,
                         "config": "-", "pending": []})
    return rows


def pending_text(pending: Iterable[Mapping[str, Any]] | None) -> str:
    """One cell for a running service: ``current`` when it and its watchdog run their files, else each unit's
    restart pending, with the files that differ (module_utils/_started.py)."""
    parts = []
    for row in pending or []:
        files = ", ".join(str(f).rsplit("/", 1)[-1] for f in row.get("files") or [])
        parts.append(f"{row.get('unit')}: {row.get('reason')}" + (f" ({files})" if files else ""))
    return "RESTART PENDING: " + "; ".join(parts) if parts else "current"


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


def _key_of(plan: Mapping[str, Any], name: str) -> str:
    for svc in _services(plan):
        if svc["name"] == name:
            return str(svc.get("instance_key"))
    return ""


def healthy(rows: Iterable[Mapping[str, Any]]) -> bool:
    """Every service active and every health endpoint answering 200."""
    return all(str(r["state"]).startswith("active") and r["health"] in ("200", "-")
               and not (r.get("watchdog_state") or {}).get("given_up") for r in rows if r["role"] != "?")


COLUMNS = (("host", "host"), ("role", "role"), ("instance", "inst"), ("node_rank", "rank"), ("port", "port"),
           ("service", "service"), ("state", "systemd"), ("health", "health"), ("uptime", "uptime"),
           ("config", "running config"),
           ("router_view", "router's view"), ("watchdog", "watchdog"))


def render_table(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    cells = [[str(r.get(key, "")) for key, _unused in COLUMNS] for r in rows]
    head = [title for _unused, title in COLUMNS]
    widths = [max(len(c[i]) for c in (head, *cells)) for i in range(len(head))]
    fmt = " | ".join("{:<%d}" % w for w in widths)
    return [fmt.format(*head), "-+-".join("-" * w for w in widths)] + [fmt.format(*c).rstrip() for c in cells]
