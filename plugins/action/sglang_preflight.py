# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Per-host preflight step: picks this host's entry of the plan and the plan's facts the checks compare with
(the profile's hardware, the planned releases and their reference environment, the preflight settings), and
runs the ascend.sglang.sglang_preflight module on the host."""

from __future__ import annotations

from collections.abc import Mapping

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import host_view, typed_plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._settings import GENERATION_DIR
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._serialize import plain
from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._stack import INSTALL_SETTINGS
from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._upgrade import RUNTIME_RECORD

PASSED = ("mode", "min_driver_version", "min_cann_version", "min_hbm_free_ratio", "npu_smi", "driver_info",
          "toolkit_info", "probe_timeout", "runtime_timeout", "installed_by_roles", "stack_policy", "hccn_tool",
          "pings", "cpu_sysfs_dir", "runtime_record")
# Option -> the plan's setting (the settings table's row) it takes when the task does not give it. The collection's
# playbooks give none of them: read here from the plan this action reads anyway, not templated through hostvars
# once per option, host and task, nor listed again in every task that calls the module.
FROM_SETTINGS = {"min_driver_version": "sglang_min_driver_version", "min_cann_version": "sglang_min_cann_version",
                 "min_hbm_free_ratio": "sglang_preflight_min_hbm_free_ratio", "npu_smi": "sglang_npu_smi",
                 "driver_info": "sglang_npu_driver_info", "toolkit_info": "sglang_npu_toolkit_info",
                 "probe_timeout": "sglang_preflight_probe_timeout",
                 "runtime_timeout": "sglang_preflight_runtime_timeout", "stack_policy": "sglang_preflight_stack",
                 "hccn_tool": "sglang_hccn_tool"}


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(PASSED + ("plan",))

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super().run(tmp, task_vars)
        args = plain(self._task.args)  # plain Python: Ansible's tagged types reach no writer
        plan = args.get("plan")
        if plan is None:
            localhost = (task_vars.get("hostvars") or {}).get("localhost") or {}
            plan = localhost.get("sglang_plan") if hasattr(localhost, "get") else None
            if plan is None:
                plan = task_vars.get("sglang_plan")
            elif isinstance(plan, Mapping) and isinstance(plan.get("hosts"), Mapping):
                # This host's part of the plan only, then templated: the whole plan would be templated and copied
                # on every host of the fleet, a cost that grows with the square of its size.
                plan = self._templar.template(host_view(plan, str(task_vars.get("inventory_hostname"))))
            else:
                plan = self._templar.template(plan)
        if not isinstance(plan, Mapping) or "hosts" not in plan:
            raise AnsibleActionFail("no plan: run playbooks/plan.yml first (hostvars['localhost'].sglang_plan) "
                                    "or pass plan=")
        try:
            typed = typed_plan(plan)
        except ValueError as exc:
            raise AnsibleActionFail(str(exc)) from None
        hostname = task_vars.get("inventory_hostname")
        host_plan = typed.hosts.get(hostname)
        if host_plan is None:
            result.update(changed=False, findings=[], status="ok", msg=f"{hostname} has no part in the plan")
            return result
        hardware = typed.hardware or None
        module_args = {k: args[k] for k in PASSED if args.get(k) is not None}
        for option, setting in FROM_SETTINGS.items():
            if option not in module_args and typed.settings.get(setting) is not None:
                module_args[option] = typed.settings[setting]
        if "stack_policy" in module_args and str(module_args["stack_policy"]).lower() in ("off", "false", "no"):
            module_args["stack_policy"] = "off"  # a bare YAML `off` arrives as false
        if (module_args.get("mode", "preflight") == "preflight" and "runtime_record" not in module_args
                and host_plan.settings.get(GENERATION_DIR)):
            # The record of what the host's servers run, read in the same call (on a server host: the module):
            # deploy.yml tells an upgrade from a deploy with it (filter sglang_runtime_due, tasks/runtime_refuse.yml)
            # and makes no call of its own.
            module_args["runtime_record"] = f"{host_plan.settings[GENERATION_DIR]}/{RUNTIME_RECORD}"
        # The host's part in the plan's dict form: the module on the host reads dicts (module_utils).
        module_args.update(host_plan=host_plan.as_dict(), hostname=hostname, profile=typed.profile, hardware=hardware,
                           releases=typed.releases or {}, preflight=typed.preflight or {},
                           stack_reference=typed.reference_stack)
        module_result = self._execute_module(module_name="ascend.sglang.sglang_preflight", module_args=module_args,
                                             task_vars=task_vars)
        result.update(module_result)
        if "stack" in module_result:
            # The host's own values of the install's settings, evaluated as the role evaluates them (a value may
            # refer to the plan, which the plan itself could not read): deploy.yml's stack play decides from them
            # and this look whether the install has anything to do (plugin_utils/rollout/_stack.py).
            result["install_settings"] = {name: plain(self._templar.template(task_vars[name]))
                                          for name in INSTALL_SETTINGS if name in task_vars}
        result["changed"] = False
        result["hardware"] = hardware
        return result
