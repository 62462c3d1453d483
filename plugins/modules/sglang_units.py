#!/usr/bin/python
# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Starts, restarts and enables a host's units in one module call, in the order given."""

from __future__ import annotations

DOCUMENTATION = r"""
module: sglang_units
short_description: Start, restart and enable a host's systemd units in one step, in order
description:
  - Stops the units of O(stop) that run, in order; then optionally reloads systemd, then, for each unit of O(units)
    in the order given, enables it unless systemd reports it
    enabled and restarts it (O(units[].restart)) or starts it unless it is active or activating; what
    M(ansible.builtin.systemd_service) does with C(state=started|restarted) and C(enabled=true), for a list of
    units in one module call.
  - Stops at the first systemctl call that fails and reports the unit, what was done before it and systemctl's
    message.
  - Used by the role ascend.sglang.sglang_service after M(ascend.sglang.sglang_render_files) wrote a host's
    files; that module's C(start) and C(daemon_reload) results are this module's O(units) and O(daemon_reload).
version_added: 0.4.0
options:
  stop:
    description: Units to stop first, in order. A unit systemd does not know, or that is not running, is left alone.
    type: list
    elements: str
    default: []
  units:
    description: The units, in the order they are to be (re)started.
    type: list
    elements: dict
    default: []
    suboptions:
      unit:
        description: Unit name ending in C(.service).
        type: str
        required: true
      restart:
        description: Restart the unit even if it runs.
        type: bool
        default: false
      new_unit:
        description: Whether the unit file is new in this run. In check mode such a unit is reported as to be
          started and enabled (systemd does not know it yet); otherwise it is ignored.
        type: bool
        default: false
  daemon_reload:
    description: Run C(systemctl daemon-reload) first (a unit file changed). Not done in check mode.
    type: bool
    default: false
extends_documentation_fragment:
  - ascend.sglang.attributes.host
author:
  - ascend.sglang maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: Stop these first (on every host, before the next task starts any)
  ascend.sglang.sglang_units:
    stop: [sglang-watchdog-sglang-decode-0.service, sglang-decode-0.service]

- name: The services, then their watchdogs
  ascend.sglang.sglang_units:
    daemon_reload: true
    units:
      - unit: sglang-decode-0.service
        restart: true
      - unit: sglang-watchdog-sglang-decode-0.service
"""

RETURN = r"""
stopped:
  description: The units of O(stop) that were (or in check mode would be) stopped, in order.
  returned: always
  type: list
  elements: str
units:
  description: One entry per unit, in the order given.
  returned: always
  type: list
  elements: dict
  contains:
    unit:
      description: The unit's name.
      type: str
    enabled:
      description: Whether it was (or in check mode would be) enabled by this call.
      type: bool
    action:
      description: C(restart), C(start) or C(none), done (or in check mode to be done) by this call.
      type: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ascend.sglang.plugins.module_utils.files._unit_show import parse_systemctl_show
from ansible_collections.ascend.sglang.plugins.module_utils.files._units import PROPERTIES, bad_names, unit_actions, units_to_stop


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "stop": {"type": "list", "elements": "str", "default": []},
            "units": {"type": "list", "elements": "dict", "default": [], "options": {
                "unit": {"type": "str", "required": True},
                "restart": {"type": "bool", "default": False},
                "new_unit": {"type": "bool", "default": False}}},
            "daemon_reload": {"type": "bool", "default": False},
        },
        supports_check_mode=True,
    )
    units = module.params["units"]
    bad = bad_names(units + [{"unit": name} for name in module.params["stop"]])
    if bad:
        module.fail_json(msg=f"not a unit name ending in .service: {', '.join(bad)}")
    systemctl = module.get_bin_path("systemctl", required=True)

    def systemctl_run(*args: str) -> str:
        rc, stdout, stderr = module.run_command([systemctl, *args])
        if rc != 0:
            raise RuntimeError(f"systemctl {' '.join(args)} failed (rc {rc}): {(stderr or stdout).strip()}")
        return stdout

    def state_of(unit: str) -> dict:
        return parse_systemctl_show(systemctl_run("show", "--property=" + PROPERTIES, "--", unit))

    done: list[dict] = []
    stopped: list[str] = []
    try:
        for unit in units_to_stop(module.params["stop"], {name: state_of(name) for name in module.params["stop"]}):
            if not module.check_mode:
                systemctl_run("stop", "--", unit)
            stopped.append(unit)
        if module.params["daemon_reload"] and not module.check_mode:
            systemctl_run("daemon-reload")
        states = {}
        for unit in units:
            # A unit file new in check mode was not written: systemd knows nothing of it yet.
            if not (module.check_mode and unit["new_unit"]):
                states[unit["unit"]] = state_of(unit["unit"])
        for step in unit_actions(units, states):
            if not module.check_mode:
                if step["enable"]:
                    systemctl_run("enable", "--", step["unit"])
                if step["start"]:
                    systemctl_run(step["start"], "--", step["unit"])
            done.append({"unit": step["unit"], "enabled": step["enable"], "action": step["start"] or "none"})
    except RuntimeError as exc:
        module.fail_json(msg=str(exc), stopped=stopped, units=done)
    module.exit_json(changed=bool(stopped) or any(u["enabled"] or u["action"] != "none" for u in done),
                     stopped=stopped, units=done)


if __name__ == "__main__":
    main()
