# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Writes a plan's Prometheus files (plugin_utils/targets/_monitoring.py): into a controller directory, or onto the task's
host in one call of sglang_place_files."""

from __future__ import annotations

import base64
import os

from ansible.errors import AnsibleActionFail
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase

from ansible_collections.ascend.sglang.plugins.module_utils.files._atomic_files import place_all
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import typed_plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.targets import _monitoring
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._serialize import plain


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("plan", "dest", "controller"))

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars or {})
        args = plain(self._task.args)  # plain Python: Ansible's tagged types reach no writer
        try:
            plan = typed_plan(args.get("plan"))
        except ValueError as exc:
            raise AnsibleActionFail(str(exc)) from None
        dest = str(args.get("dest") or "")
        controller = boolean(args.get("controller", False), strict=True)
        # What the operator set: errors name it.
        variable = "sglang_monitoring_dir" if controller else "sglang_monitoring_host_dir"
        if controller:
            dest = os.path.abspath(os.path.expanduser(dest))
            if os.path.lexists(dest) and not os.path.isdir(dest):
                raise AnsibleActionFail(f"{variable}: '{dest}' exists and is not a directory")
        if not os.path.isabs(dest):
            raise AnsibleActionFail(f"{variable}: an absolute directory, got {dest!r}")
        try:
            files = _monitoring.files(plan, dest.rstrip("/") or "/")
        except ValueError as exc:
            raise AnsibleActionFail(str(exc)) from None
        paths = {rel: os.path.join(dest, rel) for rel in files}
        directories = [dest] + sorted({os.path.dirname(p) for p in paths.values()} - {dest})
        # Nothing the collection did not write is replaced (the operator's prometheus.yml, another deployment's
        # targets): every such file is named, and nothing is written.
        self._refuse_foreign(paths, _monitoring.deployment(plan), dest, variable, controller, task_vars)
        if controller:
            try:
                placed = place_all([{"path": d, "mode": 0o755} for d in directories],
                                   [{"path": paths[rel], "data": text.encode("utf-8"), "mode": 0o644}
                                    for rel, text in files.items()],
                                   bool(self._task.check_mode), bool(self._task.diff))
            except OSError as exc:
                raise AnsibleActionFail(f"{variable} '{dest}': writing failed: {exc}") from None
        else:
            placed = self._execute_module(
                module_name="ascend.sglang.sglang_place_files",
                module_args={"directories": [{"path": d, "mode": "0755"} for d in directories],
                             "files": [{"path": paths[rel], "mode": "0644", "content": text}
                                       for rel, text in files.items()]},
                task_vars=task_vars)
            placed.pop("invocation", None)
            if placed.get("failed"):
                result.update(failed=True, msg=f"{variable} '{dest}': {placed.get('msg', 'placing the files failed')}")
                return result
        changed = sorted(f["path"] for f in placed.get("files", []) if f.get("changed"))
        result.update(changed=bool(placed.get("changed")), dest=dest, files=sorted(paths.values()),
                      files_changed=changed,
                      targets=sum(len(entries) for entries in _monitoring.targets(plan).values()),
                      msg=f"{len(files)} files in {dest}, {len(changed)} changed")
        if placed.get("diff"):
            result["diff"] = placed["diff"]
        return result

    def _refuse_foreign(self, paths, name, dest, variable, controller, task_vars):
        """Fails naming every file at ``paths`` that this deployment's files would replace but it did not write."""
        refused = []
        for rel, path in paths.items():
            existing = self._read_controller(path, variable) if controller else self._read_host(path, task_vars)
            why = None if existing is None else _monitoring.foreign(rel, existing, name)
            if why:
                refused.append(f"{path} {why}")
        if refused:
            raise AnsibleActionFail(f"{variable} '{dest}': {'; '.join(refused)}. Nothing was written: move the file "
                                    "away, write into another directory, or give this deployment another name "
                                    "(sglang_deployment).")

    @staticmethod
    def _read_controller(path, variable):
        """The file's text, None when there is none; a directory or an unreadable file is refused by name."""
        if not os.path.lexists(path):
            return None
        if os.path.isdir(path) or os.path.islink(path):
            raise AnsibleActionFail(f"{variable}: {path} is a directory or a link, not a file the collection wrote")
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                return handle.read()
        except OSError as exc:
            raise AnsibleActionFail(f"{variable}: {path} cannot be read: {exc}") from None

    def _read_host(self, path, task_vars):
        """The file's text on the task's host, None when there is none."""
        got = self._execute_module(module_name="ansible.builtin.slurp", module_args={"src": path},
                                   task_vars=task_vars)
        if got.get("failed"):
            return None  # absent (or unreadable: the write that follows says why)
        return base64.b64decode(got.get("content", "")).decode("utf-8", errors="replace")
