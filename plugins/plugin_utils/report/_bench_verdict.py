# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The benchmark's verdict (action ascend.sglang.sglang_bench_report): the measured figures beside the profile's
published ones, every reason the run fails (failed requests, no tokens, mean TPOT or mean TTFT over its target),
and the table operators read.

Private to the collection; pure, no Ansible import. The figures come from the module's parse of the run
(module_utils/bench/_bench.py, on the entry host).
"""

from __future__ import annotations

from typing import Any, Mapping

from ansible_collections.ascend.sglang.plugins.module_utils.bench._bench import DEFAULT_NUM_PROMPTS
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._table import render

# Figures compared with a profile's published ones: (key in the figures, label, unit, higher is better).
FIGURES: tuple[tuple[str, str, str, bool], ...] = (
    ("mean_ttft_ms", "Mean TTFT", "ms", False),
    ("mean_tpot_ms", "Mean TPOT", "ms", False),
    ("mean_itl_ms", "Mean ITL", "ms", False),
    ("output_throughput_tok_s", "Output tok/s", "tok/s", True),
    ("output_tps_per_card", "Output tok/s per card", "tok/s", True),
)

# Default tolerance over the profile's TPOT (or TTFT) target: the published figures themselves exceed their
# target by up to 3 % (Qwen3-235B 8-card 3.5K-1.5K: 51.51 ms against 50 ms).
DEFAULT_TPOT_TOLERANCE = 0.10


def figures(metrics: Mapping[str, Any], cards: float) -> dict[str, float | None]:
    """The compared figures; output tok/s per card = output tok/s / the cards the servers use."""
    def num(key: str) -> float | None:
        value = metrics.get(key)
        return float(value) if isinstance(value, (int, float)) else None

    output = num("output_throughput")
    return {
        "mean_ttft_ms": num("mean_ttft_ms"),
        "mean_tpot_ms": num("mean_tpot_ms"),
        "mean_itl_ms": num("mean_itl_ms"),
        "output_throughput_tok_s": output,
        "output_tps_per_card": round(output / cards, 3) if output is not None and cards > 0 else None,
    }


def evaluate(parsed: Mapping[str, Any], *, cards: float, tpot_target_ms: float,
             published: Mapping[str, Any] | None, tolerance: float = DEFAULT_TPOT_TOLERANCE,
             target_source: str = "the profile", ttft_target_ms: float = 0,
             ttft_source: str = "the profile") -> dict[str, Any]:
    """Measured figures beside the published ones, and every reason the run fails. ``parsed`` is the module's
    (ascend.sglang.sglang_bench) result block with the prompts the command sent (``num_prompts``, from
    ``_bench.command``); ``target_source`` names where ``tpot_target_ms`` comes from (the profile, or an operator's
    stricter target), ``ttft_source`` the same for ``ttft_target_ms``.  Each target that is set (> 0) is held to
    with the tolerance; a run held to a TTFT target only (output 1 token: no inter-token latency) needs no TPOT
    figure."""
    metrics = parsed.get("metrics") or {}
    measured = figures(metrics, cards)
    pub = dict(published or {})
    rows = []
    for key, label, unit, higher in FIGURES:
        mine, theirs = measured.get(key), pub.get(key)
        theirs = float(theirs) if isinstance(theirs, (int, float)) else None
        ratio = round(mine / theirs, 3) if mine is not None and theirs else None
        rows.append({"figure": key, "label": label, "unit": unit, "higher_is_better": higher,
                     "measured": mine, "published": theirs, "ratio": ratio})
    failures: list[str] = []
    wanted = int(parsed.get("num_prompts") or DEFAULT_NUM_PROMPTS)
    completed = metrics.get("completed")
    if not isinstance(completed, int):
        failures.append("the result has no 'Successful requests' figure")
    elif completed < wanted:
        failures.append(f"{wanted - completed} of {wanted} requests failed (successful requests: {completed})")
    tokens = metrics.get("total_output_tokens", metrics.get("total_output_tokens_retokenized"))
    if not isinstance(tokens, (int, float)) or tokens <= 0:
        failures.append("no output tokens were generated (total generated tokens: "
                        f"{tokens if tokens is not None else 'missing'})")
    tpot = measured["mean_tpot_ms"]
    limit = round(tpot_target_ms * (1 + tolerance), 3) if tpot_target_ms else None
    if tpot is None and (tpot_target_ms or not ttft_target_ms):
        failures.append("the result has no mean TPOT figure")
    elif tpot is not None and limit is not None and tpot > limit:
        failures.append(f"mean TPOT {tpot:g} ms exceeds the target {tpot_target_ms:g} ms ({target_source}) by more "
                        f"than {tolerance:.0%} (limit {limit:g} ms)")
    ttft = measured["mean_ttft_ms"]
    ttft_limit = round(ttft_target_ms * (1 + tolerance), 3) if ttft_target_ms else None
    if ttft_limit is not None and ttft is None:
        failures.append("the result has no mean TTFT figure")
    elif ttft_limit is not None and ttft > ttft_limit:
        failures.append(f"mean TTFT {ttft:g} ms exceeds the target {ttft_target_ms:g} ms ({ttft_source}) by more "
                        f"than {tolerance:.0%} (limit {ttft_limit:g} ms)")
    return {"passed": not failures, "failures": failures, "figures": measured, "comparison": rows,
            "num_prompts": wanted, "completed": completed, "total_output_tokens": tokens,
            "tpot_target_ms": tpot_target_ms, "tpot_target_source": target_source, "tpot_tolerance": tolerance,
            "tpot_limit_ms": limit, "ttft_target_ms": ttft_target_ms, "ttft_target_source": ttft_source,
            "ttft_limit_ms": ttft_limit,
            "cards": cards}


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.2f}" if abs(value) < 1e6 else f"{value:,.0f}"


def render_table(verdict: Mapping[str, Any]) -> list[str]:
    """Figure | measured | published | ratio (measured / published), one row per figure, the numbers aligned
    right (plugin_utils/core/_table.py); then the counts and the target, and PASS or FAIL with every reason."""
    body = []
    for row in verdict["comparison"]:
        hint = "higher is better" if row["higher_is_better"] else "lower is better"
        body.append((f"{row['label']} ({row['unit']}, {hint})", _fmt(row["measured"]), _fmt(row["published"]),
                     "-" if row["ratio"] is None else f"{row['ratio']:.3f}"))
    out = render(("figure", "measured", "published", "ratio"), body, right=(1, 2, 3))
    targets = []
    for kind in ("tpot", "ttft"):
        target, limit = verdict.get(f"{kind}_target_ms"), verdict.get(f"{kind}_limit_ms")
        if target or (kind == "tpot" and not verdict.get("ttft_target_ms")):
            targets.append(f"{kind.upper()} target {target or 0:g} ms"
                           + (f" (+{verdict['tpot_tolerance']:.0%}: limit {limit:g} ms)" if limit is not None else ""))
    out.append(f"successful requests {verdict['completed']} / {verdict['num_prompts']}; "
               f"generated tokens {verdict['total_output_tokens']}; " + "; ".join(targets))
    out.append("PASS" if verdict["passed"] else "FAIL: " + "; ".join(verdict["failures"]))
    return out
