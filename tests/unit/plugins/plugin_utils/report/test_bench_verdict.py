"""The benchmark's verdict on the controller: the measured figures against a profile's published ones and target,
the table, and the PNG chart.  Pure Python, no host, no Ansible."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

from ansible_collections.ascend.sglang.plugins.module_utils.bench._bench import command, parse_result
from ansible_collections.ascend.sglang.plugins.plugin_utils.report._bench_verdict import evaluate, figures, render_table
from ansible_collections.ascend.sglang.plugins.plugin_utils.report._png import FONT, bench_chart, encode_png
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import available_profiles, load_profile

FIXTURES = Path(__file__).resolve().parents[4] / "fixtures" / "bench"
# The plan's bench.flags of the documented command.
FLAGS = [["--dataset-name", ["random"]], ["--backend", ["sglang"]], ["--host", ["127.0.0.1"]], ["--port", ["6688"]],
         ["--max-concurrency", ["832"]], ["--num-prompts", ["3328"]], ["--random-range-ratio", ["1"]]]


def fixture(name: str) -> str:
    return (FIXTURES / f"{name}.txt").read_text()


def ran(text: str, overrides=None) -> dict:
    """The module's ``parsed``: the result block and the prompts its command sent."""
    return dict(parse_result(text), num_prompts=command("python3", "sglang.bench_serving", FLAGS, overrides)[1])


def verdict_for(text: str, overrides=None, profile_id="deepseek_r1_a3_32c_pd_3k5_1k5_50ms", tolerance=0.10):
    profile = load_profile(profile_id)
    return evaluate(ran(text, overrides=overrides), cards=profile.cards, tpot_target_ms=profile.tpot_target_ms,
                    published=profile.published.get("figures"), tolerance=tolerance)


def test_published_result_passes_with_ratio_one() -> None:
    verdict = verdict_for(fixture("colon_ptot_typo"))
    assert verdict["passed"], verdict["failures"]
    assert {r["figure"]: r["ratio"] for r in verdict["comparison"]} == {
        "mean_ttft_ms": 1.0, "mean_tpot_ms": 1.0, "mean_itl_ms": 1.0, "output_throughput_tok_s": 1.0,
        "output_tps_per_card": 1.0}
    assert verdict["figures"]["output_tps_per_card"] == round(12697.4868 / 32, 3)
    table = render_table(verdict)
    assert table[-1] == "PASS" and any(line.startswith("| Mean TPOT") for line in table)


def test_failed_requests_no_tokens_and_slow_tpot_fail() -> None:
    text = fixture("colon_ptot_typo").replace("Successful requests: 3328", "Successful requests: 3300")
    text = text.replace("Total generated tokens (retokenized): 4992000", "Total generated tokens: 0")
    text = text.replace("Mean PTOT (ms): 48.10", "Mean TPOT (ms): 55.01")
    verdict = verdict_for(text)
    assert not verdict["passed"]
    assert verdict["failures"] == [
        "28 of 3328 requests failed (successful requests: 3300)",
        "no output tokens were generated (total generated tokens: 0)",
        "mean TPOT 55.01 ms exceeds the target 50 ms (the profile) by more than 10% (limit 55 ms)"]
    assert verdict_for(text.replace("55.01", "55.00"))["failures"][-1].startswith("no output tokens")
    assert verdict_for(fixture("colon_ptot_typo"), tolerance=0.0)["passed"]  # 48.10 <= 50


def test_a_stricter_operator_target_is_named_in_the_failure() -> None:
    profile = load_profile("deepseek_r1_a3_32c_pd_3k5_1k5_50ms")
    verdict = evaluate(ran(fixture("colon_ptot_typo")), cards=profile.cards, tpot_target_ms=40,
                       published=profile.published.get("figures"), target_source="sglang_bench_tpot_target_ms")
    assert verdict["failures"] == ["mean TPOT 48.1 ms exceeds the target 40 ms (sglang_bench_tpot_target_ms) by "
                                   "more than 10% (limit 44 ms)"]
    assert verdict["tpot_limit_ms"] == 44.0 and verdict["tpot_target_source"] == "sglang_bench_tpot_target_ms"


def test_a_ttft_target_is_held_to_and_needs_no_tpot() -> None:
    """A configuration measured by its first token (MiMo's 'TTFT 5s', output 1 token): mean TTFT against the
    target with the tolerance; without a TPOT target a missing TPOT figure is no failure."""
    profile = load_profile("deepseek_r1_a3_32c_pd_3k5_1k5_50ms")
    parsed = ran(fixture("colon_ptot_typo"))
    ttft = parsed["metrics"]["mean_ttft_ms"]
    kept = evaluate(parsed, cards=profile.cards, tpot_target_ms=0, ttft_target_ms=ttft, published={})
    assert kept["passed"] and kept["ttft_limit_ms"] == round(ttft * 1.1, 3) and kept["tpot_limit_ms"] is None
    assert render_table(kept)[-2].endswith(f"TTFT target {ttft:g} ms (+10%: limit {ttft * 1.1:g} ms)")
    missed = evaluate(parsed, cards=profile.cards, tpot_target_ms=0, ttft_target_ms=ttft / 2, published={},
                      ttft_source="sglang_bench_ttft_target_ms")
    assert missed["failures"] == [f"mean TTFT {ttft:g} ms exceeds the target {ttft / 2:g} ms "
                                  f"(sglang_bench_ttft_target_ms) by more than 10% (limit {ttft / 2 * 1.1:g} ms)"]
    no_tpot = {**parsed, "metrics": {k: v for k, v in parsed["metrics"].items() if "tpot" not in k}}
    assert evaluate(no_tpot, cards=profile.cards, tpot_target_ms=0, ttft_target_ms=ttft, published={})["passed"]
    # Both targets: both are held to.
    both = evaluate(parsed, cards=profile.cards, tpot_target_ms=40, ttft_target_ms=ttft / 2, published={})
    assert [f.split(" ms")[0] for f in both["failures"]] == ["mean TPOT 48.1", f"mean TTFT {ttft:g}"]


def test_num_prompts_comes_from_the_command_that_ran() -> None:
    assert verdict_for(fixture("colon_ptot_typo"), overrides={"--num-prompts": 4000})["failures"] == [
        "672 of 4000 requests failed (successful requests: 3328)"]
    # A result without the count (no module run) is held to bench_serving's default.
    profile = load_profile("deepseek_r1_a3_32c_pd_3k5_1k5_50ms")
    verdict = evaluate(parse_result(fixture("colon_ptot_typo")), cards=profile.cards, tpot_target_ms=50, published={})
    assert verdict["num_prompts"] == 1000 and verdict["passed"]


def test_missing_figures_are_reported_not_guessed() -> None:
    verdict = verdict_for("== Serving Benchmark Result ==\nBackend: sglang\nMean TTFT (ms): 5\n")
    assert "the result has no 'Successful requests' figure" in verdict["failures"]
    assert "the result has no mean TPOT figure" in verdict["failures"]
    assert figures({}, 8)["output_tps_per_card"] is None


def test_profile_without_published_figures_has_no_ratio() -> None:
    verdict = verdict_for(fixture("aligned"), profile_id="qwen3_5_397b_a3_8c_mixed_3k5_1k5_20ms",
                          overrides={"--num-prompts": 32})
    assert all(r["published"] is None and r["ratio"] is None for r in verdict["comparison"])
    assert verdict["passed"]  # 19.81 ms under the 20 ms target


def test_every_profiles_published_tpot_is_within_the_default_tolerance() -> None:
    for pid in available_profiles():
        profile = load_profile(pid)
        tpot = (profile.published.get("figures") or {}).get("mean_tpot_ms")
        if tpot is not None and profile.tpot_target_ms:
            assert tpot <= profile.tpot_target_ms * 1.10, pid


def _decode_png(data: bytes) -> tuple[int, int, bytes]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, size = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        assert struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])[0] == zlib.crc32(kind + body)
        if kind == b"IHDR":
            size = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    assert size is not None
    return size[0], size[1], zlib.decompress(idat)


def test_png_encoder_round_trips() -> None:
    rows = [bytes([10 * y, 20, 30, 40, 50, 60, 70, 80, 90]) for y in range(2)]
    width, height, raw = _decode_png(encode_png(3, 2, rows))
    assert (width, height) == (3, 2) and raw == b"".join(b"\x00" + r for r in rows)


def test_chart_draws_measured_and_published_bars() -> None:
    verdict = verdict_for(fixture("colon_ptot_typo"))
    width, height, raw = _decode_png(bench_chart("deepseek r1", verdict["comparison"], "PASS"))
    assert (width, height) == (760, 400)
    pixels = raw.replace(b"\x00", b"")  # crude, but the bar colours must be present
    assert bytes((31, 119, 180)) in raw and bytes((150, 150, 150)) in raw and len(pixels) > 0
    assert all(len(row) == 7 and all(len(r) == 5 for r in row) for row in FONT.values())


def test_per_card_counts_the_cards_the_servers_occupy() -> None:
    # A3: 16 dies = 8 cards per node; the A2 Qwen3-32B runs use 4 of a node's 8 NPUs (--base-gpu-id 4).
    assert load_profile("deepseek_r1_pd32").cards_used() == 32  # 2 prefill nodes + one 2-node decode instance
    assert load_profile("qwen3_32b_a3_2c_mixed_2k_2k_50ms").cards_used() == 2
    a2_half = load_profile("qwen3_32b_a2_8c_mixed_2k_2k_50ms")
    assert a2_half.cards == 8 and a2_half.cards_used() == 4
    assert a2_half.cards_used({"mixed": 6}) == 24  # a fleet of six replicas
    assert load_profile("qwen3_32b_a2_8c_mixed_6k_1k5_18ms").cards_used() == 8
