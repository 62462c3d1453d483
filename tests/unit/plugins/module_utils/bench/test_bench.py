"""The benchmark run on the entry host: argv overrides and the result-block parser (published samples with
different formatting).  Pure Python, no host, no Ansible."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.ascend.sglang.plugins.module_utils.bench._bench import (
    BenchParseError, apply_overrides, command, parse_all, parse_result,
)

FIXTURES = Path(__file__).resolve().parents[4] / "fixtures" / "bench"
# The plan's bench.flags ([flag, [values...]] pairs) and the argv they make.
FLAGS = [["--dataset-name", ["random"]], ["--backend", ["sglang"]], ["--host", ["127.0.0.1"]], ["--port", ["6688"]],
         ["--max-concurrency", ["832"]], ["--num-prompts", ["3328"]], ["--random-range-ratio", ["1"]]]
ARGV = ["python3", "-m", "sglang.bench_serving", "--dataset-name", "random", "--backend", "sglang", "--host",
        "127.0.0.1", "--port", "6688", "--max-concurrency", "832", "--num-prompts", "3328",
        "--random-range-ratio", "1"]


def fixture(name: str) -> str:
    return (FIXTURES / f"{name}.txt").read_text()


# (fixture, completed, mean TTFT, mean TPOT, mean ITL, output tok/s, total generated tokens)
SAMPLES = [
    ("colon_ptot_typo", 3328, 10170.34, 48.10, 122.53, 12697.4868, None),
    ("aligned", 32, 5149.34, 19.81, 19.81, 1181.31, 51200),
    ("stray_backend_before_header", 32, 2655.44, 19.52, 19.52, 1163.59, 32000),
    ("backend_without_colon", 1024, 10273.92, 49.67, 49.67, 4227.20, 2097152),
    ("header_on_own_line", 1536, 9784.06, 49.42, 49.43, 5784.88, None),
    ("long_tpot_label_duplicate", 64, 39313.10, 25.52, 25.36, 471.68, None),
    ("blank_lines_between_sections", 32, 11544.97, 16.46, 16.46, 1184.62, 48000),
    ("full_run_reference_image", 1152, 14567.54, 50.81, 50.81, 4740.67, 1728000),
]


@pytest.mark.parametrize("name,completed,ttft,tpot,itl,out,tokens", SAMPLES, ids=[s[0] for s in SAMPLES])
def test_published_samples_parse(name, completed, ttft, tpot, itl, out, tokens) -> None:
    m = parse_result(fixture(name))["metrics"]
    assert m["completed"] == completed
    assert (m["mean_ttft_ms"], m["mean_tpot_ms"], m["mean_itl_ms"], m["output_throughput"]) == (ttft, tpot, itl, out)
    assert m.get("total_output_tokens") == tokens
    assert m["backend"] in ("sglang", "sqlang")
    assert m["max_itl_ms"] > 0 and "median_ttft_ms" in m


def test_block_ends_at_the_next_document_heading() -> None:
    parsed = parse_result(fixture("header_on_own_line"))
    assert parsed["unknown"] == {} and parsed["metrics"]["max_itl_ms"] == 672.12
    assert parse_result(fixture("colon_ptot_typo"))["unknown"] == {}


def test_bench_servings_own_label_wins_over_the_long_one() -> None:
    parsed = parse_result(fixture("long_tpot_label_duplicate"))
    assert parsed["metrics"]["mean_tpot_ms"] == 25.52
    assert "Mean Time per Output Token (excl. 1st token) (ms)" in parsed["duplicates"]


def test_inf_request_rate_stays_text_and_retokenized_is_separate() -> None:
    m = parse_result(fixture("full_run_reference_image"))["metrics"]
    assert m["request_rate"] == "inf" and m["total_output_tokens_retokenized"] == 1721695
    assert m["p95_itl_ms"] == 104.69 and "accept_length" not in m


@pytest.mark.seeds
def test_every_block_of_the_documents_parses() -> None:
    import seeddoc

    blocks = parse_all(seeddoc.document("000_*.txt").read_text())
    assert len(blocks) == 23
    assert all(b["metrics"].get("mean_ttft_ms") and b["metrics"].get("output_throughput") for b in blocks)


def test_no_block_is_an_error() -> None:
    with pytest.raises(BenchParseError):
        parse_result("Traceback (most recent call last):\nConnectionRefusedError\n")
    with pytest.raises(BenchParseError):
        parse_result("============ Serving Benchmark Result ============\n\n")


def test_overrides_replace_append_remove_and_keep_order() -> None:
    overrides = {"--num-prompts": 64, "--dataset-name": "random-ids", "--random-range-ratio": None,
                 "--tokenizer": "/data/tok", "--disable-tqdm": True, "--extra-request-body": ["a", "b"]}
    argv, prompts = command("/opt/sglang/bin/python3", "sglang.bench_serving", FLAGS, overrides)
    assert prompts == 64
    assert argv[:3] == ["/opt/sglang/bin/python3", "-m", "sglang.bench_serving"]
    assert argv[3:5] == ["--dataset-name", "random-ids"]
    assert "--random-range-ratio" not in argv
    assert argv[-6:] == ["--tokenizer", "/data/tok", "--disable-tqdm", "--extra-request-body", "a", "b"]
    assert apply_overrides(FLAGS, overrides)[-2:] == [("--disable-tqdm", []), ("--extra-request-body", ["a", "b"])]
    assert command("python3", "sglang.bench_serving", FLAGS, {}) == (ARGV, 3328)
    # bench_serving's default without --num-prompts
    assert command("python3", "sglang.bench_serving", FLAGS, {"--num-prompts": None}) == (ARGV[:13] + ARGV[15:], 1000)
    assert apply_overrides(FLAGS, {}) == [tuple(pair) for pair in FLAGS]
    with pytest.raises(ValueError, match="--num-prompts .'many'.: a number of prompts"):
        command("python3", "sglang.bench_serving", FLAGS, {"--num-prompts": "many"})
    with pytest.raises(ValueError, match="not a .flag, .values"):
        command("python3", "sglang.bench_serving", [["--port", "6688"]], {})


@pytest.mark.parametrize("bad", ["num-prompts", "-n", "--"])
def test_overrides_need_full_flag_names(bad: str) -> None:
    with pytest.raises(ValueError, match="full '--names'"):
        apply_overrides(FLAGS, {bad: 1})
