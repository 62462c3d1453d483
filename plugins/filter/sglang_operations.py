# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Filters of the operations playbooks (deploy, status, doctor, stop): the plan's instances and routers, the
services' start records and watchdog lines, a rollout's failures, a host's settings and the files stop.yml purges.
The day-two operations' schedules (restart, upgrade, retire, stage) are in sglang_schedules.py.
The logic is in plugins/plugin_utils/rollout/_instances.py and _status.py (pure, unit-tested)."""

from __future__ import annotations

import os
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

# Each filter imports what it uses when it runs, not this file: Ansible finds a filter of the collection by importing
# every filter file of it, in every task's worker process on every host (a fresh process: nothing is kept from the
# task before). Imported here at the top, the planner's and the rollout's modules cost each task that uses any
# filter of the collection tens of milliseconds per host, whether it needs them or not.


def _typed(plan, host=None):
    """The typed plan of sglang_plan (this filter's boundary): an error names what is wrong with it.  With host: the
    plan as that host's filters see it (typed_plan: only its own part of the hosts is read), which a filter of one
    host asks for: run on every host of the fleet, it then costs the same whatever the fleet's size."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import typed_plan
    try:
        return typed_plan(plan, None if host is None else str(host))
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from None


def sglang_instances(plan):
    """Server instances in rollout order (prefill, decode, mixed), each with all ranks and its router entry."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._instances import instances
    return instances(_typed(plan))


def sglang_failed_items(result):
    """The instances or services a failed looped task of a rolling restart failed on."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._instances import failed_items
    return failed_items(result)


def sglang_start_records(services):
    """The start records (/run/sglang/<unit>.started) of these services' units and their watchdogs' (names)."""
    from ansible_collections.ascend.sglang.plugins.module_utils.files._started import record_path
    from ansible_collections.ascend.sglang.plugins.module_utils.files._units import service_units
    return [record_path(unit) for name in services or [] for unit in service_units(str(name))]


def sglang_host_settings(plan, host, own=None):
    """One host's host-scope settings by variable name: the plan's, or for a host the plan has no entry for, its
    own values (own: its hostvars) over the settings table's defaults; the playbooks restate no default."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import PlanError
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._settings import host_values
    planned = _typed(plan, host).hosts.get(str(host)) if plan else None
    try:
        return host_values(planned.settings if planned is not None else None, str(host), own)
    except PlanError as exc:
        raise AnsibleFilterError(exc.render(f"host {host}")) from None


def sglang_host_plan(plan, host):
    """The plan's dict form as this host sees it (plugin_utils/plan/_records.py host_view): its own part of the
    hosts, no instances or router upstreams. What a task of one host passes to an action (plan=): the whole plan
    would be templated and copied once per host, a cost that grows with the square of the fleet."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.core._serialize import plain
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import host_view
    try:
        view = host_view(plan, str(host))
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from None
    return plain(view)


def sglang_purge_files(plan, host, settings=None):
    """Every path stop.yml's purge removes on this host (plugin_utils/targets/_host_files.py, the one list of the
    files a host's plan produces); settings: the host's, as sglang_host_settings gives them."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.targets._host_files import purge_paths
    host_plan = _typed(plan, host).hosts.get(str(host)) if plan else None
    return purge_paths(host_plan, settings)


def sglang_upgrade_rollback(waves, failed):
    """What a failed upgrade wave (its number) puts back on the previous files, and what restarts on them."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._upgrade import rollback
    try:
        return rollback(waves or [], int(failed))
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from None


def sglang_runtime(plan, host):
    """What the servers of this host run for an upgrade's sake: {sglang, image, python} (plugin_utils/rollout/_upgrade.py)."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._upgrade import runtime_identity
    return runtime_identity(_typed(plan, host), str(host))


def _plan_of(hostvars):
    """The plan a play-host filter reads (hostvars['localhost'].sglang_plan); None where there is none yet (a
    syntax check templates a play's hosts without it)."""
    return hostvars["localhost"].get("sglang_plan") if "localhost" in hostvars else None


def sglang_runtime_recorded(own):
    """The text of a host's record of what its servers run (runtime.json) as this run read it (own: the host's
    variables, hostvars[host]): in preflight's call (sglang_preflight_result.runtime_record), or with
    sglang_preflight_skip by deploy.yml's tasks/runtime_check.yml (__sglang_runtime_file, slurp's base64); None
    where it has none."""
    import base64
    looked = own.get("sglang_preflight_result") if isinstance(own, Mapping) else None
    if isinstance(looked, Mapping) and "runtime_record" in looked:
        text = looked["runtime_record"]
        return text if isinstance(text, str) else None
    read = own.get("__sglang_runtime_file") if isinstance(own, Mapping) else None
    content = read.get("content") if isinstance(read, Mapping) else None
    if isinstance(content, str):
        try:
            return base64.b64decode(content).decode("utf-8")
        except ValueError:
            return None
    return None


def sglang_runtime_due(hosts, hostvars):
    """The hosts of ``hosts`` whose record of what their servers run (runtime.json, read by preflight's call or,
    with sglang_preflight_skip, by deploy.yml's tasks/runtime_check.yml) is missing or holds another runtime than the
    plan's (hostvars['localhost'].sglang_plan): those whose record must be written."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._upgrade import record_due, runtime_identity
    plan = _plan_of(hostvars)
    out = []
    for host in hosts or ():
        recorded = sglang_runtime_recorded(hostvars[host]) if host in hostvars else None
        if plan is None or record_due(recorded, runtime_identity(_typed(plan, host), str(host))):
            out.append(str(host))
    return out


def sglang_install_hosts(hosts, hostvars):
    """The hosts of ``hosts`` whose server stack deploy.yml installs and checks (plugin_utils/rollout/_schedules.py
    install_hosts), from the plan (hostvars['localhost'].sglang_plan) and what each host's preflight saw of its
    stack (sglang_preflight_result); without a plan (a syntax check) every host."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._schedules import install_hosts
    plan = _plan_of(hostvars)
    if plan is None:
        return [str(host) for host in hosts or ()]
    results = {str(host): hostvars[host].get("sglang_preflight_result") for host in hosts or () if host in hostvars}
    return install_hosts(_typed(plan), hosts or (), results)


def sglang_tuning_hosts(hosts, hostvars):
    """The hosts of ``hosts`` deploy.yml's tuning play has work on (plugin_utils/rollout/_schedules.py
    tuning_needed), from the plan (hostvars['localhost'].sglang_plan) and what each host's preflight read
    (sglang_preflight_result.observed: governors, kernel settings); without a plan (a syntax check) every host."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._schedules import tuning_needed
    plan = _plan_of(hostvars)
    if plan is None:
        return [str(host) for host in hosts or ()]
    typed = _typed(plan)
    out = []
    for host in hosts or ():
        planned = typed.hosts.get(str(host))
        result = hostvars[host].get("sglang_preflight_result") if host in hostvars else None
        observed = result.get("observed") if isinstance(result, Mapping) else None
        observed = observed if isinstance(observed, Mapping) else {}
        if planned is not None and tuning_needed(planned, observed.get("governors"), observed.get("sysctl")):
            out.append(str(host))
    return out


def sglang_runtime_change(recorded, planned):
    """How the planned runtime (sglang_runtime) differs from the one recorded on a host, one line per difference;
    recorded: the record, or its JSON text (sglang_runtime_recorded), or none."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._upgrade import runtime_change
    return runtime_change(recorded, planned or {})


def sglang_fleet_record(plan, hostvars, previous=None, retired=None):
    """The controller's record of the deployment after a run that succeeded (plugin_utils/rollout/_fleet_record.py):
    the plan's instances and the previous record's instances the plan no longer has, minus ``retired`` (keys)."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.core._serialize import plain
    from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._fleet_record import (
        CONNECTION_VARS, fleet_record,
    )
    typed = _typed(plan)
    connections = {}
    for host in typed.hosts:
        if host in hostvars:
            own = hostvars[host]
            connections[host] = {k: plain(own.get(k)) for k in CONNECTION_VARS if own.get(k) is not None}
    return fleet_record(typed, connections, previous if isinstance(previous, dict) else None,
                        [str(k) for k in retired or []])


def sglang_record_path(plan):
    """Where the controller keeps the record of this deployment: <sglang_state_dir>/<deployment>.json, a relative
    directory taken from where ansible-playbook runs (as sglang_bench_dir), made absolute here on the controller:
    a module run on localhost may run elsewhere."""
    typed = _typed(plan)
    name = typed.deployment or typed.profile
    return os.path.abspath(os.path.join(str(typed.typed_settings.sglang_state_dir), f"{name}.json"))


def sglang_day_two(plan, record):
    """What the plan changes of the recorded deployment, as plan.yml shows it: lines (adds, no longer planned,
    upgrade and its waves of the plan's sglang_restart_batch)."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._fleet_record import day_two, day_two_lines
    from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._schedules import batch_size
    typed = _typed(plan)
    try:
        size = batch_size(typed)
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from None
    return day_two_lines(day_two(typed, record if isinstance(record, dict) else None, size))


def sglang_routers(plan):
    """Router services with base_url and mini_lb (true when the router has no worker API)."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._instances import routers
    return routers(_typed(plan))


def sglang_watchdog_lines(status_by_host):
    """'host service: watchdog state' for every service with an instance watchdog (doctor.yml)."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._status import watchdog_lines
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
    from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._instances import without_env
    return without_env(services)


class FilterModule:
    def filters(self):
        return {"sglang_failed_items": sglang_failed_items, "sglang_instances": sglang_instances,
                "sglang_host_settings": sglang_host_settings, "sglang_host_plan": sglang_host_plan,
                "sglang_purge_files": sglang_purge_files,
                "sglang_rollout_failures": sglang_rollout_failures, "sglang_routers": sglang_routers,
                "sglang_start_records": sglang_start_records, "sglang_watchdog_lines": sglang_watchdog_lines,
                "sglang_without_env": sglang_without_env, "sglang_upgrade_rollback": sglang_upgrade_rollback,
                "sglang_runtime": sglang_runtime, "sglang_runtime_change": sglang_runtime_change,
                "sglang_runtime_recorded": sglang_runtime_recorded,
                "sglang_runtime_due": sglang_runtime_due, "sglang_install_hosts": sglang_install_hosts,
                "sglang_tuning_hosts": sglang_tuning_hosts,
                "sglang_fleet_record": sglang_fleet_record, "sglang_day_two": sglang_day_two,
                "sglang_record_path": sglang_record_path}
