# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Closes a failure bundle on the controller: an index for every host that gave nothing, the plan (redacted), the
preflight's raw observations, the diagnosis (plugin_utils/forensics/_diagnosis.py), the bundle's index, then the archive
sglang-<profile>-<UTC time>.tar.gz (0600) in the collect directory. Returns the archive's path and the diagnosis."""

from __future__ import annotations

import os
import shutil

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.ascend.sglang.plugins.module_utils.collect._collect import Redactor
from ansible_collections.ascend.sglang.plugins.plugin_utils.forensics import _collect_bundle as bundle
from ansible_collections.ascend.sglang.plugins.plugin_utils.forensics import _diagnosis
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._serialize import plain


def _hostvar(hostvars, host: str, name: str, raw: bool = False):
    hv = hostvars.get(host) if hasattr(hostvars, "get") else None
    value = hv.get(name) if hv is not None and hasattr(hv, "get") else None
    if raw:
        return value
    return dict(value) if isinstance(value, dict) else None


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("plan", "bundle_dir", "collect_dir", "hosts", "failures", "preflight_vars",
                             "reasons"))
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super().run(tmp, task_vars)
        args = plain(self._task.args)  # plain Python: Ansible's tagged types reach no writer
        plan, bundle_dir = args.get("plan"), str(args.get("bundle_dir") or "")
        if args.get("collect_dir") in (None, ""):
            # Required: collect.yml passes the plan's sglang_collect_dir (the table holds its default).
            raise AnsibleActionFail("missing required arguments: collect_dir")
        collect_dir = os.path.abspath(os.path.expanduser(str(args["collect_dir"])))
        if not isinstance(plan, dict) or not isinstance(plan.get("hosts"), dict):
            raise AnsibleActionFail("plan: the deployment plan (sglang_plan)")
        if not os.path.isdir(bundle_dir):
            raise AnsibleActionFail(f"bundle_dir: not a directory on the controller: {bundle_dir!r}")
        if not os.path.isdir(collect_dir):
            raise AnsibleActionFail(f"sglang_collect_dir: {collect_dir} is not a directory on the controller")
        hosts = [str(h) for h in (args.get("hosts") or list(plan["hosts"]))]
        failures = [dict(f) for f in args.get("failures") or [] if isinstance(f, dict)]
        hostvars = task_vars.get("hostvars") or {}
        # Every host's sglang_secrets, read here (never a task argument a log could show).
        redactor = Redactor(bundle.secret_values([_hostvar(hostvars, h, "sglang_secrets", raw=True) for h in hosts]))
        try:
            missing = bundle.mark_missing(bundle_dir, hosts, dict(args.get("reasons") or {}))
            # What the preflight of this run saw (hccn_tool, npu-smi, pings): raw output, where it ran.
            for host in hosts:
                seen = {var: (_hostvar(hostvars, host, var) or {}).get("observed")
                        for var in args.get("preflight_vars") or []}
                seen = {var: value for var, value in seen.items() if value}
                if seen:
                    bundle.write_json(os.path.join(bundle.host_dir(bundle_dir, host), "preflight.json"),
                                      bundle.redacted(seen, redactor))
            bundle.write_json(os.path.join(bundle_dir, "plan.json"), bundle.redacted_plan(plan, redactor))
            failure_text = "\n".join(str(f.get("msg") or "") for f in failures)
            diagnosis = _diagnosis.diagnose(bundle.log_texts(bundle_dir, hosts), _diagnosis.load(),
                                            bundle.troubled_units(bundle_dir, hosts, failure_text))
            name = os.path.basename(bundle_dir.rstrip(os.sep))
            path = os.path.join(collect_dir, name + ".tar.gz")
            lines = _diagnosis.render(diagnosis, path)
            bundle.write_json(os.path.join(bundle_dir, "diagnosis.json"), diagnosis.as_dict())
            bundle.write_text(os.path.join(bundle_dir, "diagnosis.txt"), "\n".join(lines) + "\n")
            bundle.write_json(os.path.join(bundle_dir, "index.json"), {
                "profile": plan.get("profile"), "hosts": hosts, "not_collected": missing,
                "failures": [{k: redactor(str(v)) for k, v in f.items()} for f in failures]})
            size = bundle.archive(bundle_dir, path)
        except (OSError, ValueError) as exc:
            raise AnsibleActionFail(f"collecting the bundle: {exc}") from None
        shutil.rmtree(bundle_dir, ignore_errors=True)
        result.update(changed=False, archive=path, size=size, diagnosis=lines, not_collected=missing,
                      findings=[f.as_dict() for f in diagnosis.findings])
        return result
