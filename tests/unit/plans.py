"""Plans of documented profiles on generated inventories, for the unit tests (no Ansible)."""

from __future__ import annotations

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._planner import plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import load_profile
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._topology import build_inventory


def make_plan(profile_id, variables=None, **groups):
    """``groups``: role -> host count; hosts get consecutive addresses and a NIC; ``variables``: deployment
    variables besides the model paths. Returns (profile, plan dict)."""
    names, hostvars = {}, {}
    for role, count in groups.items():
        names[role] = [f"{role}{i}" for i in range(count)]
        for i, name in enumerate(names[role]):
            hostvars[name] = {"sglang_host_ip": f"10.0.{len(names)}.{i + 1}", "sglang_nic": "ens1"}
    variables = {"sglang_model_path": "/models/m", "sglang_draft_model_path": "/models/draft", **(variables or {})}
    profile = load_profile(profile_id)
    return profile, plan(profile, build_inventory(names, hostvars, variables)).as_dict()
