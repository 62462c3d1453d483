"""Semantic rules: every documented configuration passes, each broken variant is named."""

from __future__ import annotations

import pytest

from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import Collector
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import available_profiles, load_profile
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._launch_rules import check_role, dispatch_tokens_needed


@pytest.mark.parametrize("pid", available_profiles())
def test_documented_configurations_satisfy_every_rule(pid):
    profile = load_profile(pid)
    for role in profile.server_roles:
        errors = Collector()
        check_role(role, profile.roles[role].args, profile.roles[role].env, errors)
        assert not errors.findings, [str(f) for f in errors.findings]


def test_deepep_reading_is_tight_on_the_documents():
    # The bound is met with equality by several documented decode / mixed servers.
    decode = load_profile("deepseek_r1_a3_32c_pd_3k5_1k5_50ms").roles["decode"]
    assert dispatch_tokens_needed(decode.args) == 78 == int(decode.env["SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK"])
    nextgen = load_profile("qwen3_next_a3_2c_mixed_3k5_1k5_50ms").roles["mixed"]
    assert dispatch_tokens_needed(nextgen.args) == 20  # no speculation: 80 requests x 1 / tp 4


BASE_ARGS = {"--tp-size": 16, "--dp-size": 16, "--enable-dp-attention": True, "--enable-dp-lm-head": True,
             "--moe-a2a-backend": "deepep", "--deepep-mode": "low_latency", "--max-running-requests": 384,
             "--mem-fraction-static": "0.8", "--speculative-algorithm": "NEXTN", "--speculative-num-steps": 3,
             "--speculative-eagle-topk": 1, "--speculative-num-draft-tokens": 4}
BASE_ENV = {"SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK": "96", "SGLANG_ENABLE_SPEC_V2": "1",
            "SGLANG_ENABLE_OVERLAP_PLAN_STREAM": "1"}


@pytest.mark.parametrize("args, env, variable", [
    ({"--dp-size": 12}, {}, "--dp-size"),
    ({"--dp-size": 0}, {}, "--dp-size"),
    ({"--enable-dp-attention": None}, {}, "--enable-dp-lm-head"),
    ({"--moe-dense-tp-size": 2}, {}, "--moe-dense-tp-size"),
    ({"--mem-fraction-static": "1.2"}, {}, "--mem-fraction-static"),
    ({"--mem-fraction-static": "0"}, {}, "--mem-fraction-static"),
    ({"--max-running-requests": 0}, {}, "--max-running-requests"),
    ({"--speculative-eagle-topk": 2}, {}, "--speculative-eagle-topk"),
    ({"--speculative-num-draft-tokens": 6}, {}, "--speculative-num-draft-tokens"),
    ({"--speculative-algorithm": "EAGLE3"}, {}, "--speculative-draft-model-path"),
    ({"--speculative-algorithm": None}, {}, "--speculative-num-steps"),
    ({}, {"SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK": "2048"}, "SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK"),
    ({}, {"SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK": "95"}, "SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK"),
    ({}, {"SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK": "many"}, "SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK"),
])
def test_broken_variants_are_named(args, env, variable):
    a = {k: v for k, v in {**BASE_ARGS, **args}.items() if v is not None}
    e = {k: v for k, v in {**BASE_ENV, **env}.items() if v is not None}
    errors = Collector()
    check_role("decode", a, e, errors)
    assert variable in {f.variable for f in errors.findings}, [str(f) for f in errors.findings]
    assert all(f.group == "decode" for f in errors.findings)


def test_base_variant_passes():
    errors = Collector()
    check_role("decode", BASE_ARGS, BASE_ENV, errors)
    assert not errors.findings


def test_dp_lm_head_at_one_dp_rank_is_left_to_sglang():
    """At --dp-size 1 SGLang turns --enable-dp-lm-head off itself (the current pages' GLM-5.1 prefill and Qwen3
    mixed servers run it so): no refusal; with more DP ranks and no DP attention it refuses the switch."""
    errors = Collector()
    args = {k: v for k, v in BASE_ARGS.items() if k not in ("--enable-dp-attention", "--dp-size")}
    check_role("decode", args, BASE_ENV, errors)
    assert not errors.findings


def test_prefill_normal_mode_is_not_bounded_by_the_dispatch_limit():
    errors = Collector()
    check_role("prefill", {**BASE_ARGS, "--deepep-mode": "normal"},
               {**BASE_ENV, "SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK": "1"}, errors)
    assert not errors.findings
