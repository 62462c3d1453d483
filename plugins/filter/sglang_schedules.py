# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The schedules of the day-two operations, one controller call each: restart.yml (sglang_restart_schedule),
upgrade.yml (sglang_upgrade_schedule, then sglang_upgrade_waves once the restart decision is known), retire.yml
(sglang_retire_schedule) and stage_weights.yml (sglang_stage_inputs, then sglang_stage_schedule once the hosts
observed). Each types the plan once, or not at all, and gives the whole schedule as plain data; the playbooks
keep it in one fact and loop over it.
The logic is in plugins/plugin_utils/rollout/_schedules.py and stage/_stage_schedule.py (pure, unit-tested)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

# What a filter uses is imported when it runs (plugins/filter/sglang_operations.py says why: Ansible imports every
# filter file of the collection in each task's worker process).


def _typed(plan):
    """The whole typed plan, with the error of the day-two filters' boundary (sglang_operations.py's)."""
    from ansible_collections.ascend.sglang.plugins.filter.sglang_operations import _typed as typed
    return typed(plan)


def _results(hostvars, hosts, name):
    """host -> that host's registered ``name`` (plain data; {} when it has none) for these hosts."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.core._serialize import plain
    return {str(h): plain((hostvars.get(h) or {}).get(name) or {}) for h in dict.fromkeys(hosts or [])}


def _schedule(build, *args):
    from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import PlanError
    try:
        return build(*args).as_dict()
    except PlanError as exc:
        raise AnsibleFilterError(exc.render("a host of the schedule")) from None
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from None


def sglang_restart_schedule(plan, hostvars=None):
    """restart.yml's batches, routers and hosts' settings; with sglang_restart_only=pending, the pending instances
    from each planned host's sglang_status_result (hostvars)."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._schedules import restart_schedule
    typed = _typed(plan)
    status = _results(hostvars or {}, typed.hosts, "sglang_status_result")
    return _schedule(restart_schedule, typed, status)


def sglang_upgrade_schedule(plan, hostvars, server_hosts):
    """upgrade.yml's schedule before any file is written: why it may not start, the server hosts that install in
    place, the instances, routers and each server host's settings and generation files."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._schedules import upgrade_schedule
    typed = _typed(plan)
    status = _results(hostvars or {}, typed.hosts, "sglang_status_result")
    return _schedule(upgrade_schedule, typed, status, [str(h) for h in server_hosts or []])


def sglang_upgrade_waves(schedule, decisions):
    """The waves of an upgrade schedule (sglang_upgrade_schedule) for the fleet's restart decision (the
    sglang_rollout filter's host -> decision)."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._schedules import upgrade_waves_of
    if not isinstance(schedule, dict) or schedule.get("operation") != "upgrade":
        raise AnsibleFilterError("sglang_upgrade_waves takes the schedule of sglang_upgrade_schedule")
    try:
        return upgrade_waves_of(schedule, decisions or {})
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from None


def sglang_retire_schedule(plan, record=None):
    """retire.yml's instances, their ranks and files, the routers and each host's settings; an error says what is
    refused (an unknown name, every instance of a role, a --mini-lb router), naming the variable."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.core._serialize import plain
    from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._schedules import retire_schedule
    record = plain(record) if isinstance(record, dict) else None
    return _schedule(retire_schedule, _typed(plan), record)


def sglang_stage_inputs(plan, hosts):
    """What each of these server hosts stages (model directories and sources), its address, port and rsync, and
    the run's stage options."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.stage._stage_schedule import stage_inputs
    return _schedule(stage_inputs, _typed(plan), [str(h) for h in hosts or []])


def sglang_stage_schedule(inputs, hostvars, token, result_var="sglang_stage_observed"):
    """The stage's plan from its inputs (sglang_stage_inputs) and what each host's observe (result_var) found,
    with every host's part in every round; fails naming every host that cannot stage."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.core._serialize import plain
    from ansible_collections.ascend.sglang.plugins.plugin_utils.stage._stage_schedule import stage_schedule
    inputs = plain(inputs)
    try:
        return stage_schedule(inputs, _results(hostvars, inputs["hosts"], result_var), str(token))
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from None


class FilterModule:
    def filters(self):
        return {"sglang_restart_schedule": sglang_restart_schedule,
                "sglang_upgrade_schedule": sglang_upgrade_schedule, "sglang_upgrade_waves": sglang_upgrade_waves,
                "sglang_retire_schedule": sglang_retire_schedule, "sglang_stage_inputs": sglang_stage_inputs,
                "sglang_stage_schedule": sglang_stage_schedule}
