# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The ping plan of the preflight (which NPUs must reach which); the logic is in
plugins/plugin_utils/rollout/_fleet_checks.py (pure, unit-tested)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

# What a filter uses is imported when it runs (plugins/filter/sglang_operations.py says why: Ansible imports every
# filter file of the collection in each task's worker process).


def sglang_ping_plan(plan, results):
    """plan, host -> that host's preflight result => host -> the pings it runs (mode ping of sglang_preflight)."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import typed_plan
    from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._fleet_checks import ping_plan
    observed = {}
    for host, result in (results or {}).items():
        usable = isinstance(result, dict) and not result.get("failed") and not result.get("skipped")
        observed[str(host)] = result.get("observed") if usable else None
    try:
        typed = typed_plan(plan)
    except ValueError as exc:
        raise AnsibleFilterError(f"sglang_ping_plan: {exc}") from None
    return ping_plan(typed, observed)


class FilterModule:
    def filters(self):
        return {"sglang_ping_plan": sglang_ping_plan}
