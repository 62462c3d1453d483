# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Filters of the operations playbooks (deploy, status, doctor, stop, restart): the plan's instances and routers,
the instances with a restart pending, the services' start records and watchdog lines, a rollout's failures, a
host's settings and the files stop.yml purges.
The logic is in plugins/plugin_utils/rollout/_instances.py and _status.py (pure, unit-tested)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.ascend.sglang.plugins.module_utils.files._started import record_path
from ansible_collections.ascend.sglang.plugins.module_utils.files._units import service_units
from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._instances import (
    batch_size, failed_items, instances, pending_instances, restart_batches, routers, without_env,
)
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import PlanError
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import HostPlan, typed_plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._settings import host_values
from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._status import watchdog_lines
from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._retire import retire_set
from ansible_collections.ascend.sglang.plugins.plugin_utils.targets._host_files import purge_paths, retired_paths


def _typed(plan):
    """The typed plan of sglang_plan (this filter's boundary): an error names what is wrong with it."""
    try:
        return typed_plan(plan)
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from None


def sglang_instances(plan):
    """Server instances in rollout order (prefill, decode, mixed), each with all ranks and its router entry."""
    return instances(_typed(plan))


def sglang_pending_instances(plan, status_by_host):
    """Keys of the instances with a restart pending on a rank (host -> its sglang_service_status result)."""
    return pending_instances(_typed(plan), status_by_host)


def sglang_restart_batches(selected, batch=1, fleet=0):
    """The batches of a rolling restart: at most ``batch`` instances (a count, or a percentage of ``fleet``) at once,
    never two roles in one batch."""
    return restart_batches(selected or [], batch_size(batch, int(fleet)))


def sglang_failed_items(result):
    """The instances or services a failed looped task of a rolling restart failed on."""
    return failed_items(result)


def sglang_start_records(services):
    """The start records (/run/sglang/<unit>.started) of these services' units and their watchdogs' (names)."""
    return [record_path(unit) for name in services or [] for unit in service_units(str(name))]


def sglang_host_settings(plan, host, own=None):
    """One host's host-scope settings by variable name: the plan's, or for a host the plan has no entry for, its
    own values (own: its hostvars) over the settings table's defaults; the playbooks restate no default."""
    planned = _typed(plan).hosts.get(str(host)) if plan else None
    try:
        return host_values(planned.settings if planned is not None else None, str(host), own)
    except PlanError as exc:
        raise AnsibleFilterError(exc.render(f"host {host}")) from None


def sglang_purge_files(plan, host, settings=None):
    """Every path stop.yml's purge removes on this host (plugin_utils/targets/_host_files.py, the one list of the
    files a host's plan produces); settings: the host's, as sglang_host_settings gives them."""
    host_plan = _typed(plan).hosts.get(str(host)) if plan else None
    return purge_paths(host_plan, settings)


def sglang_retire_set(plan, selectors, force=False):
    """The server instances retire.yml takes out (rows of sglang_instances, rollout order): those sglang_retire
    names by key or by host; an error says what is wrong (an unknown name, every instance of a role, a --mini-lb
    router), naming the variable."""
    try:
        return retire_set(_typed(plan), selectors, bool(force))
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from None


def sglang_retired_files(services, plan):
    """The files of the services retire.yml takes off their hosts ({name, inventory_host} each), as {host, path}
    with each host's settings from the plan: never a host's own files, which its other services use."""
    typed = _typed(plan)
    out = []
    for svc in services or ():
        host = str(svc["inventory_host"])
        settings = (typed.hosts.get(host) or HostPlan.empty()).settings
        out += [{"host": host, "path": path} for path in retired_paths([str(svc["name"])], settings)]
    return out


def sglang_routers(plan):
    """Router services with base_url and mini_lb (true when the router has no worker API)."""
    return routers(_typed(plan))


def sglang_watchdog_lines(status_by_host):
    """'host service: watchdog state' for every service with an instance watchdog (doctor.yml)."""
    return watchdog_lines(status_by_host)


def sglang_rollout_failures(hostvars, hosts):
    """The failures a rollout recorded (sglang_rollout_failure of each of these hosts, in host order), for the
    collection and the final error of deploy.yml / restart.yml."""
    found = []
    for host in dict.fromkeys(hosts or []):
        record = hostvars[host].get("sglang_rollout_failure") if host in hostvars else None
        if isinstance(record, dict):
            found.append(dict(record))
    return found


def sglang_without_env(services):
    """The services without their environment, for the modules that probe them (status, doctor, health wait)."""
    return without_env(services)


class FilterModule:
    def filters(self):
        return {"sglang_failed_items": sglang_failed_items, "sglang_instances": sglang_instances,
                "sglang_host_settings": sglang_host_settings, "sglang_pending_instances": sglang_pending_instances,
                "sglang_purge_files": sglang_purge_files, "sglang_restart_batches": sglang_restart_batches,
                "sglang_retire_set": sglang_retire_set, "sglang_retired_files": sglang_retired_files,
                "sglang_rollout_failures": sglang_rollout_failures, "sglang_routers": sglang_routers,
                "sglang_start_records": sglang_start_records, "sglang_watchdog_lines": sglang_watchdog_lines,
                "sglang_without_env": sglang_without_env}
