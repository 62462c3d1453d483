# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Controller side of the status playbook: every host's service status -> one table and a JSON file."""

from __future__ import annotations

import json
import os

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._status import (
    healthy, pending_services, render_table, status_rows,
)
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._serialize import plain
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import typed_plan


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("plan", "result_var", "json_path", "fail_unhealthy"))
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super().run(tmp, task_vars)
        args = plain(self._task.args)  # plain Python: Ansible's tagged types reach no writer
        try:
            plan = typed_plan(args.get("plan"))
        except ValueError as exc:
            raise AnsibleActionFail(str(exc)) from None
        var = str(args.get("result_var") or "sglang_status_result")
        hostvars = task_vars.get("hostvars") or {}
        observed = {}
        for host in plan.hosts:
            hv = hostvars.get(host) if hasattr(hostvars, "get") else None
            value = hv.get(var) if hv is not None and hasattr(hv, "get") else None
            observed[str(host)] = dict(value) if isinstance(value, dict) and not value.get("failed") else None
        rows = status_rows(plan, observed)
        table = render_table(rows)
        ok = healthy(rows)
        pending = pending_services(rows)
        deployment = plan.deployment or plan.profile
        doc = {"deployment": deployment, "profile": plan.profile, "healthy": ok, "restarts_pending": pending, "services": rows}
        if args.get("json_path"):
            path = os.path.abspath(os.path.expanduser(str(args["json_path"])))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path + ".tmp", "w", encoding="utf-8") as handle:
                json.dump(doc, handle, indent=2, sort_keys=True)
                handle.write("\n")
            os.replace(path + ".tmp", path)
            result["json_path"] = path
        # The deployment's name heads the summary (two deployments of one profile are told apart).
        name = deployment if deployment == plan.profile else f"{deployment} (profile {plan.profile})"
        summary = f"{name}: {len(rows)} services, {'all healthy' if ok else 'NOT all healthy'}"
        if pending:
            # Healthy or not, these run a configuration their files no longer show (module_utils/files/_started.py).
            summary += (f"; {len(pending)} run other files than their own (restart pending: "
                        f"{', '.join(pending)}): run the deployment again, or restart.yml -e sglang_restart_only=pending")
        result.update(changed=False, healthy=ok, restarts_pending=pending, rows=rows, table=table, msg=summary)
        if not ok and args.get("fail_unhealthy"):
            result.update(failed=True, msg=summary + "\n" + "\n".join(table))
        return result
