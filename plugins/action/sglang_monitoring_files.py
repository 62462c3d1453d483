# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Writes a plan's Prometheus files (plugin_utils/_monitoring.py): into a controller directory, or onto the task's
host in one call of sglang_place_files."""

from __future__ import annotations

import os

from ansible.errors import AnsibleActionFail
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase

from ansible_collections.ascend.sglang.plugins.module_utils._atomic_files import place_all
from ansible_collections.ascend.sglang.plugins.plugin_utils import _monitoring


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("plan", "dest", "controller"))

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars or {})
        args = self._task.args
        plan = args.get("plan")
        if not isinstance(plan, dict) or not isinstance(plan.get("hosts"), dict):
            raise AnsibleActionFail("plan: the deployment plan (sglang_plan)")
        dest = str(args.get("dest") or "")
        controller = boolean(args.get("controller", False), strict=True)
        if controller:
            dest = os.path.abspath(os.path.expanduser(dest))
        if not os.path.isabs(dest):
            raise AnsibleActionFail(f"dest: an absolute directory, got {dest!r}")
        try:
            files = _monitoring.files(plan, dest.rstrip("/") or "/")
        except ValueError as exc:
            raise AnsibleActionFail(str(exc)) from None
        paths = {rel: os.path.join(dest, rel) for rel in files}
        directories = [dest] + sorted({os.path.dirname(p) for p in paths.values()} - {dest})
        if controller:
            try:
                placed = place_all([{"path": d, "mode": 0o755} for d in directories],
                                   [{"path": paths[rel], "data": text.encode("utf-8"), "mode": 0o644}
                                    for rel, text in files.items()],
                                   bool(self._task.check_mode), bool(self._task.diff))
            except OSError as exc:
                raise AnsibleActionFail(f"writing {dest} failed: {exc}") from None
        else:
            placed = self._execute_module(
                module_name="ascend.sglang.sglang_place_files",
                module_args={"directories": [{"path": d, "mode": "0755"} for d in directories],
                             "files": [{"path": paths[rel], "mode": "0644", "content": text}
                                       for rel, text in files.items()]},
                task_vars=task_vars)
            placed.pop("invocation", None)
            if placed.get("failed"):
                result.update(failed=True, msg=placed.get("msg", "placing the files failed"))
                return result
        changed = sorted(f["path"] for f in placed.get("files", []) if f.get("changed"))
        result.update(changed=bool(placed.get("changed")), dest=dest, files=sorted(paths.values()),
                      files_changed=changed,
                      targets=sum(len(entries) for entries in _monitoring.targets(plan).values()),
                      msg=f"{len(files)} files in {dest}, {len(changed)} changed")
        if placed.get("diff"):
            result["diff"] = placed["diff"]
        return result
