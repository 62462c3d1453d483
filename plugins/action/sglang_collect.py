# Copyright: ascend.sglang contributors
# Apache License 2.0
"""One host's part of the failure bundle: lists the host's units and rendered files from the plan (the renderer's
own list, plugin_utils/targets/_host_files.py), gathers them on the host in one module call (module_utils/collect/_collect.py
takes every secret out there), and writes them into <bundle dir>/<host>/ on the controller. The task result
holds counts, never the texts. An unreachable host gets an index.json saying so, and the play goes on."""

from __future__ import annotations

import os

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.ascend.sglang.plugins.plugin_utils.forensics._collect_bundle import (
    host_dir, secret_values, write_host)
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import HostPlan, typed_plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.targets._host_files import DEFAULT_SETTINGS, host_files
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._serialize import plain

# The rendered files a bundle holds (never the .secrets file, nor the collection's own programs).
KINDS = ("cann_env", "sysctl", "env", "launcher", "router_workers", "unit", "watchdog_config", "watchdog_unit")
_PASSED = ("since", "max_lines", "max_bytes", "dmesg_lines", "npu_smi", "timeout")


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("plan", "bundle_dir", "record_start", "profile") + _PASSED)

    def _settings(self, task_vars: dict, host_plan: HostPlan | None) -> dict:
        """The host's file settings by their full names, as deployment wrote them: the plan's (its inventory's,
        checked, defaults filled in); for a host the plan has no entry for, its inventory's, else the defaults."""
        if host_plan is not None:
            return dict(DEFAULT_SETTINGS, **host_plan.settings)
        settings = dict(DEFAULT_SETTINGS)
        for name in DEFAULT_SETTINGS:
            value = task_vars.get(name)
            if value is not None:
                settings[name] = self._templar.template(value)
        return settings

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super().run(tmp, task_vars)
        args = plain(self._task.args)  # plain Python: Ansible's tagged types reach no writer
        if args.get("record_start") is not None:
            # deploy.yml: the start of this deploy, the default window of a later collection.
            return dict(result, **self._execute_module(
                module_name="ascend.sglang.sglang_gather", task_vars=task_vars,
                module_args={"record_start": args["record_start"], "profile": str(args.get("profile") or "")}))
        bundle_dir = args.get("bundle_dir")
        try:
            plan = typed_plan(args.get("plan"))
        except ValueError as exc:
            raise AnsibleActionFail(str(exc)) from None
        if not bundle_dir or not os.path.isdir(str(bundle_dir)):
            raise AnsibleActionFail(f"bundle_dir: not a directory on the controller: {bundle_dir!r}")
        host = str(task_vars.get("inventory_hostname"))
        out = host_dir(str(bundle_dir), host)
        planned = plan.hosts.get(host)
        host_plan = planned or HostPlan.empty()
        services = host_plan.services
        settings = self._settings(task_vars, planned)
        try:
            specs = host_files(host_plan, settings, kinds=KINDS, profile=str(plan.profile or ""))
        except ValueError as exc:
            raise AnsibleActionFail(str(exc)) from None
        files = [{"path": os.path.join(str(settings[spec.dir]), spec.name), "kind": spec.kind,
                  "sensitive": bool(spec.sensitive)} for spec in specs]
        units = [s.name + ".service" for s in services]
        units += [spec.name for spec in specs if spec.kind == "watchdog_unit"]
        # The server interpreters (the plan has none in the container runtime: a container's stack is its image's).
        pythons = sorted({str(s.python) for s in services if s.role != "router" and s.python})
        module_args = {"units": units, "files": files, "pythons": pythons,
                       # The host's sglang_secrets: read here, never a task argument that a log could show.
                       "secrets": secret_values(self._templar.template(task_vars.get("sglang_secrets") or {}))}
        module_args.update({k: args[k] for k in _PASSED if args.get(k) not in (None, "")})
        got = self._execute_module(module_name="ascend.sglang.sglang_gather", module_args=module_args,
                                   task_vars=task_vars)
        if got.get("unreachable") or got.get("failed"):
            reason = str(got.get("msg") or "no answer")
            write_host(out, {}, {"reachable": not got.get("unreachable"),
                                 "collected": [], "failed": [{"what": "everything", "reason": reason}]})
            result.update(changed=False, collected=0, missed=1, reason=reason)
            if got.get("unreachable"):
                result["unreachable"] = True
                result["msg"] = reason
            return result
        index = dict(got.get("index") or {}, units=units, host=host)
        write_host(out, got.get("files") or {}, index)
        result.update(changed=False, collected=len(index.get("collected") or []),
                      missed=len(index.get("failed") or []), since=index.get("since"), directory=out)
        return result
