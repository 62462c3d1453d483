# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Filter for roles/sglang_service/tasks/install.yml; the logic is in plugins/plugin_utils/targets/_install.py
(pure but for listing the wheelhouse directory on the controller, unit-tested)."""

from __future__ import annotations

# What a filter uses is imported when it runs (plugins/filter/sglang_operations.py says why: Ansible imports every
# filter file of the collection in each task's worker process).


def sglang_install_plan(release, overrides=None, wheelhouse=""):
    """What sglang_server_install installs for ``release``: pins, wheels, left-out requirements, problems."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.targets._install import install_plan
    return install_plan(str(release), dict(overrides or {}), str(wheelhouse or ""))


class FilterModule:
    def filters(self):
        return {"sglang_install_plan": sglang_install_plan}
