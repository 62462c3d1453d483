# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Per-host preflight step: picks this host's entry of the plan, adds the profile's hardware
generation (read from profiles/<id>.yml on the controller: the plan does not carry it) and the
planned release's reference environment (profiles/_releases.yml), and runs the
ascend.sglang.sglang_preflight module on the host."""

from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.ascend.sglang.plugins.plugin_utils._errors import PlanError
from ansible_collections.ascend.sglang.plugins.plugin_utils._profile import load_profile
from ansible_collections.ascend.sglang.plugins.plugin_utils._releases import load_release_tables

PASSED = ("mode", "min_driver_version", "min_cann_version", "min_hbm_free_ratio", "npu_smi", "driver_info",
          "toolkit_info", "probe_timeout", "runtime_timeout", "installed_by_roles", "stack_policy", "hccn_tool",
          "pings")
_HARDWARE: dict[tuple[str, str | None], str] = {}


def profile_hardware(profile_id: str, profiles_dir: str | None = None) -> str:
    """The profile's ``hardware`` (A2 / A3), read once per controller run."""
    key = (profile_id, profiles_dir)
    if key not in _HARDWARE:
        _HARDWARE[key] = load_profile(profile_id, profiles_dir).hardware
    return _HARDWARE[key]


def reference_stack(release: str | None, profiles_dir: str | None = None) -> dict | None:
    """The reference environment of an SGLang release (profiles/_releases.yml), None when none is recorded."""
    table = load_release_tables(profiles_dir).get("sglang")
    stack = table.stack(str(release)) if table and release else None
    return stack.as_dict() if stack else None


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(PASSED + ("plan", "profiles_dir"))

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super().run(tmp, task_vars)
        args = dict(self._task.args)
        plan = args.get("plan")
        if plan is None:
            localhost = (task_vars.get("hostvars") or {}).get("localhost") or {}
            plan = localhost.get("sglang_plan") if hasattr(localhost, "get") else None
            plan = self._templar.template(plan) if plan is not None else task_vars.get("sglang_plan")
        if not isinstance(plan, dict) or "hosts" not in plan:
            raise AnsibleActionFail("no plan: run playbooks/plan.yml first (hostvars['localhost'].sglang_plan) "
                                    "or pass plan=")
        hostname = task_vars.get("inventory_hostname")
        host_plan = (plan.get("hosts") or {}).get(hostname)
        if not host_plan:
            result.update(changed=False, findings=[], status="ok", msg=f"{hostname} has no part in the plan")
            return result
        try:
            hardware = plan.get("hardware") or profile_hardware(str(plan.get("profile")), args.get("profiles_dir"))
        except PlanError as exc:
            raise AnsibleActionFail(exc.render()) from exc
        module_args = {k: args[k] for k in PASSED if args.get(k) is not None}
        if "stack_policy" in module_args and str(module_args["stack_policy"]).lower() in ("off", "false", "no"):
            module_args["stack_policy"] = "off"  # a bare YAML `off` arrives as false
        releases = plan.get("releases") or {}
        module_args.update(host_plan=host_plan, hostname=hostname, profile=plan.get("profile"), hardware=hardware,
                           releases=releases, preflight=plan.get("preflight") or {},
                           stack_reference=reference_stack(releases.get("sglang"), args.get("profiles_dir")))
        module_result = self._execute_module(module_name="ascend.sglang.sglang_preflight", module_args=module_args,
                                             task_vars=task_vars)
        result.update(module_result)
        result["changed"] = False
        result["hardware"] = hardware
        return result
