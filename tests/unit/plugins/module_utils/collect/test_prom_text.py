"""The Prometheus text format parser and an SGLang server's load read from its /metrics page (module
sglang_service_status). Pure Python, no host."""

from __future__ import annotations

import math
import re

import pytest

from ansible_collections.ascend.sglang.plugins.module_utils.collect._prom_text import (
    MAX_ERRORS, Sample, parse_text, sample_sum, server_load,
)

MODEL = 'org/Model "R1" \\ v\nx'
# An SGLang /metrics page as prometheus_client serves it in multiprocess mode (what SGLang runs with
# --enable-metrics): sorted labels, escaped label values, histogram _sum/_bucket/_count, two DP schedulers' gauges.
# @T@, @S@ and @M@ stand for the tokenizer's labels, the schedulers' and model_name alone: short lines here.
TOKENIZER_LABELS = r'engine_type="unified",model_name="org/Model \"R1\" \\ v\nx"'
SCHEDULER_LABELS = r'engine_type="unified",model_name="org/Model \"R1\" \\ v\nx",pp_rank="0",tp_rank="0"'
SGLANG_PAGE = """# HELP sglang:num_requests_total Number of requests processed.
# TYPE sglang:num_requests_total counter
sglang:num_requests_total{@T@} 42.0
# HELP sglang:inter_token_latency_seconds Histogram of inter-token latency in seconds.
# TYPE sglang:inter_token_latency_seconds histogram
sglang:inter_token_latency_seconds_sum{@T@} 0.44
sglang:inter_token_latency_seconds_bucket{engine_type="unified",le="0.002",@M@} 0.0
sglang:inter_token_latency_seconds_bucket{engine_type="unified",le="0.05",@M@} 8.0
sglang:inter_token_latency_seconds_bucket{engine_type="unified",le="0.1",@M@} 10.0
sglang:inter_token_latency_seconds_bucket{engine_type="unified",le="1.0",@M@} 10.0
sglang:inter_token_latency_seconds_bucket{engine_type="unified",le="+Inf",@M@} 10.0
sglang:inter_token_latency_seconds_count{@T@} 10.0
# HELP sglang:num_running_reqs The number of running requests.
# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{dp_rank="0",@S@} 3.0
sglang:num_running_reqs{dp_rank="1",@S@} 2.0
# HELP sglang:num_queue_reqs The number of requests in the waiting queue.
# TYPE sglang:num_queue_reqs gauge
sglang:num_queue_reqs{dp_rank="0",@S@} 1.0
sglang:num_queue_reqs{dp_rank="1",@S@} 0.0
# HELP sglang:cache_hit_rate The prefix cache hit rate.
# TYPE sglang:cache_hit_rate gauge
sglang:cache_hit_rate{dp_rank="0",@S@} NaN
""".replace("@T@", TOKENIZER_LABELS).replace("@S@", SCHEDULER_LABELS).replace(
    "@M@", TOKENIZER_LABELS.split(",", 1)[1])


def test_an_sglang_page_parses_with_its_labels_unescaped() -> None:
    page = parse_text(SGLANG_PAGE)
    assert page.errors == [] and page.skipped == 0 and len(page.samples) == 13
    assert page.types["sglang:inter_token_latency_seconds"] == "histogram"
    assert page.types["sglang:num_requests_total"] == "counter"
    running = [s for s in page.samples if s.name == "sglang:num_running_reqs"]
    assert running[1] == Sample("sglang:num_running_reqs", {"dp_rank": "1", "engine_type": "unified",
                                                            "model_name": MODEL, "pp_rank": "0", "tp_rank": "0"},
                                2.0, None)
    inf = [s for s in page.samples if s.labels.get("le") == "+Inf"]
    assert len(inf) == 1 and inf[0].value == 10.0
    assert math.isnan(next(s.value for s in page.samples if s.name == "sglang:cache_hit_rate"))
    assert sample_sum(page.samples, "sglang:num_queue_reqs") == 1.0
    assert sample_sum(page.samples, "sglang:cache_hit_rate") is None  # NaN: not set, no figure
    assert sample_sum(page.samples, "sglang:absent") is None


def test_the_load_of_an_sglang_server() -> None:
    """Gauges summed over the DP schedulers; TPOT = inter-token latency sum / count, in ms."""
    assert server_load(SGLANG_PAGE) == ({"running": 5, "queued": 1, "tpot_ms": 44.0, "requests": 42}, None)


def test_a_fresh_server_has_no_tpot_and_no_requests_yet() -> None:
    page = "\n".join(line for line in SGLANG_PAGE.splitlines()
                     if not line.startswith(("sglang:inter_token", "sglang:num_requests")))
    assert server_load(page) == ({"running": 5, "queued": 1, "tpot_ms": None, "requests": None}, None)
    zero = re.sub(r"(_count\{.*\}) 10\.0", r"\1 0.0", SGLANG_PAGE)
    assert zero != SGLANG_PAGE and server_load(zero)[0]["tpot_ms"] is None


def test_a_page_without_the_gauges_is_an_error_naming_them() -> None:
    page = "\n".join(line for line in SGLANG_PAGE.splitlines() if "num_queue_reqs" not in line)
    load, why = server_load(page)
    assert (load, why) == (None, "not reported yet: sglang:num_queue_reqs")
    assert server_load("") == (None, "not reported yet: sglang:num_running_reqs, sglang:num_queue_reqs")


def test_special_values_timestamps_comments_and_spacing() -> None:
    page = parse_text(
        "# a comment that is no HELP nor TYPE\r\n"
        "\n"
        "  # TYPE up gauge\n"
        "up 1 1712000000000\r\n"
        "neg{a=\"x\"} -Inf -5\n"
        "pos{a=\"y\",} +Inf\n"
        "nan NaN\n"
        "sci{ a = \"1\" , b=\"\" } 1.5e-3\n"
        "tab\t7\n"
        "{\"utf8.name\",le=\"0.5\"} 2\n"
        "unknown_escape{a=\"\\t\"} 1\n"
        "name_with:colons:{x=\"}{,=\"} 3\n")
    assert page.errors == []
    by_name = {s.name: s for s in page.samples}
    assert by_name["up"].timestamp == 1712000000000 and by_name["up"].value == 1.0
    assert page.types == {"up": "gauge"}
    assert by_name["neg"].value == -math.inf and by_name["neg"].timestamp == -5
    assert by_name["pos"].value == math.inf and by_name["pos"].labels == {"a": "y"}
    assert math.isnan(by_name["nan"].value)
    assert by_name["sci"].labels == {"a": "1", "b": ""} and by_name["sci"].value == 0.0015
    assert by_name["tab"].value == 7.0
    assert by_name["utf8.name"].labels == {"le": "0.5"}
    assert by_name["unknown_escape"].labels == {"a": "\\t"}
    assert by_name["name_with:colons:"].labels == {"x": "}{,="}


@pytest.mark.parametrize("line", [
    'cut{model_name="org/Mod',          # a page cut short inside a label value
    'cut{model_name="x"',               # ... before its closing brace
    'bad{1a="x"} 1',                     # a label name cannot start with a digit
    'bad{a=x} 1',                        # values are quoted
    'bad{a="x" b="y"} 1',                # labels are separated by commas
    'bad 1_000',                         # Python's float() takes this, Prometheus does not
    'bad 0x1p3 1 2',                     # too many fields
    'bad 1 1.5',                         # timestamps are integers
    'bad',                               # no value
    'bad{a="x"}',
    '<html><body>Not Found</body></html>',
    '{} 1',                              # no name at all
    'bad-name 1',
])
def test_a_broken_line_is_an_error_and_the_others_still_count(line: str) -> None:
    page = parse_text("good 1\n" + line + "\nafter 2\n")
    assert [s.name for s in page.samples] == ["good", "after"], page.samples
    assert page.skipped == 1 and page.errors[0].startswith("line 2: ")


def test_garbage_never_raises() -> None:
    garbage = "\x00\xff{{{\n" * 50 + '"\\' + "\n}" * 3
    page = parse_text(garbage)
    assert page.samples == [] and len(page.errors) == MAX_ERRORS and page.skipped > MAX_ERRORS
    load, why = server_load(garbage)
    assert load is None and why.startswith("not a metrics page? 54 unparsed lines, line 1: no metric name; no ")
    long_line = parse_text("x " + "9" * 100000 + " 1 2").errors[0]
    assert len(long_line) < 120 and long_line.endswith("...'")
    assert len(parse_text("x" * 100000).errors[0]) == 160
    assert parse_text(None).samples == []  # type: ignore[arg-type]
    # Whatever the figures, the result is JSON: no NaN, no Inf.
    inf = SGLANG_PAGE.replace('tp_rank="0"} 3.0', 'tp_rank="0"} +Inf').replace("} 0.44", "} NaN")
    assert server_load(inf) == ({"running": None, "queued": 1, "tpot_ms": None, "requests": 42}, None)


def test_prometheus_client_reads_the_sample_page_the_same_way() -> None:
    """The hand-written page is the real format: prometheus_client's own parser (a test tool, see
    scripts/setup.sh) agrees sample for sample; a page it writes parses here."""
    parser = pytest.importorskip("prometheus_client.parser")
    theirs = [(s.name, s.labels, s.value) for family in parser.text_string_to_metric_families(SGLANG_PAGE)
              for s in family.samples]
    ours = [(s.name, s.labels, s.value) for s in parse_text(SGLANG_PAGE).samples]
    assert len(theirs) == len(ours)
    for (name, labels, value), (o_name, o_labels, o_value) in zip(theirs, ours):
        assert (name, labels) == (o_name, o_labels)
        assert value == o_value or (math.isnan(value) and math.isnan(o_value))
    client = pytest.importorskip("prometheus_client")
    registry = client.CollectorRegistry()
    labels = {"model_name": MODEL, "engine_type": "unified", "tp_rank": "0", "pp_rank": "0", "dp_rank": "0"}
    client.Gauge("sglang:num_running_reqs", "Running.", list(labels), registry=registry).labels(**labels).set(4)
    client.Gauge("sglang:num_queue_reqs", "Queued.", list(labels), registry=registry).labels(**labels).set(2)
    histogram = client.Histogram("sglang:inter_token_latency_seconds", "ITL.", list(labels), registry=registry)
    for value in (0.02, 0.03):
        histogram.labels(**labels).observe(value)
    client.Counter("sglang:num_requests_total", "Requests.", list(labels), registry=registry).labels(**labels).inc(7)
    text = client.generate_latest(registry).decode()
    assert parse_text(text).errors == []
    assert server_load(text) == ({"running": 4, "queued": 2, "tpot_ms": 25.0, "requests": 7}, None)
