# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Copies a controller directory (a wheelhouse) to a host in one transfer: lists it, asks the host which files
differ (ascend.sglang.sglang_place_archive), and sends only those, in one uncompressed tar archive. A directory
copy with ansible.builtin.copy costs several round trips per file and host, whether the file changed or not."""

from __future__ import annotations

import os
import tarfile
import tempfile

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.ascend.sglang.plugins.plugin_utils.targets._wheelhouse_list import WheelhouseError, list_files

_MODULE = "ascend.sglang.sglang_place_archive"


class ActionModule(ActionBase):
    TRANSFERS_FILES = True
    _VALID_ARGS = frozenset(("src", "dest", "mode", "directory_mode"))

    def _place(self, task_vars, args, archive=None):
        module_args = dict(args, archive=archive) if archive else args
        got = self._execute_module(module_name=_MODULE, module_args=module_args, task_vars=task_vars)
        if got.get("failed"):
            raise AnsibleActionFail(got.get("msg", f"{_MODULE} failed"), result=got)
        return got

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super().run(tmp, task_vars)
        src, dest = self._task.args.get("src"), self._task.args.get("dest")
        if not src or not dest:
            raise AnsibleActionFail("src (a directory on the controller) and dest (a directory on the host) are required")
        try:
            files = list_files(str(src))
        except WheelhouseError as exc:
            raise AnsibleActionFail(f"src {src}: {exc}") from None
        args = {"dest": dest, "files": {name: {"size": f.size, "mtime": f.mtime} for name, f in files.items()}}
        for key in ("mode", "directory_mode"):
            if self._task.args.get(key) is not None:
                args[key] = str(self._task.args[key])
        # Round trip 1: what differs (in check mode, the answer).
        first = self._place(task_vars, args)
        transfer = first.get("transfer") or []
        result.update(changed=bool(first.get("changed")), transfer=transfer, chmod=first.get("chmod") or [],
                      written=[])
        if not transfer or self._task.check_mode:
            return result
        # Round trips 2 and 3: one archive of the differing files, placed by the module.
        fd, local = tempfile.mkstemp(prefix="sglang-wheelhouse-", suffix=".tar")
        os.close(fd)
        remote_tmp = self._make_tmp_path()
        try:
            with tarfile.open(local, mode="w:", format=tarfile.PAX_FORMAT) as tar:
                for name in transfer:
                    # A regular file member whatever the source is (a symbolic link to a wheel is followed).
                    info = tarfile.TarInfo(name)
                    info.size, info.mtime, info.mode = files[name].size, files[name].mtime, 0o644
                    with open(files[name].path, "rb") as handle:
                        tar.addfile(info, handle)
            remote = self._connection._shell.join_path(remote_tmp, "wheelhouse.tar")
            self._transfer_file(local, remote)
            self._fixup_perms2((remote_tmp, remote))
            second = self._place(task_vars, args, archive=remote)
        finally:
            os.unlink(local)
            self._remove_tmp_path(remote_tmp)
        result.update(changed=True, written=second.get("written") or [])
        return result
