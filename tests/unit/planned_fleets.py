"""Real plans of small fleets, shared by the controller-side tests of instances and status (pure Python: the
planner on a bundled profile, no host, no Ansible)."""

from __future__ import annotations

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._planner import plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import load_profile
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._topology import build_inventory


def make_plan(profile_id: str, groups: dict[str, list[str]], variables: dict | None = None) -> dict:
    hostvars = {}
    n = 10
    for names in groups.values():
        for name in names:
            n += 1
            hostvars[name] = {"sglang_host_ip": f"10.0.0.{n}", "sglang_nic": "eth0"}
    full = {"prefill": [], "decode": [], "mixed": [], "router": [], **groups}
    variables = {"sglang_model_path": "/m", "sglang_draft_model_path": "/d", **(variables or {})}
    return plan(load_profile(profile_id), build_inventory(full, hostvars, variables)).as_dict()


PD = make_plan("deepseek_r1_pd32", {"prefill": ["p0", "p1"], "decode": ["d0", "d1"], "router": ["r0"]})
PD_RUST = make_plan("deepseek_r1_pd32", {"prefill": ["p0", "p1"], "decode": ["d0", "d1"], "router": ["r0"]},
                    {"sglang_overrides": {"router": {"args": {"--mini-lb": None}}}})
MIXED = make_plan("qwen3_32b_a3_2c_mixed_2k_2k_50ms", {"mixed": ["m0", "m1"], "router": ["r0"]})
