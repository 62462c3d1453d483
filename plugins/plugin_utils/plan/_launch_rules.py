# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Semantic rules of one server role's launch, checked for the whole plan before any host changes.

Each rule is a pure function of the role's flags and environment (after inventory overrides)
and reports through the shared Collector with the group, and the flag or variable, at fault.
The rules encode constraints of SGLang and of the Ascend parameter guide; every documented
configuration satisfies them (tests/unit/plugins/plugin_utils/plan/test_launch_rules.py checks that).
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import Collector

# DeepEP's hard upper bound for SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK (parameter guide).
DEEPEP_MAX_DISPATCH_LIMIT = 1024


def _num(args: Mapping[str, Any], flag: str, default: float | None = None) -> float | None:
    value = args.get(flag, default)
    if value is None or value is True:
        return default
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def check_role(role: str, args: Mapping[str, Any], env: Mapping[str, str], errors: Collector) -> None:
    """All rules for one server role (prefill, decode or mixed)."""
    _parallelism(role, args, errors)
    _memory(role, args, errors)
    _speculative(role, args, env, errors)
    _deepep(role, args, env, errors)


def _parallelism(role: str, args: Mapping[str, Any], errors: Collector) -> None:
    tp = _num(args, "--tp-size", 1)
    dp_attention = args.get("--enable-dp-attention") is True
    dp = _num(args, "--dp-size", 1)
    if dp is None or dp < 1 or dp != int(dp):
        errors.add(f"--dp-size must be a positive integer, got {args.get('--dp-size')!r}", group=role,
                   variable="--dp-size")
        return
    if dp_attention and tp and tp % dp:
        errors.add(f"--dp-size {int(dp)} does not divide --tp-size {int(tp)}: DP attention splits the TP group "
                   "into equal DP ranks", group=role, variable="--dp-size")
    # SGLang turns --enable-dp-lm-head (and DP attention) off at --dp-size 1, as the current pages run it on
    # prefill and mixed servers; with more DP ranks it refuses the switch without DP attention.
    if args.get("--enable-dp-lm-head") is True and not dp_attention and dp > 1:
        errors.add(f"--enable-dp-lm-head needs --enable-dp-attention at --dp-size {int(dp)} (SGLang refuses it "
                   "otherwise)", group=role, variable="--enable-dp-lm-head")
    if "--moe-dense-tp-size" in args:
        dense = _num(args, "--moe-dense-tp-size")
        if dense != 1:
            errors.add(f"--moe-dense-tp-size {args['--moe-dense-tp-size']!r}: SGLang supports only 1 (the dense "
                       "MLP layers are not split); remove the flag to use the TP size", group=role,
                       variable="--moe-dense-tp-size")


def _memory(role: str, args: Mapping[str, Any], errors: Collector) -> None:
    if "--mem-fraction-static" in args:
        frac = _num(args, "--mem-fraction-static")
        if frac is None or not 0 < frac < 1:
            errors.add(f"--mem-fraction-static must be between 0 and 1 (exclusive), got "
                       f"{args['--mem-fraction-static']!r}", group=role, variable="--mem-fraction-static")
    running = args.get("--max-running-requests")
    if running is not None and (_num(args, "--max-running-requests") or 0) < 1:
        errors.add(f"--max-running-requests must be >= 1, got {running!r}", group=role,
                   variable="--max-running-requests")


def _speculative(role: str, args: Mapping[str, Any], env: Mapping[str, str], errors: Collector) -> None:
    algo = args.get("--speculative-algorithm")
    if algo is None:
        for flag in ("--speculative-draft-model-path", "--speculative-num-steps", "--speculative-num-draft-tokens"):
            if flag in args:
                errors.add(f"{flag} without --speculative-algorithm", group=role, variable=flag)
        return
    if algo == "EAGLE3" and not args.get("--speculative-draft-model-path"):
        errors.add("EAGLE3 needs a draft model: --speculative-draft-model-path (sglang_draft_model_path)",
                   group=role, variable="--speculative-draft-model-path")
    topk = _num(args, "--speculative-eagle-topk")
    steps = _num(args, "--speculative-num-steps")
    draft = _num(args, "--speculative-num-draft-tokens")
    if env.get("SGLANG_ENABLE_SPEC_V2") == "1":
        if topk != 1:
            errors.add(f"SGLANG_ENABLE_SPEC_V2=1 (the SpecV2 overlap scheduler) needs --speculative-eagle-topk 1, "
                       f"got {args.get('--speculative-eagle-topk')!r}", group=role, variable="--speculative-eagle-topk")
        # No rule ties SGLANG_ENABLE_OVERLAP_PLAN_STREAM to it: SpecV2 runs its planning on the default stream
        # without the variable (eagle_worker_v2._get_plan_stream), and the current pages run SpecV2 with it at 0.
    if topk == 1 and steps is not None and draft is not None and draft != steps + 1:
        errors.add(f"with --speculative-eagle-topk 1, --speculative-num-draft-tokens must be "
                   f"--speculative-num-steps + 1 = {int(steps) + 1}, got {int(draft)}", group=role,
                   variable="--speculative-num-draft-tokens")


def dispatch_tokens_needed(args: Mapping[str, Any]) -> int:
    """Tokens one device dispatches per DeepEP low-latency step at full load.

    Every running request contributes its draft tokens (1 without speculation) and the batch is
    spread over all --tp-size devices (DP ranks, and the attention-TP ranks inside each, scatter
    their tokens before the MoE all-to-all). Every documented configuration with the variable set
    satisfies this bound, most of them with equality (e.g. 832 x 3 / 32 = 78, 384 x 4 / 16 = 96).
    """
    running = _num(args, "--max-running-requests", 0) or 0
    draft = (_num(args, "--speculative-num-draft-tokens", 1) or 1) if args.get("--speculative-algorithm") else 1
    tp = _num(args, "--tp-size", 1) or 1
    return math.ceil(running * draft / tp)


def _deepep(role: str, args: Mapping[str, Any], env: Mapping[str, str], errors: Collector) -> None:
    var = "SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK"
    if var not in env or args.get("--moe-a2a-backend") != "deepep":
        return
    try:
        limit = int(env[var])
    except ValueError:
        errors.add(f"{var} must be an integer, got {env[var]!r}", group=role, variable=var)
        return
    if limit > DEEPEP_MAX_DISPATCH_LIMIT or limit < 0:
        errors.add(f"{var}={limit} exceeds DeepEP's hard limit of {DEEPEP_MAX_DISPATCH_LIMIT}", group=role,
                   variable=var)
    # Prefill's normal mode is not bounded by it (the guide: "large value or unbounded (0)").
    if str(args.get("--deepep-mode", "auto")) == "normal" or limit == 0:
        return
    needed = dispatch_tokens_needed(args)
    if needed > limit:
        errors.add(f"{var}={limit} is too small: --max-running-requests {args.get('--max-running-requests')} x "
                   f"draft tokens / --tp-size {args.get('--tp-size')} = {needed} tokens per device per dispatch",
                   group=role, variable=var)
