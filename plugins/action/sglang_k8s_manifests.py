# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Controller-side Kubernetes export: plans the profile on Kubernetes and writes one manifest per object."""

from __future__ import annotations

import os

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.ascend.sglang.plugins.module_utils.files._atomic_files import place_all
from ansible_collections.ascend.sglang.plugins.plugin_utils.targets import _k8s_export, _k8s_manifests
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import Collector, PlanError
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _settings
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._inputs import UNREADABLE, read_inventory, template_reader
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._output_dir import ForeignFiles, refuse_foreign
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._serialize import plain


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("profile", "dest", "profiles_dir"))
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super().run(tmp, task_vars)
        args = plain(self._task.args)  # plain Python: Ansible's tagged types reach no writer
        errors = Collector()
        # The run's sglang_* values through the settings table, as plan.yml reads the play's (no host is planned).
        read = template_reader(self._templar, errors)
        variables = read_inventory({}, {}, task_vars, read, errors)[1]
        # The options where a caller gives them, else the run's values through the table (kubernetes.yml passes
        # none: no Jinja default beside the table's).
        for option, name in (("profile", "sglang_profile"), ("dest", "sglang_k8s_dir"),
                             ("profiles_dir", "sglang_profiles_dir")):
            if not args.get(option):
                args[option] = _settings.one_value(name, variables, errors)
        if not args.get("profile"):
            raise AnsibleActionFail("variable 'sglang_profile' is not set: pass -e sglang_profile=<id>")
        if not args.get("dest"):
            raise AnsibleActionFail("variable 'sglang_k8s_dir' is not set: pass -e sglang_k8s_dir=DIR")
        nic = read(task_vars, "sglang_nic", None) if "sglang_nic" in task_vars else None
        try:
            exported = _k8s_export.export(str(args["profile"]), variables, None if nic is UNREADABLE else nic, errors,
                                          args.get("profiles_dir"))
        except PlanError as exc:
            result.update(failed=True, msg=exc.render("sglang Kubernetes export"), findings=exc.as_dicts())
            return result
        base = os.path.abspath(os.path.expanduser(str(args["dest"])))
        files = [{"path": os.path.join(base, _k8s_manifests.file_name(obj)), "data": _k8s_manifests.dump(obj, exported.plan.profile),
                  # The manifests hold the services' environment (never a secret's value): not world-readable.
                  "mode": 0o640, "sensitive": False} for obj in exported.objects]
        try:
            refuse_foreign(base, [f["path"] for f in files], "sglang_k8s_dir", "export")
        except ForeignFiles as exc:
            raise AnsibleActionFail(str(exc)) from None
        try:
            placed = place_all([{"path": base, "mode": 0o750}], files, bool(self._task.check_mode),
                               bool(self._task.diff))
        except OSError as exc:
            raise AnsibleActionFail(f"writing sglang_k8s_dir failed: {exc}") from None
        rows = [{"path": f["path"], "kind": obj["kind"], "name": obj["metadata"]["name"], "changed": placed_file["changed"]}
                for f, obj, placed_file in zip(files, exported.objects, placed["files"])]
        result.update(changed=bool(placed["changed"]), files=rows, kind=exported.options.workload.kind,
                      msg=f"{len(rows)} manifests ({exported.options.workload.kind}) in {base}, "
                          f"{sum(1 for r in rows if r['changed'])} changed")
        if placed.get("diff"):
            result["diff"] = placed["diff"]
        return result
