# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Filters of the instance watchdog's files (deploy and render mode); the logic is in
plugins.plugin_utils._watchdog.py (pure, unit-tested)."""

from __future__ import annotations

from ansible_collections.ascend.sglang.plugins.plugin_utils._watchdog import config, render_watched, watched


def sglang_watched(services, settings):
    """The services of one host that get an instance watchdog, given the host's sglang_watchdog_* values."""
    return watched(services, settings)


def sglang_watchdog_config(service, settings):
    """The configuration (<service>.watchdog.json) of one watched service."""
    return config(service, settings)


def sglang_render_watched(pairs, hostvars, defaults):
    """Render mode's (host item, service) pairs that get a watchdog, each host with its own settings."""
    return render_watched(pairs, hostvars, defaults)


class FilterModule:
    def filters(self):
        return {"sglang_watched": sglang_watched, "sglang_watchdog_config": sglang_watchdog_config,
                "sglang_render_watched": sglang_render_watched}
