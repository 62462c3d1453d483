# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The plan's records: one frozen record per service, instance and host, and the plan that holds them, built
complete by the planner (plan/_planner.py).  Their dict form (``as_dict``) is what a playbook holds as
sglang_plan and the plan file keeps; ``typed_plan`` turns it back into records at an action's or a filter's
boundary, the one place controller code reads the plan by key.

What a filter is given is Ansible's view of sglang_plan (ansible-core 2.19+: lazy containers that template each
value as it is read, values tagged with their origin): a copy of all of it costs as much as the whole plan, and a
task that runs on every host of the fleet would pay it once per host, so its cost grows with the square of the
fleet.  ``host_view(value, host)`` and ``typed_plan(value, host)`` read only the plan's small top-level fields and
that one host's part: what a filter or an action of one host needs, at a cost that does not grow with the fleet.
The copy is made with plain Python types (``plain``), never through ``copy.deepcopy``, which rebuilds every tagged
value through its reducer.

Pure; no Ansible import.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, Mapping

from ansible_collections.ascend.sglang.plugins.module_utils.checks import _checks
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._serialize import plain
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _container
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _watchdog
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._settings_record import PlanSettings

# Version of the plan's dict / JSON form (Plan.plan_version): raised whenever a field changes.
# 2: Service.python; the benchmark's python, module and flags.
# 3: Service.metrics_url; Plan.monitoring.
# 4: Plan.deployment; Plan.monitoring.host_dirs.
# 5: Plan.settings (the deployment's and the run's settings, by their full names).
# 6: Service.boot_workers.
PLAN_VERSION = 6


@dataclasses.dataclass(frozen=True)
class Service:
    name: str
    role: str
    instance: int
    node_rank: int
    nnodes: int
    inventory_host: str
    host: str
    port: int
    bootstrap_port: int | None
    dist_init_addr: str | None
    argv: list[str]
    env: dict[str, str]
    health_url: str | None
    ready_url: str | None
    instance_key: str
    depends_on: list[str]
    listens: dict[str, int]
    # Flags whose values come from sglang_secrets on the host (a root-only file), never from the plan.
    secret_flags: list[str] = dataclasses.field(default_factory=list)
    # Facts of the instance watchdog (plugin_utils/targets/_host_files.py writes its files): for a server rank the
    # instance label, its members and rank 0's /health_generate; for a router the URL its host reaches it
    # on (None: --mini-lb, no worker API) and every instance's worker registration and health URL.
    watchdog: _watchdog.RankWatch | _watchdog.RouterWatch | None = None
    # sglang_runtime container: the engine command around the argv, its devices and mounts
    # (plugins/plugin_utils/plan/_container.py); None when the service runs from the host's Python.
    container: _container.ServiceContainer | None = None
    # The host interpreter the argv starts with (sglang_python, a router's sglang_router_python): what preflight and
    # the failure bundle look at; None in the container runtime, where the image's interpreter runs it.
    python: str | None = None
    # What the consumers need besides the argv, so that none of them reads it back:
    # the NPUs (npu-smi order) a server rank uses on its node, --tp-size x --pp-size / nnodes from --base-gpu-id;
    # none for a router.
    devices: list[int] = dataclasses.field(default_factory=list)
    # What it reads from disk: {flag, path, kind (dir | file), what}.
    model_paths: list[dict[str, str]] = dataclasses.field(default_factory=list)
    # The endpoints of other hosts it dials at start: {address, port, purpose}.
    peers: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    # Its --mem-fraction-static (the HBM share preflight wants free on its devices); None when not set.
    mem_fraction_static: float | None = None
    # Rank 0 of a server instance: its registration at a router {url, worker_type, bootstrap_port (prefill)}.
    worker: dict[str, Any] | None = None
    # A router started with --mini-lb: no worker API, no readiness endpoint.
    mini_lb: bool = False
    # A server rank pinned to the CPUs near its NPUs (sglang_npu_cpus): the unit's CPUAffinity=, a container's
    # --cpuset-cpus; None: unpinned.
    cpus: str | None = None
    # Where Prometheus scrapes it (a server's /metrics on its port, a Rust router's exporter); None: metrics off,
    # or the mini load balancer (no exporter).
    metrics_url: str | None = None
    # A router with a worker API: [start, end) of the argv tokens that list its workers at start. The launcher reads
    # them from <name>.workers, which the restart decision does not look at: every deploy applies the planned list
    # through the API, and a change of the list alone restarts nothing. None: --mini-lb (no API, the list is in the
    # launcher), and every server.
    boot_workers: list[int] | None = None

    def as_dict(self) -> dict[str, Any]:
        """The service's dict form (as the plan's JSON holds it, and as modules and playbooks take it)."""
        return {field.name: _plain(getattr(self, field.name)) for field in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Service:
        container = data.get("container")
        return cls(**dict(data, watchdog=_watchdog.facts_from_dict(data.get("watchdog")),
                          container=_container.ServiceContainer.from_dict(container) if container else None))


@dataclasses.dataclass(frozen=True)
class InstancePlan:
    """One server instance (its ranks) or one router, as the operations see it."""
    key: str  # the services' instance_key
    role: str
    instance: int
    ranks: list[str]  # service names by node rank
    hosts: list[str]  # inventory hosts by node rank
    worker_url: str | None = None  # server instance: the URL rank 0 serves (the router's upstream)
    worker: dict[str, Any] | None = None  # server instance: its registration at a router (Service.worker)
    mini_lb: bool = False  # router: --mini-lb (no worker API)
    router_url: str | None = None  # router: the URL its host reaches it on


@dataclasses.dataclass(frozen=True)
class HostPlan:
    host_tuning: dict[str, Any]
    cann: dict[str, list[str]]
    services: list[Service]
    # The host's role settings from the settings table (plugin_utils/plan/_settings.py), checked, defaults filled in:
    # what the render action writes into its files.
    settings: dict[str, Any] = dataclasses.field(default_factory=dict)

    @classmethod
    def empty(cls) -> HostPlan:
        """The part of a host the plan has no entry for: nothing to run, nothing of its own."""
        return cls(host_tuning={}, cann={}, services=[])

    def as_dict(self) -> dict[str, Any]:
        """The host's part in the plan's dict form (what a module on the host takes)."""
        return {field.name: _plain(getattr(self, field.name)) for field in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> HostPlan:
        return cls(**dict(data, services=[Service.from_dict(svc) for svc in data["services"]]))


@dataclasses.dataclass(frozen=True)
class Plan:
    profile: str
    title: str
    deploy_mode: str
    releases: dict[str, str]
    supported_releases: dict[str, list[str]]
    release_changes: list[dict[str, str]]
    hosts: dict[str, HostPlan]
    router_upstreams: dict[str, list[dict[str, Any]]]
    bench: dict[str, Any] | None
    cards: float  # cards the servers of this deployment occupy (output tok/s per card divides by it)
    runtime: str = "host"  # sglang_runtime: host | container
    container: _container.Settings | None = None  # the deployment's container settings (engine, image, ...)
    hardware: str = ""  # the profile's A2 / A3: preflight checks the hosts against it
    # Preflight settings: each check's level and the weights mode (module_utils/checks/_checks.py).
    preflight: dict[str, Any] = dataclasses.field(default_factory=_checks.settings)
    # Server instances (rollout order within a role) then routers.
    instances: list[InstancePlan] = dataclasses.field(default_factory=list)
    # The planned SGLang release's reference environment (profiles/_releases.yml stacks), None when none is recorded.
    reference_stack: dict[str, Any] | None = None
    # The monitoring settings (plugin_utils/plan/_metrics.py Settings): metrics on, scrape interval, alert thresholds;
    # empty in a plan built without them (no metrics).
    monitoring: dict[str, Any] = dataclasses.field(default_factory=dict)
    # sglang_deployment (default: the profile id): names the Prometheus files, labels targets and alerts.
    deployment: str = ""
    # Where the profile comes from: its document generation and the profile's source (a January document's
    # number and section, or a current page's repository, path, commit and anchor).
    source: dict[str, Any] = dataclasses.field(default_factory=dict)
    # The deployment's and the run's settings from the settings table (plugin_utils/plan/_settings.py), checked,
    # defaults filled in, by their full names: what the operations playbooks read (the hosts' own are HostPlan's).
    # Some are resolved against the plan as their consumers use them: sglang_restart_batch a count of instances,
    # sglang_restart_only the instance keys (or "pending"), sglang_retire a list (plan/_run_settings.py), and
    # sglang_model_source the sources by model directory.
    settings: dict[str, Any] = dataclasses.field(default_factory=dict)
    # Version of this form (as_dict / JSON); a consumer refuses a plan of another version.
    plan_version: int = PLAN_VERSION

    def as_dict(self) -> dict[str, Any]:
        return {field.name: _plain(getattr(self, field.name)) for field in dataclasses.fields(self)}

    @property
    def typed_settings(self) -> PlanSettings:
        """``settings`` as the frozen, typed record generated from the settings table (plan/_settings_record.py):
        what controller code reads, by attribute."""
        return PlanSettings.from_dict(self.settings)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Plan:
        """The plan of ``as_dict()`` (or of its JSON form); ValueError for a plan of another version."""
        if data.get("plan_version") != PLAN_VERSION:
            raise ValueError(f"a plan of version {data.get('plan_version')!r}, this collection reads version "
                             f"{PLAN_VERSION}: run playbooks/plan.yml again")
        # A copy in plain Python types: the records share nothing with the caller's value. Never copy.deepcopy: a
        # filter is given Ansible's lazy containers, and copying one copies its templar, whose plugin loaders
        # ansible-core 2.21 warns about on every run (deprecated instantiation with aliases).
        fields = plain(data)
        fields["hosts"] = {name: HostPlan.from_dict(host) for name, host in fields["hosts"].items()}
        fields["instances"] = [InstancePlan(**inst) for inst in fields.get("instances") or []]
        if fields.get("container") is not None:
            fields["container"] = _container.Settings(**fields["container"])
        return cls(**fields)


# The parts of the plan whose size grows with the fleet: a plan as one host sees it (host_view) keeps only that
# host's part of ``hosts`` and none of the others (what a host's filters and its modules' actions read).
_FLEET_FIELDS = ("hosts", "instances", "router_upstreams")


def host_view(value: Any, host: str) -> dict[str, Any]:
    """The plan's dict form as one host sees it: its own part in ``hosts`` (none when the plan has no entry for it),
    no instances and no router upstreams, the rest as the whole plan has it (the values themselves, not copies).
    Reads only those parts of ``value`` (see the module's docstring).  ValueError when ``value`` is not a plan."""
    if isinstance(value, Plan):
        value = value.as_dict()
    if not isinstance(value, Mapping) or not isinstance(value.get("hosts"), Mapping):
        raise ValueError(f"plan: the deployment plan (sglang_plan), got {type(value).__name__}")
    part = value["hosts"].get(str(host))
    # Keys first, then only the values kept: reading a value of Ansible's lazy dict templates all of it.
    return {key: value[key] for key in list(value) if key not in _FLEET_FIELDS} | {
        "hosts": {str(host): part} if part is not None else {}, "instances": [], "router_upstreams": {}}


def typed_plan(value: Any, host: str | None = None) -> Plan:
    """The typed plan of what an action or a filter was given (sglang_plan: the plan's dict form): the one place
    controller code reads the plan by key.  ValueError saying what is wrong (not a plan, another version).
    With ``host``: the plan of ``host_view`` (only that host's part of the plan is read: the cost of one host's
    filter does not grow with the fleet)."""
    if isinstance(value, Plan) and host is None:
        return value
    if host is not None:
        value = host_view(value, host)
    if not isinstance(value, Mapping) or not isinstance(value.get("hosts"), Mapping):
        raise ValueError(f"plan: the deployment plan (sglang_plan), got {type(value).__name__}")
    try:
        return Plan.from_dict(value)
    except (TypeError, KeyError, AttributeError) as exc:
        raise ValueError(f"plan: not a plan of this collection ({exc}): run playbooks/plan.yml again") from None


def _plain(value: Any) -> Any:
    """The dict / JSON form of a part of the plan, copied: a dataclass is a dict (its own ``as_dict()`` where it
    has one: a key it leaves out), a tuple a list."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        own = getattr(value, "as_dict", None)
        if own is not None:
            return own()
        return {field.name: _plain(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return copy.deepcopy(value)
