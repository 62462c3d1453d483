# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Which planned services get an instance watchdog, the configuration each one reads
(roles/sglang_service/files/sglang_watchdog.py) and the names of its files.  Deploy and render mode (both
through plugin_utils/targets/_host_files.py) and the removal of watchdogs no longer wanted (tasks/watchdog_absent.yml)
go through here, so that all of them name and write the same files.  Pure; no Ansible import."""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable, Mapping, Protocol

from ansible_collections.ascend.sglang.plugins.module_utils.files._units import watchdog_unit
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _settings

# The program every watchdog unit runs, in sglang_libexec_dir.
PROGRAM = "sglang_watchdog.py"
TIMING = ("interval", "timeout", "failures", "startup_grace", "max_restarts", "window", "backoff_initial",
          "backoff_max")


# ---- the plan's watchdog facts (Service.watchdog): what config() writes, typed --------------------------------

@dataclasses.dataclass(frozen=True)
class Member:
    """One rank of a watched instance."""

    host: str  # its inventory host
    service: str
    node_rank: int


@dataclasses.dataclass(frozen=True)
class Evidence:
    """Where rank 0's watchdog of a multi-node instance serves its unit's InvocationID (rank 0's address)."""

    address: str
    port: int
    url: str


@dataclasses.dataclass(frozen=True)
class RankWatch:
    """A server rank's watchdog facts: its instance, rank 0's /health_generate, every rank, and the evidence
    endpoint (None for a single-node instance)."""

    instance_label: str
    health_url: str
    members: tuple[Member, ...]
    evidence: Evidence | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RankWatch:
        evidence = data.get("evidence")
        return cls(instance_label=data["instance_label"], health_url=data["health_url"],
                   members=tuple(Member(**m) for m in data["members"]),
                   evidence=Evidence(**evidence) if evidence is not None else None)


@dataclasses.dataclass(frozen=True)
class WatchedWorker:
    """One server instance as a router's watchdog sees it: its registration and health URL."""

    instance_label: str
    nnodes: int
    url: str
    worker_type: str
    health_url: str
    bootstrap_port: int | None = None  # prefill only

    def as_dict(self) -> dict[str, Any]:
        # The key is absent for decode and mixed workers, as the router's registration API takes them.
        out = dataclasses.asdict(self)
        if self.bootstrap_port is None:
            del out["bootstrap_port"]
        return out


@dataclasses.dataclass(frozen=True)
class RouterWatch:
    """A router's watchdog facts: the URL its host reaches it on (None: --mini-lb, no worker API) and every
    instance it fronts."""

    router_url: str | None
    workers: tuple[WatchedWorker, ...]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RouterWatch:
        return cls(router_url=data["router_url"], workers=tuple(WatchedWorker(**w) for w in data["workers"]))


def facts_from_dict(data: Mapping[str, Any] | None) -> RankWatch | RouterWatch | None:
    """A service's watchdog facts from the plan's dict form (a router's have workers)."""
    if data is None:
        return None
    return RouterWatch.from_dict(data) if "workers" in data else RankWatch.from_dict(data)


def truthy(value: Any) -> bool:
    """Ansible's ``bool`` filter: an -e key=value gives the string "false"."""
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in ("yes", "on", "1", "true", "y", "t")


def min_nodes(settings: Mapping[str, Any]) -> int:
    """Smallest instance (in nodes) that is watched."""
    return 1 if truthy(settings["sglang_watchdog_single_node"]) else 2


class Watchable(Protocol):
    """What of a planned service (plan/_records.py Service, which holds the facts typed here) the watchdog reads."""

    name: str
    role: str
    nnodes: int
    node_rank: int
    watchdog: RankWatch | RouterWatch | None


def watched(services: Iterable[Watchable], settings: Mapping[str, Any]) -> list[Watchable]:
    """Services of one host that get a watchdog: ranks of multi-node instances (every server with
    sglang_watchdog_single_node); a router with a worker API (its watchdog then takes instances out and back)."""
    if not truthy(settings["sglang_watchdog_enabled"]):
        return []
    services = list(services)
    servers = [s for s in services if s.role != "router" and int(s.nnodes) >= min_nodes(settings)]
    routers = [s for s in services if s.role == "router" and isinstance(s.watchdog, RouterWatch)
               and s.watchdog.router_url]
    return servers + routers


def config(svc: Watchable, settings: Mapping[str, Any]) -> dict[str, Any]:
    """The watchdog configuration (<service>.watchdog.json) of one watched service."""
    cfg: dict[str, Any] = {name: int(settings["sglang_watchdog_" + name]) for name in TIMING}
    cfg["state_file"] = f"{settings[_settings.WATCHDOG_STATE_DIR]}/{state_name(svc.name)}"
    facts = svc.watchdog
    if isinstance(facts, RouterWatch):
        cfg.update(kind="router", router_url=facts.router_url,
                   workers=[w.as_dict() for w in facts.workers if int(w.nnodes) >= min_nodes(settings)])
    elif isinstance(facts, RankWatch):
        cfg.update(kind="rank", unit=f"{svc.name}.service", node_rank=svc.node_rank, nnodes=svc.nnodes,
                   instance_label=facts.instance_label, health_url=facts.health_url,
                   members=[dataclasses.asdict(m) for m in facts.members],
                   evidence=dataclasses.asdict(facts.evidence) if facts.evidence is not None else None)
    else:
        raise ValueError(f"Invalid service in the plan: {svc.name} is watched but has no watchdog facts")
    return cfg


def unit_name(service: str) -> str:
    """The watchdog unit of a service (in sglang_systemd_dir)."""
    return watchdog_unit(service)


def config_name(service: str) -> str:
    """The watchdog configuration of a service (in sglang_etc_dir)."""
    return f"{service}.watchdog.json"


def state_name(service: str) -> str:
    """The watchdog's state file of a service (in sglang_watchdog_state_dir)."""
    return f"{service}.json"


def files_of(services: Iterable[str], settings: Mapping[str, Any]) -> list[str]:
    """Every file a watchdog of these services writes or reads, by path: its unit, configuration and state
    (settings: the host's, by their full names). The shared program is not among them."""
    return [path for name in services
            for path in (f"{settings[_settings.SYSTEMD_DIR]}/{unit_name(name)}",
                         f"{settings[_settings.ETC_DIR]}/{config_name(name)}",
                         f"{settings[_settings.WATCHDOG_STATE_DIR]}/{state_name(name)}")]
