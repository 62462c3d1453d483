# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Controller-side aggregation: every host's preflight / doctor findings -> one table, a JSON
report, an exit status (0 ok, 1 warnings, 2 failures) and whether it stops the run at fail_on
(plugin_utils/report/_preflight_report.py, _report.py)."""

from __future__ import annotations

import json
import os

from ansible.errors import AnsibleActionFail
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import typed_plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._fleet_checks import cross_host_findings
from ansible_collections.ascend.sglang.plugins.plugin_utils.report._preflight_report import (
    aggregate, host_result_findings, render_table, report,
)
from ansible_collections.ascend.sglang.plugins.plugin_utils.report._report import fail_on_value, stops
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._serialize import plain


def _result(hostvars, host, var) -> dict | None:
    hv = hostvars.get(host) if hasattr(hostvars, "get") else None
    value = hv.get(var) if hv is not None and hasattr(hv, "get") else None
    return dict(value) if isinstance(value, dict) else None


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("hosts", "result_var", "json_path", "fail_on", "fail_on_var", "fail_task", "mode",
                             "include_ok", "profile", "ping_var", "plan", "look_key"))
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super().run(tmp, task_vars)
        args = plain(self._task.args)  # plain Python: Ansible's tagged types reach no writer
        try:
            # Named as the operator set it (fail_on_var: sglang_preflight_fail_on, say) when it is wrong.
            fail_on = fail_on_value(args.get("fail_on"), str(args.get("fail_on_var") or "fail_on"))
        except ValueError as exc:
            raise AnsibleActionFail(str(exc)) from None
        try:
            fail_task = boolean(args.get("fail_task", True), strict=True)
        except TypeError:
            raise AnsibleActionFail(f"fail_task must be true or false, got {args.get('fail_task')!r}") from None
        hosts = args.get("hosts")
        if hosts is None:
            raise AnsibleActionFail("hosts: the hosts whose results to aggregate (e.g. the plan's hosts)")
        var = str(args.get("result_var") or "sglang_preflight_result")
        hostvars = task_vars.get("hostvars") or {}
        results = {str(host): _result(hostvars, host, var) for host in hosts}
        if args.get("look_key"):
            results = _with_looks(results, hostvars, str(args["look_key"]))
        if args.get("ping_var"):
            results = _with_pings(results, hostvars, str(args["ping_var"]))
        plan = args.get("plan")
        extra = []
        if plan is not None:
            try:
                typed = typed_plan(plan)
            except ValueError as exc:
                raise AnsibleActionFail(str(exc)) from None
            # The checks that compare hosts: decided here, from every host's observations.
            observed = {h: (r or {}).get("observed") for h, r in results.items() if r and not r.get("failed")}
            extra = cross_host_findings(typed, observed)
        mode = str(args.get("mode") or "preflight")
        doc = report(results, mode=mode, profile=args.get("profile"), extra=extra)
        order = {host: index for index, host in enumerate(results)}
        findings = sorted(aggregate(results) + extra, key=lambda f: order.get(f.host, len(order)))
        table = render_table(findings, include_ok=bool(args.get("include_ok")))
        json_path = args.get("json_path")
        if json_path:
            result["json_path"] = _write_json(str(json_path), doc)
        counts = doc["counts"]
        summary = (f"sglang {mode}: {doc['status']} ({counts['fail']} failures, {counts['warn']} warnings, "
                   f"{len(results)} hosts)")
        stop = stops(doc["exit_code"], fail_on)
        result.update(changed=False, status=doc["status"], exit_code=doc["exit_code"], counts=counts, table=table,
                      problems=doc["problems"], stop=stop, msg=summary, hosts=list(results))
        if stop and fail_task:
            result["failed"] = True
            result["msg"] = summary + "\n" + "\n".join(table)
        return result


def _with_pings(results: dict, hostvars, ping_var: str) -> dict:
    """Each host's result with the findings of the pings it ran."""
    results = dict(results)
    # The pings each host ran join its own findings (a host without a ping result ran none); a ping call
    # that failed or lost its host is a failure of that host, not a clean table.
    for host in results:
        pinged = _result(hostvars, host, ping_var)
        if results[host] is not None and pinged and not pinged.get("skipped"):
            results[host] = dict(results[host], findings=list(results[host].get("findings") or [])
                                 + [f.as_dict() for f in host_result_findings(host, pinged)])
    return results


def _with_looks(results: dict, hostvars, key: str) -> dict:
    """The hosts with findings: each with its own result, or, where it has none at all (deploy.yml's stack play did
    not run for it), the checks of that name its preflight result holds (``stack``: the stack as preflight's call
    saw it, on a host with nothing to install). A host with neither is not reported."""
    out = {}
    for host, own in results.items():
        if own is None:
            preflight = _result(hostvars, host, "sglang_preflight_result") or {}
            own = dict(preflight[key]) if isinstance(preflight.get(key), dict) else None
        if own is not None and "findings" in own:
            out[host] = own
    return out


def _write_json(json_path: str, doc: dict) -> str:
    """Writes the report as JSON, replacing the file whole; returns its absolute path."""
    path = os.path.abspath(os.path.expanduser(json_path))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp_path = path + ".tmp"
    with open(tmp_path, "w", encoding="utf-8") as handle:
        json.dump(doc, handle, indent=2, sort_keys=True, default=str)
        handle.write("\n")
    os.replace(tmp_path, path)
    return path
