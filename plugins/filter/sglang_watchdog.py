# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Filters of the instance watchdog (which services are watched, the files of those no longer watched); the
logic is in plugins.plugin_utils.plan._watchdog.py (pure, unit-tested), which the renderer uses too."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

# What a filter uses is imported when it runs (plugins/filter/sglang_operations.py says why: Ansible imports every
# filter file of the collection in each task's worker process).


def sglang_watched(services, settings):
    """The services of one host that get an instance watchdog, given the host's sglang_watchdog_* values."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import Service
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._watchdog import watched
    try:
        typed = [Service.from_dict(svc) for svc in services or ()]
    except (TypeError, KeyError, AttributeError) as exc:
        raise AnsibleFilterError(f"sglang_watched: not the plan's services ({exc})") from None
    return [svc.as_dict() for svc in watched(typed, dict(settings or {}))]


def sglang_watchdog_files(services, settings):
    """The unit, configuration and state file of the watchdogs of these services (names), by path; settings: the
    host's by their full names (sglang_systemd_dir, sglang_etc_dir, sglang_watchdog_state_dir; unset: defaults)."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._settings import file_defaults
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._watchdog import files_of
    return files_of([str(name) for name in services or ()], dict(file_defaults(), **dict(settings or {})))


def sglang_watchdog_unit(service):
    """The watchdog unit of a service (sglang-watchdog-<service>.service)."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._watchdog import unit_name
    return unit_name(service)


class FilterModule:
    def filters(self):
        return {"sglang_watched": sglang_watched, "sglang_watchdog_files": sglang_watchdog_files,
                "sglang_watchdog_unit": sglang_watchdog_unit}
