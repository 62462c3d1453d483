# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Filters of the instance watchdog (which services are watched, the files of those no longer watched); the
logic is in plugins.plugin_utils.plan._watchdog.py (pure, unit-tested), which the renderer uses too."""

from __future__ import annotations

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._watchdog import files_of, unit_name, watched


def sglang_watched(services, settings):
    """The services of one host that get an instance watchdog, given the host's sglang_watchdog_* values."""
    return watched(services, settings)


def sglang_watchdog_files(services, dirs):
    """The unit, configuration and state file of the watchdogs of these services (names), by path."""
    return files_of(services, dirs)


def sglang_watchdog_unit(service):
    """The watchdog unit of a service (sglang-watchdog-<service>.service)."""
    return unit_name(service)


class FilterModule:
    def filters(self):
        return {"sglang_watched": sglang_watched, "sglang_watchdog_files": sglang_watchdog_files,
                "sglang_watchdog_unit": sglang_watchdog_unit}
