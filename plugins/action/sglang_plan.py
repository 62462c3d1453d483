# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Controller-side plan step: runs the planner once over groups/hostvars."""

from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.ascend.sglang.plugins.module_utils._errors import PlanError
from ansible_collections.ascend.sglang.plugins.module_utils._planner import plan
from ansible_collections.ascend.sglang.plugins.module_utils._profile import ROLES, load_profile
from ansible_collections.ascend.sglang.plugins.module_utils._topology import build_inventory

# Deployment-wide inventory variables the planner reads (group_vars/all or extra vars).
DEPLOYMENT_VARS = (
    "sglang_model_path", "sglang_draft_model_path", "sglang_init_expert_location", "sglang_overrides",
    "sglang_release", "sglang_router_release", "sglang_python", "sglang_router_python",
)
# Per-host variables the planner reads from hostvars.
HOST_VARS = ("sglang_host_ip", "ansible_host", "sglang_nic", "sglang_hardware")


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
        wanted = {name for role in ROLES for name in groups.get(role) or []}
        host_values = {}
        for name in wanted:
            hv = hostvars.get(name) or {}
            host_values[name] = {k: self._templar.template(hv.get(k)) for k in HOST_VARS if hv.get(k) is not None}
        variables = {k: self._templar.template(task_vars[k]) for k in DEPLOYMENT_VARS if k in task_vars}
        try:
            profile = load_profile(profile_id, args.get("profiles_dir"))
            result_plan = plan(profile, build_inventory(groups, host_values, variables))
        except PlanError as exc:
            result.update(failed=True, msg=exc.render(),
                          findings=[{"message": f.message, "group": f.group, "host": f.host,
                                     "variable": f.variable} for f in exc.findings])
            return result
        # Returned as a result, not as a fact: playbooks register it and set_fact sglang_plan.
        result.update(changed=False, plan=result_plan.as_dict())
        return result
