# Copyright: ascend.sglang contributors
# Apache License 2.0
"""What ascend.sglang.sglang_units does to each of a host's units, decided from their systemd state.

Pure and typed; no Ansible import (the module reads the states and runs the systemctl calls).
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

# A unit name as the renderer writes them: no option-like or path-like name reaches systemctl.
UNIT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9:_.@-]*\.service")
# UnitFileState values for which `systemctl is-enabled` succeeds: `enabled: true` has nothing to do
# (what ansible.builtin.systemd_service decides from is-enabled).
ENABLED = frozenset({"enabled", "enabled-runtime", "static", "alias", "indirect", "generated", "transient"})
# ActiveState values of a unit that is running or on its way: `state: started` leaves it alone.
RUNNING = frozenset({"active", "activating", "reloading"})
# ActiveState values of a unit with nothing left to stop.
STOPPED = frozenset({"inactive", "failed"})
PROPERTIES = "LoadState,ActiveState,UnitFileState"


def watchdog_unit(service: str) -> str:
    """The instance watchdog unit of a service (plugins/plugin_utils/plan/_watchdog.py writes it)."""
    return f"sglang-watchdog-{service}.service"


def service_units(service: str) -> list[str]:
    """The units a planned service can have on its host: its own and its watchdog's."""
    return [f"{service}.service", watchdog_unit(service)]


def bad_names(units: Sequence[Mapping[str, Any]]) -> list[str]:
    return [str(u.get("unit")) for u in units if not UNIT_NAME.fullmatch(str(u.get("unit") or ""))]


def unit_actions(units: Sequence[Mapping[str, Any]], states: Mapping[str, Mapping[str, str]]) -> list[dict[str, Any]]:
    """Per unit, in the order given: {"unit", "enable": bool, "start": "restart" | "start" | None}.

    A unit asked to restart is restarted whatever its state; another is started unless it runs; every unit
    is enabled unless systemd says it is. A unit whose state is unknown (not loaded) is started and enabled:
    systemctl then reports why it cannot be.
    """
    plan = []
    for unit in units:
        state = states.get(unit["unit"], {})
        if unit.get("restart"):
            start = "restart"
        elif state.get("ActiveState") in RUNNING:
            start = None
        else:
            start = "start"
        plan.append({"unit": unit["unit"], "enable": state.get("UnitFileState") not in ENABLED, "start": start})
    return plan


def units_to_stop(names: Sequence[str], states: Mapping[str, Mapping[str, str]]) -> list[str]:
    """The units of ``names`` (in order) that systemd knows and that are not stopped yet."""
    return [name for name in names
            if states.get(name, {}).get("LoadState") not in (None, "not-found")
            and states[name].get("ActiveState") not in STOPPED]
