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
  to <unit>.requests.jsonl.  Never reports a model or tokenizer path.
Test knobs (environment): SGLANG_STANDIN_STARTUP_DELAY (seconds, default 1),
SGLANG_STANDIN_NEVER_HEALTHY=1 (/health stays 503), SGLANG_STANDIN_STATE_DIR,
SGLANG_STANDIN_TOKEN_INTERVAL_MS (streamed /generate, default 5), SGLANG_STANDIN_HEARTBEAT_TIMEOUT (seconds,
default 3), SGLANG_STANDIN_PEER_LOSS (unset: hang like SGLang; "exit": exit at once),
SGLANG_STANDIN_FAIL_LOG=<failure> (print the real log lines of that failure to stderr, then exit 1, as the server
does when it dies of it; the failures are in FAIL_LOGS).
"""
from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

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
        heartbeat(state, conn, 0, "node rank 0")  # blocks: ranks > 0 serve no HTTP


class Handler(BaseHTTPRequestHandler):
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
        if path == "/health":
            ok = st.healthy()
            self._json(200 if ok else 503, {"healthy": ok, **st.identity()})
        elif path == "/health_generate":
            ok = st.collective()  # hangs once a peer is lost
            self._json(200 if ok else 503, {"healthy": ok, **st.identity()})
        elif path in ("/server_info", "/get_server_info"):
            info = {"version": "0.0.0+standin", "disaggregation_mode": st.role if st.role != "mixed" else "null",
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
        if not req.get("stream"):
            self._json(200, body)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for chunk in chunks:
            time.sleep(interval)
            if st.broken:
                st.collective()  # a peer was lost mid-stream: the rest never comes
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


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
    rendezvous(state)  # ranks > 0 block here until the instance fails
    Handler.state = state
    httpd = ThreadingHTTPServer((state.host, state.port), Handler)
    httpd.daemon_threads = True
    log(f"serving HTTP on {state.host}:{state.port}")
    httpd.serve_forever()


if __name__ == "__main__":
    main()
