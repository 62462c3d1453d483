# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Controller-side plan step: runs the planner once over groups/hostvars."""

from __future__ import annotations

import dataclasses

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.ascend.sglang.plugins.plugin_utils._contract import ROLE_VAR_NAMES
from ansible_collections.ascend.sglang.plugins.plugin_utils._errors import Collector, PlanError
from ansible_collections.ascend.sglang.plugins.plugin_utils._planner import plan
from ansible_collections.ascend.sglang.plugins.plugin_utils._profile import ROLES, load_profile
from ansible_collections.ascend.sglang.plugins.plugin_utils._topology import build_inventory

# Deployment-wide inventory variables the planner reads (group_vars/all or extra vars).
DEPLOYMENT_VARS = (
    "sglang_model_path", "sglang_draft_model_path", "sglang_init_expert_location", "sglang_overrides",
    "sglang_release", "sglang_router_release", "sglang_python", "sglang_router_python",
    # sglang_runtime: container (plugins/plugin_utils/_container.py): one engine and image for the deployment.
    "sglang_runtime", "sglang_container_engine", "sglang_container_image", "sglang_container_shm_size",
    "sglang_container_ascend_runtime", "sglang_container_image_archive",
    # Checked for shape only: the plan keeps the secret flags' names, never their values.
    "sglang_secrets",
    # Preflight: each check fail | warn | off, and how deep the weights are compared (module_utils/_checks.py).
    "sglang_preflight_checks", "sglang_preflight_weights",
)
# Per-host variables the planner reads from hostvars, and the role variables the roles write into
# files on each host (checked per host: deploy uses each host's own value).
HOST_VARS = ("sglang_host_ip", "ansible_host", "sglang_nic", "sglang_hardware") + ROLE_VAR_NAMES


_UNREADABLE = object()


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("profile", "profiles_dir"))
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super().run(tmp, task_vars)
        args = self._task.args
        profile_id = args.get("profile")
        if not profile_id:
            raise AnsibleActionFail("variable 'sglang_profile' is not set: pass -e sglang_profile=<id> "
                                    "or run one of the per-profile playbooks")
        groups = task_vars.get("groups") or {}
        hostvars = task_vars.get("hostvars") or {}
        errors = Collector()
        wanted = {name for role in ROLES for name in groups.get(role) or []}
        host_values = {}
        for name in sorted(wanted):
            hv = hostvars.get(name) or {}
            host_values[name] = {}
            for key in HOST_VARS:
                if key in hv:
                    value = self._value(hv, key, errors, name)
                    if value is not _UNREADABLE:
                        host_values[name][key] = value
        variables = {}
        for key in DEPLOYMENT_VARS:
            if key in task_vars:
                value = self._value(task_vars, key, errors, None)
                if value is not _UNREADABLE:
                    variables[key] = value
        try:
            profile = load_profile(profile_id, args.get("profiles_dir"))
            inventory = build_inventory(groups, host_values, variables)
            if errors.findings:
                # Unreadable values first, then everything the planner finds besides.
                inventory = dataclasses.replace(inventory, findings=tuple(errors.findings) + inventory.findings)
            result_plan = plan(profile, inventory)
        except PlanError as exc:
            result.update(failed=True, msg=exc.render(),
                          findings=[{"message": f.message, "group": f.group, "host": f.host,
                                     "variable": f.variable} for f in exc.findings])
            return result
        # Returned as a result, not as a fact: playbooks register it and set_fact sglang_plan.
        result.update(changed=False, plan=result_plan.as_dict())
        return result

    def _value(self, source, key, errors, host):
        """One inventory value, templated; a template that cannot be evaluated is a finding, not a traceback."""
        try:
            return self._templar.template(source[key])
        except Exception as exc:  # noqa: BLE001 - any templating error becomes a finding naming the variable
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            errors.add(f"cannot be evaluated on the controller: {first[:200]}", host=host, variable=key)
            return _UNREADABLE
