"""The SGLang stand-in's --enable-metrics (tests/standins/sglang/sglang/launch_server.py) and its ranks > 0.

The stand-in runs as a process on 127.0.0.1; its /metrics is read with prometheus_client's own parser, printed again
by prometheus_client in SGLang's multiprocess mode for a byte-for-byte comparison, and its families are checked
against SGLang 0.5.6.post2's collector.py where tests/validation/setup_parsers.sh unpacked that release.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

parser = pytest.importorskip("prometheus_client.parser", reason="prometheus_client missing: run scripts/setup.sh")
from prometheus_client.utils import floatToGoString  # noqa: E402  (after the importorskip)
from local import BUCKETS, free_ports  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
STANDIN = ROOT / "tests" / "standins" / "sglang" / "sglang" / "launch_server.py"
RELEASE = "0.5.6.post2"
DEADLINE_S = 20
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# Families (as the parser names them) and types of collector.py 0.5.6.post2 that rank 0 serves once a request ended.
REQUIRED = {
    "sglang:num_running_reqs": "gauge", "sglang:num_queue_reqs": "gauge", "sglang:token_usage": "gauge",
    "sglang:gen_throughput": "gauge", "sglang:num_used_tokens": "gauge", "sglang:cache_hit_rate": "gauge",
    "sglang:prompt_tokens": "counter", "sglang:generation_tokens": "counter", "sglang:num_requests": "counter",
    "sglang:time_to_first_token_seconds": "histogram", "sglang:inter_token_latency_seconds": "histogram",
    "sglang:e2e_request_latency_seconds": "histogram",
}
TOKENIZER = {"sglang:prompt_tokens", "sglang:generation_tokens", "sglang:num_requests",
             "sglang:time_to_first_token_seconds", "sglang:inter_token_latency_seconds",
             "sglang:e2e_request_latency_seconds", "sglang:num_retractions"}


OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def http(url: str, body: dict | None = None) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and body of a GET (or a POST of body); -1 when nothing answers."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with OPENER.open(req, timeout=DEADLINE_S) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()
    except OSError:
        return -1, {}, b""


def wait_for(what: str, check) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"{what} not reached within {DEADLINE_S} s")


class Standins:
    """Starts stand-in processes on 127.0.0.1 and kills every one of them at the end."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.procs: list[subprocess.Popen] = []

    def start(self, *args: str, **env: str) -> tuple[subprocess.Popen, Path]:
        log = self.tmp / f"standin-{len(self.procs)}.log"
        environ = dict(os.environ, SGLANG_STANDIN_STATE_DIR=str(self.tmp), SGLANG_STANDIN_STARTUP_DELAY="0",
                       NO_PROXY="*", no_proxy="*", **env)
        with open(log, "wb") as out:
            proc = subprocess.Popen([sys.executable, str(STANDIN), "--host", "127.0.0.1", *args], env=environ,
                                    stdout=out, stderr=subprocess.STDOUT)
        self.procs.append(proc)
        return proc, log

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=DEADLINE_S)


@pytest.fixture(name="standins")
def fixture_standins(tmp_path):
    started = Standins(tmp_path)
    try:
        yield started
    finally:
        started.close()


def healthy(url: str) -> bool:
    return http(url + "/health")[0] == 200


def scrape(url: str) -> tuple[str, dict]:
    """/metrics as text, and its families by name (prometheus_client's parser)."""
    status, headers, body = http(url + "/metrics")
    assert status == 200, body
    assert headers["Content-Type"] == CONTENT_TYPE
    text = body.decode()
    return text, {f.name: f for f in parser.text_string_to_metric_families(text)}


def value(family, suffix: str = "", **labels: str) -> float:
    found = [s.value for s in family.samples if s.name == family.name + suffix
             and all(s.labels.get(k) == v for k, v in labels.items())]
    assert len(found) == 1, (family.name, suffix, labels, family.samples)
    return found[0]


@pytest.fixture(name="served", scope="module")
def fixture_served(tmp_path_factory):
    """A single-node mixed stand-in with --enable-metrics: /metrics before any request, then after a streamed
    /generate (prompt of 3 words, 5 tokens) and a non-streamed one (it reports 1 prompt, 3 completion tokens)."""
    standins = Standins(tmp_path_factory.mktemp("served"))
    try:
        port, = free_ports(1)
        url = f"http://127.0.0.1:{port}"
        standins.start("--port", str(port), "--enable-metrics", "--model-path", "/models/qwen",
                       "--served-model-name", "qwen-standin", SGLANG_STANDIN_QUEUE_REQS="2")
        wait_for("the stand-in's /health", lambda: healthy(url))
        before = scrape(url)
        status, _unused, stream = http(url + "/generate", {"text": "a b c", "stream": True,
                                                           "sampling_params": {"max_new_tokens": 5}})
        assert status == 200 and stream.endswith(b"data: [DONE]\n\n"), stream
        assert http(url + "/generate", {"text": "x"})[0] == 200
        yield {"before": before, "after": scrape(url)}
    finally:
        standins.close()


def test_metrics_before_any_request(served):
    """The scheduler's gauges are there from the start, the tokenizer's families only once a request finished."""
    unused, families = served["before"]
    assert {"sglang:num_running_reqs", "sglang:num_queue_reqs"} <= set(families)
    assert not TOKENIZER & set(families)
    assert value(families["sglang:num_queue_reqs"]) == 2  # SGLANG_STANDIN_QUEUE_REQS


def test_metrics_count_the_requests_served(served):
    text, families = served["after"]
    assert {name: families[name].type for name in REQUIRED if name in families} == REQUIRED
    model = {"model_name": "qwen-standin"}  # --served-model-name wins over --model-path
    scheduler = {**model, "engine_type": "unified", "tp_rank": "0", "pp_rank": "0"}
    for name, family in families.items():
        wanted = model if name in TOKENIZER else scheduler
        for sample in family.samples:
            assert {k: v for k, v in sample.labels.items() if k not in ("le", "pid")} == wanted, sample
    assert value(families["sglang:prompt_tokens"], "_total") == 3 + 1
    assert value(families["sglang:generation_tokens"], "_total") == 5 + 3
    assert value(families["sglang:num_requests"], "_total") == 2
    assert value(families["sglang:num_running_reqs"]) == 0
    assert value(families["sglang:num_queue_reqs"]) == 2
    assert value(families["sglang:num_used_tokens"]) == 0
    # Multiprocess mode, as SGLang runs prometheus_client: no _created samples.
    assert not [s for f in families.values() for s in f.samples if s.name.endswith("_created")]
    # Observations: TTFT and end-to-end once a request; inter-token latency once a streamed token after the first.
    for name, count in (("sglang:time_to_first_token_seconds", 2), ("sglang:e2e_request_latency_seconds", 2),
                        ("sglang:inter_token_latency_seconds", 4)):
        family = families[name]
        buckets = [s for s in family.samples if s.name == name + "_bucket"]
        assert [s.labels["le"] for s in buckets] == [floatToGoString(b) for b in BUCKETS[name]] + ["+Inf"]
        counts = [s.value for s in buckets]
        assert counts == sorted(counts), (name, counts)
        assert counts[-1] == value(family, "_count") == count
        total = value(family, "_sum")
        # The streamed tokens come TOKEN_INTERVAL_S apart: inter-token and end-to-end latencies are above 0.
        assert total > 0 or (name == "sglang:time_to_first_token_seconds" and total == 0), (name, total)
    # Every family's HELP and TYPE lines come right before its samples.
    current = None
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("# HELP "):
            current = line.split()[2]
            assert lines[i + 1].startswith(f"# TYPE {current} "), lines[i:i + 2]
        elif not line.startswith("#"):
            assert current and re.match(re.escape(current) + r"(_sum|_bucket|_count)?[{ ]", line), line


PRINT = r"""
import json, sys
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest, multiprocess
for fam in json.load(sys.stdin):
    samples = fam["samples"]
    names = sorted({k for s in samples for k in s["labels"] if k not in ("le", "pid")})
    if fam["type"] == "counter":
        metric = Counter(fam["name"], fam["help"], names)
        for s in samples:
            metric.labels(**s["labels"]).inc(s["value"])
    elif fam["type"] == "gauge":
        pid = any("pid" in s["labels"] for s in samples)  # SGLang's gauges without a multiprocess_mode
        metric = Gauge(fam["name"], fam["help"], names, **({} if pid else {"multiprocess_mode": "mostrecent"}))
        for s in samples:
            metric.labels(**{k: v for k, v in s["labels"].items() if k != "pid"}).set(s["value"])
    else:
        buckets = [s for s in samples if s["name"].endswith("_bucket")]
        metric = Histogram(fam["name"], fam["help"], names,
                           buckets=[float(s["labels"]["le"]) for s in buckets if s["labels"]["le"] != "+Inf"])
        child = metric.labels(**{k: v for k, v in buckets[0]["labels"].items() if k != "le"})
        previous = 0.0
        for i, s in enumerate(buckets):  # what SGLang's observe_inter_token_latency does too
            child._buckets[i].inc(s["value"] - previous)
            previous = s["value"]
        child._sum.inc(next(s["value"] for s in samples if s["name"].endswith("_sum")))
registry = CollectorRegistry()
multiprocess.MultiProcessCollector(registry)
sys.stdout.write(generate_latest(registry).decode())
"""


def blocks(text: str) -> dict[str, str]:
    """The exposition per family, pids masked (each process has its own)."""
    text = re.sub(r'pid="[0-9]+"', 'pid="PID"', text)
    return {b.split("\n", 1)[0].split()[0]: "# HELP " + b for b in text.split("# HELP ")[1:]}


def test_metrics_print_as_prometheus_client_does(served, tmp_path):
    """The same values through prometheus_client in multiprocess mode (PROMETHEUS_MULTIPROC_DIR, as SGLang runs it)
    print the same text, family by family (their order follows the directory listing of its files)."""
    text, families = served["after"]
    data = [{"name": f.name, "type": f.type, "help": f.documentation,
             "samples": [{"name": s.name, "labels": s.labels, "value": s.value} for s in f.samples]}
            for f in families.values()]
    env = dict(os.environ, PROMETHEUS_MULTIPROC_DIR=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", PRINT], input=json.dumps(data), capture_output=True, text=True,
                          env=env, timeout=60, check=True)
    assert blocks(text) == blocks(proc.stdout)


def test_metrics_of_a_request_in_flight_and_of_a_client_that_hangs_up(standins):
    port, = free_ports(1)
    url = f"http://127.0.0.1:{port}"
    # A token a second: the request is still running long after its first token arrived.
    standins.start("--port", str(port), "--enable-metrics", "--model-path", "/models/qwen",
                   SGLANG_STANDIN_TOKEN_INTERVAL_MS="1000")
    wait_for("the stand-in's /health", lambda: healthy(url))
    req = urllib.request.Request(url + "/generate", data=json.dumps(
        {"text": "a b", "stream": True, "sampling_params": {"max_new_tokens": 60}}).encode())
    with OPENER.open(req, timeout=DEADLINE_S) as stream:
        assert stream.readline().startswith(b"data: ")
        unused, families = scrape(url)
        assert value(families["sglang:num_running_reqs"]) == 1
        assert value(families["sglang:num_used_tokens"]) >= 2 + 1
        assert value(families["sglang:time_to_first_token_seconds"], "_count") == 1
    # The client hung up: the tokenizer aborts the request (tokenizer_manager.py abort_request).

    def aborted() -> bool:
        families = scrape(url)[1]
        return "sglang:num_aborted_requests" in families and value(families["sglang:num_running_reqs"]) == 0

    wait_for("the aborted request", aborted)
    families = scrape(url)[1]
    assert value(families["sglang:num_aborted_requests"], "_total") == 1
    assert "sglang:num_requests" not in families  # it never finished


def test_no_metrics_without_enable_metrics(standins):
    port, = free_ports(1)
    url = f"http://127.0.0.1:{port}"
    standins.start("--port", str(port), "--model-path", "/models/qwen")
    wait_for("the stand-in's /health", lambda: healthy(url))
    assert http(url + "/metrics")[0] == 404


def two_nodes(standins, *flags: str, **env: str):
    """Rank 0 and rank 1 of one instance on 127.0.0.1, each on its own port; both healthy."""
    p0, p1, dist = free_ports(3)
    common = ("--nnodes", "2", "--dist-init-addr", f"127.0.0.1:{dist}", "--model-path", "/models/qwen", *flags)
    rank0 = standins.start("--port", str(p0), "--node-rank", "0", *common, **env)
    rank1 = standins.start("--port", str(p1), "--node-rank", "1", *common, **env)
    url0, url1 = f"http://127.0.0.1:{p0}", f"http://127.0.0.1:{p1}"
    wait_for("rank 0's /health (both ranks joined)", lambda: healthy(url0))
    wait_for("rank 1's dummy health check server", lambda: healthy(url1))
    return (rank0, url0), (rank1, url1)


def scheduler_labels(families) -> list[dict[str, str]]:
    return [s.labels for s in families["sglang:num_running_reqs"].samples] if "sglang:num_running_reqs" in families \
        else []


SCHEDULER = {"model_name": "/models/qwen", "engine_type": "unified"}  # no --served-model-name: the model path


@pytest.mark.parametrize("flags, rank0, rank1", [
    # Plain TP over two nodes: rank 1 holds TP ranks 2 and 3, neither of them attention-TP rank 0.
    (("--tp-size", "4"), [{"tp_rank": "0", "pp_rank": "0"}], []),
    # PP over two nodes: rank 1 holds PP stage 1, whose TP rank 0 logs.
    (("--tp-size", "2", "--pp-size", "2"), [{"tp_rank": "0", "pp_rank": "0"}], [{"tp_rank": "0", "pp_rank": "1"}]),
    # DP attention, one attention-TP rank per DP rank: every scheduler logs, with its dp_rank.
    (("--tp-size", "4", "--dp-size", "4", "--enable-dp-attention"),
     [{"tp_rank": "0", "pp_rank": "0", "dp_rank": "0"}, {"tp_rank": "1", "pp_rank": "0", "dp_rank": "1"}],
     [{"tp_rank": "2", "pp_rank": "0", "dp_rank": "2"}, {"tp_rank": "3", "pp_rank": "0", "dp_rank": "3"}]),
], ids=["tp", "pp", "dp-attention"])
def test_ranks_of_a_two_node_instance(standins, flags, rank0, rank1):
    (unused, url0), (unused, url1) = two_nodes(standins, "--enable-metrics", *flags)
    for path in ("/ping", "/health", "/health_generate"):
        status, unused, body = http(url1 + path)
        assert (status, body) == (200, b""), path
    assert http(url1 + "/generate", {"text": "x"})[0] == 404  # the dummy server has no other route
    families0, families1 = scrape(url0)[1], scrape(url1)[1]
    assert scheduler_labels(families0) == [{**SCHEDULER, **labels} for labels in rank0]
    assert scheduler_labels(families1) == [{**SCHEDULER, **labels} for labels in rank1]
    # A rank > 0 runs no tokenizer; with plain TP it has no sglang: family at all.
    assert not TOKENIZER & set(families1)
    if not rank1:
        assert not [name for name in families1 if name.startswith("sglang:")]


def test_a_rank_without_enable_metrics_has_no_metrics(standins):
    unused, (unused, url1) = two_nodes(standins, "--tp-size", "2")
    assert http(url1 + "/ping")[0] == 200
    assert http(url1 + "/metrics")[0] == 404


def test_the_dummy_server_answers_after_rank_0_is_lost(standins):
    (rank0, unused), (rank1, url1) = two_nodes(standins, "--tp-size", "2", "--enable-metrics")
    rank0[0].send_signal(signal.SIGKILL)
    wait_for("rank 1 losing rank 0", lambda: b"lost node rank 0" in rank1[1].read_bytes())
    for path in ("/ping", "/health", "/health_generate", "/metrics"):
        assert http(url1 + path)[0] == 200, path
    assert rank1[0].poll() is None  # blocked, never exiting


def collector_families(source: Path) -> dict[str, tuple[str, str, list[float] | None]]:
    """name -> (type, HELP, literal buckets) of each Gauge / Counter / Histogram that collector.py creates."""
    tree = ast.parse(source.read_text(encoding="utf-8"))
    found = {}
    for func in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        lists = {n.targets[0].id: n.value for n in ast.walk(func) if isinstance(n, ast.Assign)
                 and isinstance(n.targets[0], ast.Name) and isinstance(n.value, ast.List)}
        for call in ast.walk(func):
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and \
                    call.func.id in ("Gauge", "Counter", "Histogram"):
                kw = {k.arg: k.value for k in call.keywords}
                buckets = kw.get("buckets")
                if isinstance(buckets, ast.Name):
                    buckets = lists.get(buckets.id)
                found[ast.literal_eval(kw["name"])] = (
                    call.func.id.lower(), ast.literal_eval(kw["documentation"]),
                    ast.literal_eval(buckets) if isinstance(buckets, ast.List) else None)
    return found


def dict_keys(source: Path, function: str, target: str) -> list[set[str]]:
    """The keys of each dict literal assigned to target in function, and of each target["key"] set later."""
    tree = ast.parse(source.read_text(encoding="utf-8"))
    keys = []
    for func in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == function):
        for node in ast.walk(func):
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and \
                    node.targets[0].id == target and isinstance(node.value, ast.Dict):
                keys.append({ast.literal_eval(k) for k in node.value.keys})
            elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript) and \
                    isinstance(node.targets[0].value, ast.Name) and node.targets[0].value.id == target and \
                    isinstance(node.targets[0].slice, ast.Constant):  # not the tokenizer's optional custom labels
                keys.append({node.targets[0].slice.value})
    return keys


def test_families_are_those_of_sglang_0_5_6_post2(served):
    """Names, types, HELP texts and buckets against collector.py, labels against the scheduler's init_metrics and
    the tokenizer manager, in the release tests/validation/setup_parsers.sh unpacked."""
    import parsers  # tests/validation, on the path by tests/conftest.py

    if not parsers.available("server", RELEASE):
        if os.environ.get("SGLANG_PARSERS_REQUIRED") == "1":
            pytest.fail(f"SGLang {RELEASE} is not installed (tests/validation/setup_parsers.sh)")
        pytest.skip(f"SGLang {RELEASE} not unpacked under .cache/parsers; run tests/validation/setup_parsers.sh")
    srt = parsers.CACHE / f"sglang-{RELEASE}" / "sglang" / "srt"
    real = collector_families(srt / "metrics" / "collector.py")
    # The stand-in's tables: every family it can serve (the aborted counter too) and the default buckets.
    spec = importlib.util.spec_from_file_location("standin_launch_server", STANDIN)
    standin = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(standin)
    tables = [(name, "gauge", doc) for name, doc in standin.SCHEDULER_GAUGES + standin.SCHEDULER_GAUGES_PID]
    tables += [(name, "counter", doc) for name, doc in (standin.PROMPT_TOKENS, standin.GENERATION_TOKENS,
                                                        standin.NUM_REQUESTS, standin.ABORTED_REQUESTS)]
    tables += [(name, "histogram", doc) for name, (doc, _flag, _buckets) in standin.HISTOGRAMS.items()]
    for name, kind, doc in tables:
        assert real[name][:2] == (kind, doc), name
    for name, (_doc, _flag, buckets) in standin.HISTOGRAMS.items():
        assert [float(b) for b in buckets] == [float(b) for b in real[name][2]], name
    families = served["after"][1]
    for name, family in families.items():
        kind, doc, buckets = real[name + "_total" if family.type == "counter" else name]
        assert (family.type, family.documentation) == (kind, doc), name
        if kind == "histogram":
            les = [s.labels["le"] for s in family.samples if s.name == name + "_bucket"]
            assert les == [floatToGoString(b) for b in buckets] + ["+Inf"], name
    mixin = srt / "managers" / "scheduler_metrics_mixin.py"
    scheduler_keys = set().union(*dict_keys(mixin, "init_metrics", "labels"))
    assert scheduler_keys == {"model_name", "engine_type", "tp_rank", "pp_rank", "dp_rank"}
    assert 'engine_type = "unified"' in mixin.read_text(encoding="utf-8")
    tokenizer_keys = dict_keys(srt / "managers" / "tokenizer_manager.py", "__init__", "labels")
    assert tokenizer_keys == [{"model_name"}]
    for name, family in families.items():
        names = {k for s in family.samples for k in s.labels} - {"le", "pid"}
        assert names == ({"model_name"} if name in TOKENIZER else scheduler_keys - {"dp_rank"}), name
