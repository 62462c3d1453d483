"""Stand-in for ``python3 -m sglang.launch_server`` (ascend.sglang Molecule tests only).

Standard library only.  It:
- records its exact argv (/proc/self/cmdline) and environment to
  $SGLANG_STANDIN_STATE_DIR/<systemd unit>.json (default /var/lib/sglang-standin);
- multi-node (--nnodes > 1): rank 0 listens on the --dist-init-addr port, ranks > 0 connect to it
  (bounded retries); every rank then sends a heartbeat line to its peer(s) every HEARTBEAT_S over that
  connection. A peer is lost when its connection drops (it died) or when no heartbeat arrived for
  SGLANG_STANDIN_HEARTBEAT_TIMEOUT seconds (it hangs: SIGSTOP; the only way a stopped peer is noticed).
  Then, like SGLang (sgl-project/sglang#3099), the surviving ranks do NOT exit: they stay up "blocked in
  a collective" and stop heartbeating; rank 0 keeps answering /health 200 while /generate, /v1/* and
  /health_generate never complete, and it accepts a re-joining rank's connection but never completes the
  rendezvous. A rank > 0 whose rank 0 went away (even one still waiting in the rendezvous) hangs too.
  SGLANG_STANDIN_PEER_LOSS=exit restores the old, kinder behaviour: every rank exits non-zero at once;
- node rank 0 serves HTTP on --host/--port: GET /health (200 only when every rank joined and the
  startup delay is over; still 200 once a peer is lost), GET /health_generate (a real request through
  every rank: 200 once each peer answered a heartbeat sent after it started; 503 before every rank
  joined; hangs once a peer is lost), /server_info, /get_server_info, /model_info, /get_model_info; POST /generate,
  /v1/completions, /v1/chat/completions (SSE streaming too, ending "data: [DONE]") in prefill, decode
  or mixed behaviour; a streamed /generate of a decode or mixed server sends max_new_tokens tokens one event
  at a time (cumulative text, meta_info.completion_tokens), as sglang.bench_serving reads them; a decode answer
  echoes the bootstrap fields it received; every request is logged
  to <unit>.requests.jsonl.  /server_info and /model_info never report a model or tokenizer path;
- a rank > 0, once the rendezvous with rank 0 completed (the real one: once its schedulers are ready), serves
  SGLang's dummy health check server (launch_dummy_health_check_server, which entrypoints/engine.py starts on
  ranks >= 1) on its own --host/--port: GET /ping, /health and /health_generate answer 200 with an empty body,
  always (it checks nothing, and keeps answering after a peer is lost), /metrics with --enable-metrics, anything
  else 404. A port already taken is logged and the rank goes on without it, as the real daemon thread does;
- --enable-metrics: GET /metrics in the Prometheus text format 0.0.4 as prometheus_client prints SGLang's
  multiprocess registry (no _created samples; a histogram's _sum, then its buckets, then _count), with the
  families, types, HELP texts, labels and default buckets of SGLang 0.5.6.post2 (see SCHEDULER_GAUGES). Every
  scheduler of the node that logs stats (attention-TP rank 0, every one with --enable-metrics-for-all-schedulers)
  has the gauges, labelled model_name (--served-model-name, else --model-path), engine_type "unified", tp_rank,
  pp_rank and, for DP groups or DP attention (or SGLANG_DP_RANK), dp_rank; they are there from the start, as after
  a real server's warmup request. The node's first such scheduler has live values (num_running_reqs: generation
  requests in flight; num_used_tokens and token_usage: their tokens, over --max-total-tokens or KV_TOKENS;
  gen_throughput: tokens sent in the last second), the others 0. Rank 0 adds the tokenizer's families, labelled
  model_name, once a request finished: prompt and completion tokens as it reports them, TTFT at the first chunk or
  answer and inter-token latency between streamed chunks (neither on a prefill server), end-to-end at the end; a
  client that hangs up mid-stream is an aborted request. A rank > 0 sees no request: with plain TP none of its
  schedulers is attention-TP rank 0 and its /metrics holds no sglang: family, as the real one's before any
  request. Not modelled: the real server's warmup request (its counters start at one request), the
  queue_time_seconds and per_stage_req_latency_seconds histograms every scheduler fills per request (ranks > 0
  too), func_latency_seconds, http_responses_total, --collect-tokens-histogram, OpenMetrics for an Accept header
  asking for it.
Test knobs (environment): SGLANG_STANDIN_STARTUP_DELAY (seconds, default 1),
SGLANG_STANDIN_NEVER_HEALTHY=1 (/health stays 503), SGLANG_STANDIN_STATE_DIR,
SGLANG_STANDIN_TOKEN_INTERVAL_MS (streamed /generate, default 5), SGLANG_STANDIN_HEARTBEAT_TIMEOUT (seconds,
default 3), SGLANG_STANDIN_PEER_LOSS (unset: hang like SGLang; "exit": exit at once),
SGLANG_STANDIN_FAIL_LOG=<failure> (print the real log lines of that failure to stderr, then exit 1, as the server
does when it dies of it; the failures are in FAIL_LOGS), SGLANG_STANDIN_QUEUE_REQS=<n> (adds n to the first
scheduler's sglang:num_queue_reqs: the stand-in itself never queues).
"""
from __future__ import annotations

import collections
import gzip
import json
import math
import os
import socket
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs


def _release() -> str:
    """The version of the installed sglang distribution (the stand-in wheel's, which scripts/molecule.sh builds as
    <release>+standin), or the package's own without one."""
    try:
        from importlib.metadata import version
        return version("sglang")
    except Exception:  # noqa: BLE001 - run from a checkout, not installed
        return "0.0.0+standin"


RELEASE = _release()
STATE_DIR = os.environ.get("SGLANG_STANDIN_STATE_DIR", "/var/lib/sglang-standin")
# Streamed /generate: seconds between tokens (the benchmark measures it as TPOT / ITL), and a bound.
TOKEN_INTERVAL_S = float(os.environ.get("SGLANG_STANDIN_TOKEN_INTERVAL_MS", "5")) / 1000
MAX_STREAM_TOKENS = 4096
# Heartbeats between the ranks over the dist-init connection (a stand-in for the collectives).
HEARTBEAT_S = 0.1
HEARTBEAT_TIMEOUT_S = float(os.environ.get("SGLANG_STANDIN_HEARTBEAT_TIMEOUT", "3"))
PEER_LOSS_EXIT = os.environ.get("SGLANG_STANDIN_PEER_LOSS") == "exit"
# What a server prints when it dies of a failure, in the real tools' format ({pid} and {cann_time} filled in):
# hccl_link_timeout: torch_npu's HCCL init error (vllm-project/vllm-ascend#397) and CANN's EI0006 report
# (vllm-project/vllm-ascend#5461), as a rank whose peers never connect prints them after HCCL_CONNECT_TIMEOUT.
FAIL_LOGS = {
    "hccl_link_timeout": [
        "[PID: {pid}] {cann_time} Get_Socket_Timeout(EI0006): Getting socket times out. Reason: 1. The remote does "
        "not initiate a connect request. some NPUs in the cluster are abnormal.",
        "RuntimeError: create:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:89 HCCL function error: "
        "HcclCommInitRootInfo(numRanks, &rootInfo, rank, &(comm->hcclComm_))",
    ],
}
# SGLANG_STANDIN_QUEUE_REQS: requests to report as waiting (sglang:num_queue_reqs); the stand-in never queues any.
QUEUE_REQS = int(os.environ.get("SGLANG_STANDIN_QUEUE_REQS", "0"))
# The KV cache pool in tokens when --max-total-tokens says nothing (sglang:max_total_num_tokens, token_usage).
KV_TOKENS = 65536
# Prometheus metrics (--enable-metrics). Names, types, HELP texts and default buckets: sgl-project/sglang
# python/sglang/srt/metrics/collector.py at release v0.5.6.post2. SchedulerMetricsCollector.log_stats sets these
# gauges, in this order; the labels are managers/scheduler_metrics_mixin.py's (init_metrics) of that release.
SCHEDULER_GAUGES = (  # multiprocess_mode="mostrecent": one sample per scheduler
    ("sglang:num_running_reqs", "The number of running requests."),
    ("sglang:num_used_tokens", "The number of used tokens."),
    ("sglang:token_usage", "The token usage."),
    ("sglang:pending_prealloc_token_usage", "The token usage for pending preallocated tokens (not preallocated yet)."),
    ("sglang:swa_token_usage", "The token usage for SWA layers."),
    ("sglang:mamba_usage", "The token usage for Mamba layers."),
    ("sglang:gen_throughput", "The generation throughput (token/s)."),
    ("sglang:num_queue_reqs", "The number of requests in the waiting queue."),
    ("sglang:num_grammar_queue_reqs", "The number of requests in the grammar waiting queue."),
    ("sglang:num_running_reqs_offline_batch",
     "The number of running low-priority offline batch requests(label is 'batch')."),
    ("sglang:cache_hit_rate", "The prefix cache hit rate."),
    ("sglang:max_total_num_tokens", "Maximum total number of tokens in the KV cache pool."),
    ("sglang:spec_accept_length", "The average acceptance length of speculative decoding."),
    ("sglang:spec_accept_rate",
     "The average acceptance rate of speculative decoding (`accepted tokens / total draft tokens` in batch)."),
    ("sglang:num_prefill_prealloc_queue_reqs", "The number of requests in the prefill prealloc queue."),
    ("sglang:num_prefill_inflight_queue_reqs", "The number of requests in the prefill inflight queue."),
    ("sglang:num_decode_prealloc_queue_reqs", "The number of requests in the decode prealloc queue."),
    ("sglang:num_decode_transfer_queue_reqs", "The number of requests in the decode transfer queue."),
    ("sglang:kv_transfer_speed_gb_s", "The transfer speed of the KV cache in GB/s."),
    ("sglang:kv_transfer_latency_ms", "The transfer latency of the KV cache in ms."),
    ("sglang:kv_transfer_bootstrap_ms", "The bootstrap time of the KV transfer in ms."),
    ("sglang:kv_transfer_alloc_ms", "The allocation waiting time of the KV transfer in ms."),
    ("sglang:utilization", "The utilization."),
    ("sglang:engine_startup_time", "The time taken for the engine to start up."),
    ("sglang:engine_load_weights_time", "The time taken for the engine to load weights."),
    ("sglang:new_token_ratio", "The new token ratio."),
    ("sglang:is_cuda_graph", "Whether the batch is using CUDA graph."),
)
SCHEDULER_GAUGES_PID = (  # no multiprocess_mode (prometheus_client's "all"): each sample keeps a pid label
    ("sglang:num_retracted_reqs", "The number of retracted requests."),
    ("sglang:num_paused_reqs", "The number of paused requests by async weight sync."),
)
# TokenizerMetricsCollector (labels: model_name, managers/tokenizer_manager.py): what observe_one_finished_request
# and observe_one_aborted_request count; their exposition names keep the _total the collector's names have.
PROMPT_TOKENS = ("sglang:prompt_tokens_total", "Number of prefill tokens processed.")
GENERATION_TOKENS = ("sglang:generation_tokens_total", "Number of generation tokens processed.")
NUM_REQUESTS = ("sglang:num_requests_total", "Number of requests processed.")
ABORTED_REQUESTS = ("sglang:num_aborted_requests_total", "Number of requests aborted.")
TTFT = "sglang:time_to_first_token_seconds"
ITL = "sglang:inter_token_latency_seconds"
E2E = "sglang:e2e_request_latency_seconds"
RETRACTIONS = "sglang:num_retractions"
# The histograms' HELP texts, default buckets and the server flag that replaces them (nargs="+").
HISTOGRAMS = {
    TTFT: ("Histogram of time to first token in seconds.", "--bucket-time-to-first-token",
           (0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400)),
    ITL: ("Histogram of inter-token latency in seconds.", "--bucket-inter-token-latency",
          (0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035, 0.040, 0.060, 0.080, 0.100, 0.200,
           0.400, 0.600, 0.800, 1.000, 2.000, 4.000, 6.000, 8.000)),
    E2E: ("Histogram of End-to-end request latency in seconds", "--bucket-e2e-request-latency",
          (0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800, 2400)),
    RETRACTIONS: ("Histogram of retraction counts per request.", None,
                  (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 75, 100)),
}
METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def log(msg: str) -> None:
    print(f"[sglang-standin] {msg}", flush=True)


def parse(argv: list[str]) -> dict[str, object]:
    opts: dict[str, object] = {}
    i = 0
    while i < len(argv):
        tok = argv[i]
        if tok.startswith("--"):
            vals = []
            j = i + 1
            while j < len(argv) and not argv[j].startswith("--"):
                vals.append(argv[j])
                j += 1
            opts[tok] = vals[0] if len(vals) == 1 else (vals or True)
            i = j
        else:
            i += 1
    return opts


def unit_name() -> str:
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as f:
            for line in f:
                for part in line.strip().split(":")[-1].split("/"):
                    if part.endswith(".service"):
                        return part[: -len(".service")]
    except OSError:
        pass
    return f"pid-{os.getpid()}"


def cmdline() -> list[str]:
    with open("/proc/self/cmdline", "rb") as f:
        return [a.decode() for a in f.read().split(b"\0")[:-1]]


class State:
    def __init__(self, opts: dict[str, object], unit: str) -> None:
        self.opts = opts
        self.unit = unit
        self.role = str(opts.get("--disaggregation-mode") or "mixed")
        if self.role == "null":
            self.role = "mixed"
        self.nnodes = int(str(opts.get("--nnodes", "1")))
        self.rank = int(str(opts.get("--node-rank", "0")))
        self.host = str(opts.get("--host", "127.0.0.1"))
        self.port = int(str(opts.get("--port", "30000")))
        self.peers: set[int] = set()
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)
        self.last_heartbeat: dict[int, float] = {}  # peer rank -> time its last heartbeat arrived
        self.broken: str | None = None  # why this rank is "blocked in a collective"
        self.started = time.time()
        self.delay = float(os.environ.get("SGLANG_STANDIN_STARTUP_DELAY", "1"))
        self.never_healthy = os.environ.get("SGLANG_STANDIN_NEVER_HEALTHY") == "1"

    def healthy(self) -> bool:
        """/health: the process is up and every rank joined (a lost peer does not change it)."""
        if self.never_healthy or time.time() - self.started < self.delay:
            return False
        with self.lock:
            return len(self.peers) == self.nnodes - 1

    def collective(self) -> bool:
        """What a request needs from every rank: False at once while the instance is not formed; blocks
        until each peer sent a heartbeat after the call; never returns once a peer is lost (a hang)."""
        if not self.healthy():
            return False
        start = time.time()
        with self.changed:
            while self.broken or any(self.last_heartbeat.get(r, 0) < start for r in self.peers):
                self.changed.wait(1)
        return True

    def lose(self, what: str) -> None:
        """A peer is gone (connection dropped) or silent (no heartbeat): exit (old knob) or hang."""
        if PEER_LOSS_EXIT:
            die(f"lost {what}: collective failure, exiting")
        with self.changed:
            if self.broken:
                return
            self.broken = what
            self.changed.notify_all()
        log(f"lost {what}: blocked in a collective, not exiting (requests hang, /health still answers)")

    def identity(self) -> dict[str, object]:
        return {"unit": self.unit, "role": self.role, "hostname": socket.gethostname(), "host": self.host,
                "port": self.port, "node_rank": self.rank, "nnodes": self.nnodes,
                "bootstrap_port": self.opts.get("--disaggregation-bootstrap-port")}


def die(msg: str) -> None:
    log(msg)
    sys.stdout.flush()
    os._exit(3)


def heartbeat(state: State, conn: socket.socket, peer: int, what: str) -> None:
    """Sends a heartbeat every HEARTBEAT_S until this rank is broken; reads the peer's, which mark it
    alive; a dropped connection or HEARTBEAT_TIMEOUT_S of silence loses the peer."""
    def send() -> None:
        while not state.broken:
            try:
                conn.sendall(b"hb\n")
            except OSError:
                return
            time.sleep(HEARTBEAT_S)

    threading.Thread(target=send, daemon=True).start()
    conn.settimeout(HEARTBEAT_TIMEOUT_S)
    with state.changed:
        state.last_heartbeat[peer] = time.time()
    while True:
        try:
            data = conn.recv(64)
        except socket.timeout:
            state.lose(f"{what} (no heartbeat for {HEARTBEAT_TIMEOUT_S:g} s)")
            break
        except OSError:
            data = b""
        if not data:
            state.lose(f"{what} (connection dropped)")
            break
        with state.changed:
            state.last_heartbeat[peer] = time.time()
            state.changed.notify_all()
    # Blocked in the collective: this rank never talks to the peer again; the socket stays open.
    while True:
        time.sleep(3600)


def rendezvous(state: State) -> None:
    addr = str(state.opts.get("--dist-init-addr") or "")
    if state.nnodes <= 1:
        return
    if not addr:
        die("--nnodes > 1 without --dist-init-addr")
    host, _unused, port = addr.rpartition(":")
    if state.rank == 0:
        srv = socket.create_server(("", int(port)), reuse_port=False)
        srv.listen(16)
        log(f"rank 0 waiting for {state.nnodes - 1} peer(s) on {addr}")
        held: list[socket.socket] = []  # joins a broken rank 0 accepted but never answers

        def accept() -> None:
            while True:
                conn, peer = srv.accept()
                data = b""
                while not data.endswith(b"\n"):
                    chunk = conn.recv(64)
                    if not chunk:
                        break
                    data += chunk
                try:
                    rank = int(data.decode().strip())
                except ValueError:
                    conn.close()
                    continue
                with state.lock:
                    if state.broken:
                        held.append(conn)
                        log(f"rank {rank} tries to join from {peer[0]}: blocked, no answer")
                        continue
                    if rank in state.peers or not 0 < rank < state.nnodes:
                        conn.close()
                        continue
                    state.peers.add(rank)
                    count = len(state.peers)
                log(f"rank {rank} joined from {peer[0]} ({count + 1}/{state.nnodes})")
                conn.sendall(b"ok\n")
                threading.Thread(target=heartbeat, args=(state, conn, rank, f"node rank {rank}"),
                                 daemon=True).start()

        threading.Thread(target=accept, daemon=True).start()
    else:
        deadline = time.time() + float(os.environ.get("SGLANG_STANDIN_RENDEZVOUS_TIMEOUT", "600"))
        while True:
            try:
                conn = socket.create_connection((host, int(port)), timeout=5)
                conn.sendall(f"{state.rank}\n".encode())
                conn.settimeout(None)
                break
            except OSError as exc:
                if time.time() > deadline:
                    die(f"rendezvous with {addr} timed out: {exc}")
                time.sleep(0.5)
        # Connected: wait for rank 0 to complete the rendezvous (a blocked rank 0 never does).
        answer = b""
        while not answer.endswith(b"\n"):
            try:
                chunk = conn.recv(64)
            except OSError:
                chunk = b""
            if not chunk:
                state.lose("node rank 0 (connection dropped during the rendezvous)")
                while True:
                    time.sleep(3600)
            answer += chunk
        log(f"rank {state.rank} connected to rank 0 at {addr}")
        serve_dummy(state)
        heartbeat(state, conn, 0, "node rank 0")  # blocks


def opt(opts: dict[str, object], *names: str, default: object = None) -> object:
    """The value of the first of a flag's spellings given (argparse aliases: --tp-size, --tensor-parallel-size)."""
    for name in names:
        if name in opts:
            return opts[name]
    return default


def scheduler_labels(opts: dict[str, object], rank: int, nnodes: int, model: str) -> list[dict[str, str]]:
    """The labels of this node's schedulers that log stats, in SGLang 0.5.6.post2's launch order: the node's pp and tp
    rank ranges of entrypoints/engine.py (one TP group per DP rank without DP attention: data_parallel_controller.py);
    log_stats runs on attention-TP rank 0 only unless --enable-metrics-for-all-schedulers (scheduler.py
    current_scheduler_metrics_enabled); dp_rank is a label when the scheduler has one (scheduler_metrics_mixin.py)."""
    tp = int(str(opt(opts, "--tp-size", "--tensor-parallel-size", default=1)))
    pp = int(str(opt(opts, "--pp-size", "--pipeline-parallel-size", default=1)))
    dp = int(str(opt(opts, "--dp-size", "--data-parallel-size", default=1)))
    dp_attention = dp > 1 and bool(opts.get("--enable-dp-attention"))
    every = bool(opts.get("--enable-metrics-for-all-schedulers"))
    pp_per_node = max(pp // nnodes, 1)
    nnodes_per_pp = max(nnodes // pp, 1)
    tp_per_node = tp // nnodes_per_pp
    pp_ranks = range(pp_per_node * (rank // nnodes_per_pp), pp_per_node * (rank // nnodes_per_pp + 1))
    tp_ranks = range(tp_per_node * (rank % nnodes_per_pp), tp_per_node * (rank % nnodes_per_pp + 1))
    env_dp = os.environ.get("SGLANG_DP_RANK")  # scheduler.py run_scheduler_process: the router's DP rank
    found = []
    for group in (range(dp) if dp > 1 and not dp_attention else [None]):
        for pp_rank in pp_ranks:
            for tp_rank in tp_ranks:
                dp_rank, attn_tp_rank = group, tp_rank
                if dp_attention:  # layers/dp_attention.py compute_dp_attention_world_info
                    attn_tp_size = max(tp // dp, 1)
                    dp_rank, attn_tp_rank = tp_rank // attn_tp_size, tp_rank % attn_tp_size
                if dp_rank is None and env_dp is not None:
                    dp_rank = int(env_dp)
                if attn_tp_rank == 0 or every:
                    labels = {"model_name": model, "engine_type": "unified", "tp_rank": str(tp_rank),
                              "pp_rank": str(pp_rank)}
                    if dp_rank is not None:
                        labels["dp_rank"] = str(dp_rank)
                    found.append(labels)
    return found


def go_float(value: float) -> str:
    """A number as prometheus_client prints it (utils.floatToGoString): 1.0, 0.1, +Inf, 1e+07."""
    d = float(value)
    if math.isinf(d):
        return "+Inf" if d > 0 else "-Inf"
    if math.isnan(d):
        return "NaN"
    s = repr(d)
    dot = s.find(".")
    if d > 0 and dot > 6:  # Go switches to exponents sooner than Python
        mantissa = f"{s[0]}.{s[1:dot]}{s[dot + 1:]}".rstrip("0.")
        return f"{mantissa}e+{dot - 1:02d}"
    return s


class Histogram:
    """One labelled histogram as prometheus_client keeps it: a count per bucket (not cumulative) and a sum."""

    def __init__(self, bounds: "tuple[float, ...]") -> None:
        self.bounds = tuple(float(b) for b in bounds)
        if not self.bounds or self.bounds[-1] != math.inf:
            self.bounds += (math.inf,)
        self.counts = [0.0] * len(self.bounds)
        self.sum = 0.0

    def observe(self, value: float, count: int = 1, total: "float | None" = None) -> None:
        """count observations of value, adding total (else value) to the sum: collector.py's
        observe_inter_token_latency observes num_new_tokens intervals of interval / num_new_tokens at once."""
        self.sum += value if total is None else total
        for i, bound in enumerate(self.bounds):
            if value <= bound:
                self.counts[i] += count
                break


class Request:
    """A generation request as the tokenizer's collect_metrics (tokenizer_manager.py) follows it."""

    def __init__(self, prompt: int, created: float) -> None:
        self.created = created
        self.prompt = prompt
        self.first = 0.0  # when its first output came
        self.last = 0.0  # when its last new tokens came
        self.tokens = 0  # completion tokens sent so far
        self.ended = False


class Metrics:
    """What SGLang's multiprocess registry holds for this rank with --enable-metrics; thread-safe."""

    def __init__(self, opts: dict[str, object], rank: int, nnodes: int, role: str) -> None:
        self.enabled = bool(opts.get("--enable-metrics"))
        self.model = str(opt(opts, "--served-model-name") or opt(opts, "--model-path", "--model") or "")
        self.tokenizer = rank == 0  # ranks > 0 run no tokenizer manager (entrypoints/engine.py)
        self.prefill = role == "prefill"
        self.pool = int(str(opts.get("--max-total-tokens") or KV_TOKENS))
        self.schedulers = scheduler_labels(opts, rank, nnodes, self.model)
        self.buckets = {}
        for name, (_unused, flag, default) in HISTOGRAMS.items():
            given = opts.get(flag) if flag else None
            self.buckets[name] = tuple(float(b) for b in ([given] if isinstance(given, str) else given or default))
        self.lock = threading.Lock()
        self.counters: dict[tuple[str, str], float] = {}  # in the order the tokenizer first counts them
        self.histograms: dict[str, Histogram] = {}  # in the order the tokenizer first observes them
        self.running: list[Request] = []
        self.sent: collections.deque[tuple[float, int]] = collections.deque()  # (time, tokens) of the last second

    def start(self, prompt: int, created: float) -> Request:
        """A request reached the scheduler: it runs (the stand-in has no waiting queue)."""
        req = Request(prompt, created)
        with self.lock:
            self.running.append(req)
        return req

    def _observe(self, name: str, value: float, count: int = 1, total: "float | None" = None) -> None:
        if name not in self.histograms:
            self.histograms[name] = Histogram(self.buckets[name])
        self.histograms[name].observe(value, count, total)

    def _count(self, counter: tuple[str, str], value: float) -> None:
        self.counters[counter] = self.counters.get(counter, 0.0) + value

    def _end(self, req: Request) -> None:
        if not req.ended:
            req.ended = True
            self.running.remove(req)

    def output(self, req: Request, tokens: int, finished: bool) -> None:
        """An output of req reached the tokenizer, tokens completion tokens in all (collect_metrics)."""
        now = time.time()
        with self.lock:
            new = tokens - req.tokens
            req.tokens = tokens
            if new > 0:
                self.sent.append((now, new))
                self._prune(now)
            if self.prefill:  # a prefill server observes neither TTFT nor inter-token latency
                pass
            elif not req.first:
                req.first = req.last = now
                self._observe(TTFT, now - req.created)
            elif new > 0:
                self._observe(ITL, (now - req.last) / new, new, now - req.last)
                req.last = now
            if finished:  # observe_one_finished_request
                self._count(PROMPT_TOKENS, req.prompt)
                self._count(GENERATION_TOKENS, tokens)
                self._count(NUM_REQUESTS, 1)
                self._observe(E2E, now - req.created)
                self._observe(RETRACTIONS, 0)
                self._end(req)

    def abort(self, req: Request) -> None:
        """The client hung up before the end: the tokenizer aborts the request (abort_request)."""
        with self.lock:
            if not req.ended:
                self._count(ABORTED_REQUESTS, 1)
                self._end(req)

    def end(self, req: Request) -> None:
        with self.lock:
            self._end(req)

    def _prune(self, now: float) -> None:
        while self.sent and self.sent[0][0] < now - 1:
            self.sent.popleft()

    def families(self) -> "list[tuple[str, str, str, list[tuple[str, dict[str, str], float]]]]":
        """(name, type, HELP, samples) of each family with samples, as the multiprocess collector returns them."""
        out = []
        with self.lock:
            now = time.time()
            self._prune(now)
            if self.tokenizer:
                tok = {"model_name": self.model}
                for (name, doc), value in self.counters.items():
                    out.append((name, "counter", doc, [(name, tok, value)]))
                for name, hist in self.histograms.items():
                    samples, acc = [(name + "_sum", tok, hist.sum)], 0.0
                    for bound, count in zip(hist.bounds, hist.counts):
                        acc += count
                        samples.append((name + "_bucket", {**tok, "le": go_float(bound)}, acc))
                    samples.append((name + "_count", tok, acc))
                    out.append((name, "histogram", HISTOGRAMS[name][0], samples))
            used = sum(r.prompt + r.tokens for r in self.running)
            live = {"sglang:num_running_reqs": len(self.running), "sglang:num_used_tokens": used,
                    "sglang:token_usage": used / self.pool, "sglang:num_queue_reqs": QUEUE_REQS,
                    "sglang:gen_throughput": sum(n for _unused, n in self.sent)}
        # calculate_utilization: -1 on a prefill server; 0 elsewhere without max_running_requests_under_SLO.
        common = {"sglang:max_total_num_tokens": self.pool, "sglang:utilization": -1 if self.prefill else 0}
        values = [{**common, **live} if i == 0 else common for i in range(len(self.schedulers))]
        for name, doc in SCHEDULER_GAUGES:
            samples = [(name, labels, v.get(name, 0.0)) for labels, v in zip(self.schedulers, values)]
            out.append((name, "gauge", doc, samples))
        for name, doc in SCHEDULER_GAUGES_PID:
            out.append((name, "gauge", doc, [(name, {**labels, "pid": str(os.getpid())}, 0.0)
                                             for labels in self.schedulers]))
        return [family for family in out if family[3]]

    def exposition(self, query: str) -> bytes:
        """The text format 0.0.4 as prometheus_client's generate_latest writes it (labels sorted, le among them);
        name[] keeps only the samples of those names, as its restricted registry does."""
        names = set(parse_qs(query).get("name[]", []))
        lines = []
        for name, kind, doc, samples in self.families():
            samples = [s for s in samples if not names or s[0] in names]
            if not samples:
                continue
            doc = doc.replace("\\", r"\\").replace("\n", r"\n")
            lines.append(f"# HELP {name} {doc}\n# TYPE {name} {kind}\n")
            for sample, labels, value in samples:
                text = ",".join('{}="{}"'.format(k, v.replace("\\", r"\\").replace("\n", r"\n").replace('"', r'\"'))
                                for k, v in sorted(labels.items()))
                lines.append(f"{sample}{{{text}}} {go_float(value)}\n" if text else f"{sample} {go_float(value)}\n")
        return "".join(lines).encode()


class MetricsRoute(BaseHTTPRequestHandler):
    """/metrics of either HTTP server: SGLang mounts prometheus_client's ASGI app on ^/metrics(.*)$
    (utils/common.py add_prometheus_middleware), for any method; gzip when the client accepts it."""
    metrics: Metrics

    def _metrics(self) -> bool:
        path, _unused, query = self.path.partition("?")
        if not (self.metrics.enabled and path.startswith("/metrics")):
            return False
        data = self.metrics.exposition(query)
        self.send_response(200)
        self.send_header("Content-Type", METRICS_CONTENT_TYPE)
        encodings = (self.headers.get("Accept-Encoding") or "").split(",")
        if any(e.split(";")[0].strip().lower() == "gzip" for e in encodings):
            data = gzip.compress(data)
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        return True


class DummyHandler(MetricsRoute):
    """SGLang's dummy health check server of a rank > 0 (utils/common.py launch_dummy_health_check_server): it
    checks nothing, so it answers whatever state the instance is in; FastAPI's 404 / 405 otherwise."""
    ROUTES = ("/ping", "/health", "/health_generate")

    def version_string(self) -> str:
        return "uvicorn"

    def log_message(self, fmt: str, *args: object) -> None:
        log(f"{self.address_string()} {fmt % args}")

    def _answer(self, code: int, detail: str = "") -> None:
        data = json.dumps({"detail": detail}, separators=(",", ":")).encode() if detail else b""
        self.send_response(code)
        if data:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        if self._metrics():
            return
        if self.path.split("?")[0] in self.ROUTES:
            self._answer(200)
        else:
            self._answer(404, "Not Found")

    def do_POST(self) -> None:  # noqa: N802
        if self._metrics():
            return
        known = self.path.split("?")[0] in self.ROUTES
        self._answer(405 if known else 404, "Method Not Allowed" if known else "Not Found")


def serve_dummy(state: State) -> None:
    """entrypoints/engine.py on a rank > 0 whose schedulers are ready: the dummy server in a daemon thread; one that
    cannot start is logged and the rank goes on (the real thread dies, its process does not)."""
    try:
        httpd = ThreadingHTTPServer((state.host, state.port), DummyHandler)
    except OSError as exc:
        log(f"Dummy health check server failed to start: {exc}")
        return
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True, name="health-check-server").start()
    log(f"Dummy health check server started in background thread at {state.host}:{state.port}")


class Handler(MetricsRoute):
    state: State
    server_version = "sglang-standin"

    def log_message(self, fmt: str, *args: object) -> None:
        log(f"{self.address_string()} {fmt % args}")

    def _json(self, code: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        st = self.state
        path = self.path.split("?")[0]
        if self._metrics():
            return
        if path == "/health":
            ok = st.healthy()
            self._json(200 if ok else 503, {"healthy": ok, **st.identity()})
        elif path == "/health_generate":
            ok = st.collective()  # hangs once a peer is lost
            self._json(200 if ok else 503, {"healthy": ok, **st.identity()})
        elif path in ("/server_info", "/get_server_info"):
            # The release installed, as SGLang reports its own (sglang.version): an upgrade shows in it.
            info = {"version": RELEASE, "disaggregation_mode": st.role if st.role != "mixed" else "null",
                    "tp_size": int(str(st.opts.get("--tp-size", "1"))),
                    "dp_size": int(str(st.opts.get("--dp-size", "1"))), "standin": st.identity()}
            if st.opts.get("--disaggregation-bootstrap-port"):
                info["disaggregation_bootstrap_port"] = int(str(st.opts["--disaggregation-bootstrap-port"]))
            self._json(200, info)
        elif path in ("/model_info", "/get_model_info"):
            self._json(200, {"is_generation": True})
        else:
            self._json(404, {"error": f"no route {path}"})

    def do_POST(self) -> None:  # noqa: N802
        st = self.state
        path = self.path.split("?")[0]
        if self._metrics():
            return
        arrived = time.time()  # the tokenizer's created_time: TTFT and end-to-end latency count from here
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b"{}"
        try:
            req = json.loads(raw or b"{}")
        except ValueError:
            self._json(400, {"error": "invalid JSON"})
            return
        boot = {k: req.get(k) for k in ("bootstrap_host", "bootstrap_port", "bootstrap_room")}
        with open(os.path.join(STATE_DIR, f"{st.unit}.requests.jsonl"), "a", encoding="utf-8") as f:
            f.write(json.dumps({"path": path, "time": time.time(), "request": req}) + "\n")
        if path not in ("/generate", "/v1/completions", "/v1/chat/completions"):
            self._json(404, {"error": f"no route {path}"})
            return
        if not st.collective():  # hangs once a peer is lost
            self._json(503, {"error": "not ready"})
            return
        standin = {**st.identity(), **boot}
        text = f"standin {st.role} answer"
        rid = f"standin-{uuid.uuid4().hex[:12]}"
        interval = 0.0
        if path == "/generate":
            body: dict[str, object] = {"text": text, "meta_info": {"id": rid, "finish_reason": {"type": "stop"},
                                                                   "prompt_tokens": 1, "completion_tokens": 3},
                                       "standin": standin}
            chunks = [body]
            if st.role != "prefill":  # the PD router drops a prefill server's answer
                # Streamed: one event per token, TOKEN_INTERVAL_S apart, as sglang.bench_serving reads them.
                chunks, interval = _token_chunks(req, rid, standin), TOKEN_INTERVAL_S
        elif path == "/v1/completions":
            body = {"id": rid, "object": "text_completion", "created": int(time.time()), "model": "standin",
                    "choices": [{"index": 0, "text": text, "finish_reason": "stop", "logprobs": None}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 3, "total_tokens": 4}, "standin": standin}
            chunks = [dict(body, choices=[{"index": 0, "text": w + " ", "finish_reason": None, "logprobs": None}])
                      for w in text.split()]
        else:
            body = {"id": rid, "object": "chat.completion", "created": int(time.time()), "model": "standin",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                 "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 3, "total_tokens": 4}, "standin": standin}
            chunks = [{"id": rid, "object": "chat.completion.chunk", "created": int(time.time()), "model": "standin",
                       "choices": [{"index": 0, "delta": {"content": w + " "}, "finish_reason": None}],
                       "standin": standin} for w in text.split()]
        stream = bool(req.get("stream"))
        prompt, tokens = _usage(path, body, chunks, stream)
        track = self.metrics.start(prompt, arrived)
        try:
            # Each output is counted before it is sent: a client that read the answer finds it in /metrics.
            if not stream:
                self.metrics.output(track, tokens[-1], True)
                self._json(200, body)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for i, chunk in enumerate(chunks):
                time.sleep(interval)
                if st.broken:
                    st.collective()  # a peer was lost mid-stream: the rest never comes
                self.metrics.output(track, tokens[i], i == len(chunks) - 1)
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True
        except OSError:  # the client hung up
            self.metrics.abort(track)
            self.close_connection = True
        finally:
            self.metrics.end(track)


def _usage(path: str, body: dict, chunks: list, stream: bool) -> "tuple[int, list[int]]":
    """The prompt tokens an answer reports and its completion tokens after each output sent (one per streamed
    /v1 chunk, which carries one word)."""
    if path == "/generate":
        metas = [c["meta_info"] for c in (chunks if stream else [body])]
        return int(metas[0]["prompt_tokens"]), [int(m["completion_tokens"]) for m in metas]
    usage = body["usage"]
    completion = list(range(1, len(chunks) + 1)) if stream else [int(usage["completion_tokens"])]
    return int(usage["prompt_tokens"]), completion


def _token_chunks(req: dict, rid: str, standin: dict) -> "list[dict[str, object]]":
    """What sglang.bench_serving reads from a streamed /generate: the cumulative text and
    meta_info.completion_tokens, one chunk per token, max_new_tokens tokens (bounded)."""
    params = req.get("sampling_params") or {}
    n = max(1, min(int(params.get("max_new_tokens") or 16), MAX_STREAM_TOKENS))
    words = [f"w{(i % 255) + 1}" for i in range(n)]  # words of tests/standins/tokenizer
    prompt = req.get("input_ids") or str(req.get("text") or "").split()
    return [{"text": " ".join(words[: i + 1]),
             "meta_info": {"id": rid, "prompt_tokens": len(prompt), "completion_tokens": i + 1,
                           "finish_reason": {"type": "length", "length": n} if i == n - 1 else None},
             "standin": standin} for i in range(n)]


def main() -> None:
    argv = cmdline()
    opts = parse(argv)
    unit = unit_name()
    os.makedirs(STATE_DIR, exist_ok=True)
    state = State(opts, unit)
    # "started": where the startup delay of /health counts from (a health-gated start order is checked with it).
    record = {"unit": unit, "pid": os.getpid(), "time": time.time(), "started": state.started, "argv": argv,
              "env": dict(os.environ), "cwd": os.getcwd()}
    tmp = os.path.join(STATE_DIR, f".{unit}.json.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1, sort_keys=True)
    os.replace(tmp, os.path.join(STATE_DIR, f"{unit}.json"))
    log(f"{unit}: {state.role} node rank {state.rank}/{state.nnodes}, argv recorded")
    failure = os.environ.get("SGLANG_STANDIN_FAIL_LOG")
    if failure:
        now = time.time()
        cann_time = time.strftime("%Y-%m-%d-%H:%M:%S", time.localtime(now)) + ".{:03d}.{:03d}".format(
            int(now * 1000) % 1000, int(now * 1000000) % 1000)
        for line in FAIL_LOGS[failure]:
            print(line.format(pid=os.getpid(), cann_time=cann_time), file=sys.stderr, flush=True)
        sys.exit(1)
    if state.never_healthy:
        log("SGLANG_STANDIN_NEVER_HEALTHY=1: /health will keep answering 503")
    MetricsRoute.metrics = Metrics(opts, state.rank, state.nnodes, state.role)
    rendezvous(state)  # ranks > 0 block here (serving the dummy health check server) for good
    Handler.state = state
    httpd = ThreadingHTTPServer((state.host, state.port), Handler)
    httpd.daemon_threads = True
    log(f"serving HTTP on {state.host}:{state.port}")
    httpd.serve_forever()


if __name__ == "__main__":
    main()
