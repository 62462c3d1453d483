# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The schedule of each day-two operation of the running deployment (restart.yml, upgrade.yml, retire.yml): the
whole of what the playbook loops over, made once on the controller from the typed plan (plan/_records.py Plan),
so that no step types the plan again or asks a filter for a host's settings inside a loop.

A schedule holds, as plain data: the batches (restart), the instances and the waves' inputs (upgrade) or the
instances retired (retire), each instance with its ranks and hosts; the routers to take them out of and put them
back into; the labels the task names show; and, for every host a step runs on, that host's settings (the plan's,
as the sglang_host_settings filter gives them: the steps read the health gate's, the journal's, the generation's,
the drain's from there).  Built by the ascend.sglang.sglang_*_schedule filters; waves are cut from an upgrade
schedule by ``upgrade_waves_of`` once the fleet's restart decision is known.

Private to the collection; pure, no Ansible import.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable, Mapping, Sequence

from ansible_collections.ascend.sglang.plugins.module_utils.files._sysctl import normalized
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import HostPlan, Plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._run_settings import PENDING
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._settings import host_values
from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._instances import (
    instances, pending_instances, restart_batches, routers, without_env,
)
from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout import _stack
from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._retire import retire_set
from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._upgrade import due_keys, not_ready, upgrade_waves
from ansible_collections.ascend.sglang.plugins.plugin_utils.targets._host_files import (
    generation_paths, retired_paths, sources_cann_env, sysctl_conf,
)


def _plain(value: Any) -> Any:
    """A record's field as plain data (tuples as lists): what a playbook loops over."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


@dataclasses.dataclass(frozen=True)
class Schedule:
    """One day-two operation's schedule (see the module's docstring): ``steps`` its batches (restart), instances
    (upgrade: the waves' candidates; retire: those retired), ``routers`` every router, ``api_routers`` those with a
    worker API, ``hosts`` host -> its settings (and, for an upgrade, ``generation``: its services' files kept
    as the previous generation), ``extra`` what the operation adds (see each builder)."""
    operation: str
    steps: tuple[Mapping[str, Any], ...]
    routers: tuple[Mapping[str, Any], ...]
    hosts: Mapping[str, Mapping[str, Any]]
    extra: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out = {"operation": self.operation, "steps": _plain(self.steps), "routers": _plain(self.routers),
               "api_routers": [_plain(r) for r in self.routers if not r.get("mini_lb")],
               "hosts": _plain(self.hosts)}
        out.update(_plain(self.extra))
        return out


def batch_size(plan: Plan) -> int:
    """The plan's sglang_restart_batch: the count of instances the planner resolved (plan/_run_settings.py), the one
    place controller code reads it. Anything else is a plan made by other code than the planner: ValueError,
    naming the variable."""
    value = plan.typed_settings.sglang_restart_batch
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"sglang_restart_batch: the count of instances sglang_plan.settings holds, got {value!r}")
    return value


def host_settings(plan: Plan, host: str) -> dict[str, Any]:
    """One host's host-scope settings: the plan's, or the settings table's defaults for a host the plan has no
    entry for (as the sglang_host_settings filter gives them without the host's own values)."""
    planned = plan.hosts.get(str(host))
    return host_values(planned.settings if planned is not None else None, str(host), None)


def install_hosts(plan: Plan, hosts: Iterable[str], results: Mapping[str, Any] | None = None) -> list[str]:
    """The hosts of ``hosts`` whose server stack deploy.yml installs and checks (its stack play): those with a
    planned service whose settings turn sglang_server_install on, less those whose stack this run's preflight saw
    current (``results``: host -> its sglang_preflight_result, with the host's own values of the install's settings
    the action read; rollout/_stack.py). Chosen once when the play starts, so a host without the install, or with
    nothing to install, evaluates no task there."""
    out = []
    plans: dict[str, dict[str, Any]] = {}
    for host in hosts:
        planned = plan.hosts.get(str(host))
        settings = host_settings(plan, str(host))
        if planned is None or not planned.services or not bool(settings["sglang_server_install"]):
            continue
        if not _stack.install_done(settings, str((plan.releases or {}).get("sglang")), (results or {}).get(str(host)),
                                   plans):
            out.append(str(host))
    return out


def tuning_needed(planned: HostPlan, observed_governors: Any, observed_sysctl: Any = None) -> bool:
    """Whether deploy.yml's tuning play has work on a host (the host_tuning role's own conditions, read once when
    the play starts, with what this run's preflight read on the host): kernel settings that are on, unless
    preflight read every live value and the persisted file at the plan's (observed_sysctl: its
    ``observed.sysctl``); a CPU governor that is on and preflight did not read on every CPU (observed_governors:
    its ``observed.governors``). None: preflight read nothing there (skipped, or another run)."""
    settings = planned.settings or {}
    tuning = planned.host_tuning or {}
    sysctl = tuning.get("sysctl") or {}
    if settings.get("sglang_host_tuning_sysctl") and sysctl and not _sysctl_current(sysctl, observed_sysctl):
        return True
    governor = tuning.get("cpu_governor")
    if not (settings.get("sglang_host_tuning_governor") and governor):
        return False
    if not isinstance(observed_governors, Mapping):
        return True
    return any(value != governor for value in observed_governors.values())


def _sysctl_current(values: Mapping[str, Any], observed: Any) -> bool:
    """Every live value as the plan's (whitespace-normalized, as sysctl prints them) and 90-sglang.conf as the
    renderer writes it."""
    if not isinstance(observed, Mapping) or not isinstance(observed.get("live"), Mapping):
        return False
    live = observed["live"]
    if any(live.get(name) != normalized(value) for name, value in values.items()):
        return False
    return observed.get("conf") == sysctl_conf(dict(values))


def _rows(plan: Plan) -> list[dict[str, Any]]:
    """The planned server instances (rollout order) with their ranks' services without their environment: a
    schedule is kept in a fact and shown, where plan.yml keeps the environment out of the log."""
    return [dict(row, services=without_env(row["services"]), rank0=without_env([row["rank0"]])[0])
            for row in instances(plan)]


def _routers(plan: Plan) -> list[dict[str, Any]]:
    return without_env(routers(plan))


def _hosts_of(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """Every host a rank of these instances runs on, first seen first."""
    return list(dict.fromkeys(str(svc["inventory_host"]) for row in rows for svc in row["services"]))


def restart_schedule(plan: Plan, status_by_host: Mapping[str, Any] | None = None) -> Schedule:
    """restart.yml's schedule: the instances sglang_restart_only names (the plan resolved it: keys, or ``pending``,
    resolved here from the hosts' sglang_service_status results), in batches of the plan's sglang_restart_batch.
    extra: ``pending`` (whether sglang_restart_only is pending), ``only`` (the keys restarted),
    ``single_roles`` (roles restarted with a single instance), ``whole_role_batches``."""
    only_setting = plan.typed_settings.sglang_restart_only
    pending = only_setting == PENDING
    only = pending_instances(plan, status_by_host or {}) if pending else [str(k) for k in only_setting]
    selected = [row for row in _rows(plan) if row["key"] in only]
    batches = restart_batches(selected, batch_size(plan))
    every = _routers(plan)
    hosts = {host: host_settings(plan, host) for host in _hosts_of(selected)}
    single = list(dict.fromkeys(row["role"] for row in selected if row["role_instances"] == 1))
    return Schedule("restart", tuple(batches), tuple(every), hosts,
                    {"pending": pending, "only": only, "single_roles": single,
                     "whole_role_batches": [b for b in batches if b["whole_role"]]})


def generation_files(plan: Plan, host: str) -> list[dict[str, Any]]:
    """The server services of a host whose files an upgrade keeps as their previous generation, {name, files}
    each (the module ascend.sglang.sglang_generation takes them)."""
    host_plan = plan.hosts.get(str(host)) or HostPlan.empty()
    return [{"name": str(svc.name), "files": generation_paths(str(svc.name), host_plan.settings, sources_cann_env(svc))}
            for svc in host_plan.services if svc.role != "router"]


def upgrade_schedule(plan: Plan, status_by_host: Mapping[str, Any], server_hosts: Sequence[str]) -> Schedule:
    """upgrade.yml's schedule before any file is written: ``steps`` every planned server instance (the waves'
    candidates, rollout order); each server host's settings and ``generation`` (its server services' files).
    extra: ``not_ready`` (why the deployment may not be upgraded: one line per rank), ``in_place`` (server hosts
    that install SGLang in place, refused), ``batch_size``, ``server_hosts``."""
    rows = _rows(plan)
    servers = [str(h) for h in server_hosts]
    hosts: dict[str, dict[str, Any]] = {}
    for host in list(dict.fromkeys(servers + _hosts_of(rows))):
        hosts[host] = dict(host_settings(plan, host), generation=generation_files(plan, host))
    in_place = [host for host in servers if host in plan.hosts and hosts[host]["sglang_server_install"]]
    return Schedule("upgrade", tuple(rows), tuple(_routers(plan)), hosts,
                    {"not_ready": not_ready(rows, status_by_host or {}), "in_place": in_place,
                     "batch_size": batch_size(plan), "server_hosts": servers})


def upgrade_waves_of(schedule: Mapping[str, Any], decisions: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The waves of an upgrade schedule (``Schedule.as_dict()``) once the fleet's restart decision is known
    (decisions: the sglang_rollout filter's host -> decision): the instances it restarts, canaries first, then
    the others at most the schedule's batch_size at a time (rollout/_upgrade.py)."""
    rows = list(schedule["steps"])
    due = due_keys(rows, decisions or {})
    return upgrade_waves([row for row in rows if row["key"] in due], int(schedule["batch_size"]))


def retire_schedule(plan: Plan, record: Mapping[str, Any] | None = None) -> Schedule:
    """retire.yml's schedule: ``steps`` the instances sglang_retire names (rollout/_retire.py; the recorded ones the
    plan no longer has first), the settings of each host a retired rank runs on. ValueError saying what is refused.
    extra: ``services`` (every retired rank), ``files`` ({host, path} of each file removed),
    ``keys``."""
    settings = plan.typed_settings
    chosen = retire_set(plan, settings.sglang_retire, settings.sglang_retire_force,
                        record if isinstance(record, Mapping) else None)
    chosen = [dict(inst, services=without_env(inst["services"]), rank0=without_env([inst["rank0"]])[0])
              for inst in chosen]
    services = [svc for inst in chosen for svc in inst["services"]]
    recorded = (record or {}).get("hosts") or {} if isinstance(record, Mapping) else {}
    files = []
    for svc in services:
        host = str(svc["inventory_host"])
        if host in plan.hosts:
            settings = plan.hosts[host].settings
        else:
            settings = (recorded.get(host) or {}).get("settings") or HostPlan.empty().settings
        files += [{"host": host, "path": path} for path in retired_paths([str(svc["name"])], settings)]
    hosts = {host: host_settings(plan, host) for host in _hosts_of(chosen)}
    return Schedule("retire", tuple(chosen), tuple(_routers(plan)), hosts,
                    {"services": services, "files": files, "keys": [str(inst["key"]) for inst in chosen]})
