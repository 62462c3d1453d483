# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Which planned services get an instance watchdog, and the configuration each one reads
(roles/sglang_service/files/sglang_watchdog.py).  Deploy (tasks/watchdog.yml, the host's own variables) and
render mode (tasks/render.yml, each host's inventory variables) both go through here, so that both write the
same files.  Pure; no Ansible import."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

# Role variables the watchdog files depend on (roles/sglang_service/defaults/main.yml).
SETTINGS = ("sglang_watchdog_enabled", "sglang_watchdog_single_node", "sglang_watchdog_interval",
            "sglang_watchdog_timeout", "sglang_watchdog_failures", "sglang_watchdog_startup_grace",
            "sglang_watchdog_max_restarts", "sglang_watchdog_window", "sglang_watchdog_backoff_initial",
            "sglang_watchdog_backoff_max", "sglang_watchdog_python", "sglang_watchdog_state_dir")
TIMING = ("interval", "timeout", "failures", "startup_grace", "max_restarts", "window", "backoff_initial",
          "backoff_max")


def truthy(value: Any) -> bool:
    """Ansible's ``bool`` filter: an -e key=value gives the string "false"."""
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("yes", "on", "1", "true", "y", "t")


def min_nodes(settings: Mapping[str, Any]) -> int:
    """Smallest instance (in nodes) that is watched."""
    return 1 if truthy(settings["sglang_watchdog_single_node"]) else 2


def watched(services: Iterable[Mapping[str, Any]], settings: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Services of one host that get a watchdog: ranks of multi-node instances (every server with
    sglang_watchdog_single_node); a router with a worker API (its watchdog then takes instances out and back)."""
    if not truthy(settings["sglang_watchdog_enabled"]):
        return []
    services = list(services)
    servers = [s for s in services if s["role"] != "router" and int(s["nnodes"]) >= min_nodes(settings)]
    routers = [s for s in services if s["role"] == "router" and (s.get("watchdog") or {}).get("router_url")]
    return servers + routers


def config(svc: Mapping[str, Any], settings: Mapping[str, Any]) -> dict[str, Any]:
    """The watchdog configuration (<service>.watchdog.json) of one watched service."""
    cfg: dict[str, Any] = {name: int(settings["sglang_watchdog_" + name]) for name in TIMING}
    cfg["state_file"] = f"{settings['sglang_watchdog_state_dir']}/{svc['name']}.json"
    facts = svc.get("watchdog") or {}
    if svc["role"] == "router":
        cfg.update(kind="router", router_url=facts["router_url"],
                   workers=[w for w in facts["workers"] if int(w["nnodes"]) >= min_nodes(settings)])
    else:
        cfg.update(kind="rank", unit=f"{svc['name']}.service", node_rank=svc["node_rank"], nnodes=svc["nnodes"],
                   instance_label=facts["instance_label"], health_url=facts["health_url"],
                   members=facts["members"], evidence=facts.get("evidence"))
    return cfg


def host_settings(host_vars: Any, defaults: Mapping[str, Any]) -> dict[str, Any]:
    """Render mode: a host's own values of SETTINGS where its inventory sets them, else the play's."""
    return {name: host_vars[name] if name in host_vars else defaults[name] for name in SETTINGS}


def render_watched(pairs: Iterable[Any], hostvars: Any, defaults: Mapping[str, Any]) -> list[list[Any]]:
    """Render mode's (host item, service) pairs that get a watchdog; the host item carries the host's settings."""
    by_host: dict[str, list[Mapping[str, Any]]] = {}
    for host, svc in pairs:
        by_host.setdefault(host["key"], []).append(svc)
    out = []
    for host, services in by_host.items():
        settings = host_settings(hostvars[host] if host in hostvars else {}, defaults)
        out += [[{"key": host, "settings": settings}, svc] for svc in watched(services, settings)]
    return out
