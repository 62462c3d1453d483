# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Instance watchdog of one SGLang service (ascend.sglang), standard library only.

    sglang_watchdog.py CONFIG.json

Why: SGLang does not exit when a peer rank of a multi-node instance dies or hangs (sgl-project/sglang#3099):
rank 0 stays up blocked in a collective until its communication watchdog fires (--watchdog-timeout, 9000 s in
the documented configurations), /health may still answer 200, systemd shows every rank active, and no request
completes.  One watchdog runs per service and host; no controller, no SSH between hosts.

kind "rank" (every rank of a watched instance, on that rank's host):
  evidence, every ``interval`` seconds: the own unit is ``failed`` (systemd gave up), or rank 0's
  /health_generate (a real request through every rank, bounded by ``timeout``) failed ``failures`` times in a
  row.  Each host sees the same rank 0, so each restarts its own rank (``systemctl restart``).  Failures are
  not counted for ``startup_grace`` seconds after the own rank (re)started; rank 0 waits longer (its grace
  also covers the other ranks' reaction: failures x (interval + timeout) + interval), so that after rank 0
  restarted the other ranks, which lost their connection to it and hang, are restarted into the new
  rendezvous while rank 0 still waits for them.
  Third evidence, "rank 0 restarted underneath this rank" (ranks > 0 of a multi-node instance): rank 0's
  watchdog serves its unit's InvocationID (read-only, GET /rank0 on rank 0's address and the planned
  ``evidence`` port); every other rank's watchdog records the first active rank-0 invocation it sees after its
  own rank (re)started and, when rank 0 later runs under another invocation while the instance is not
  healthy, restarts its own rank at once (no grace, within the backoff and restart budget): its rank joined,
  or waits for, a rank 0 that is gone.  No answer (endpoint down, rank 0's watchdog restarting) and a rank 0
  that is not active (stopped on purpose, failed, starting) are no evidence: the other checks still apply.
kind "router" (the router host, when the router has a worker API): the same /health_generate evidence per
  instance takes its worker out of the router; the first success puts it back (only workers it took out).

Restarts back off exponentially (``backoff_initial`` x 2^(k-1), at most ``backoff_max``); after
``max_restarts`` restarts within ``window`` seconds the watchdog gives up (journal: "giving up") until the
instance is healthy again or the watchdog itself is restarted (a fresh budget).  State (last check, restarts, given_up, reason) is
written to ``state_file`` after every check for status.yml / doctor.yml.
"""
from __future__ import annotations

import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from typing import Any, Mapping

# ------------------------------------------------------------------------- pure decision logic


def grace_seconds(cfg: Mapping[str, Any]) -> float:
    """Seconds after the own rank (re)started during which failures are not counted."""
    grace = float(cfg["startup_grace"])
    if int(cfg.get("node_rank", 0)) == 0 and int(cfg.get("nnodes", 1)) > 1:
        grace += int(cfg["failures"]) * (float(cfg["interval"]) + float(cfg["timeout"])) + float(cfg["interval"])
    return grace


def backoff_seconds(cfg: Mapping[str, Any], restarts_in_window: int) -> float:
    """Wait required after the last restart before the next one: none before the first restart,
    backoff_initial x 2^(k-1) after k restarts, at most backoff_max."""
    if restarts_in_window <= 0:
        return 0.0
    return min(float(cfg["backoff_max"]), float(cfg["backoff_initial"]) * 2 ** (restarts_in_window - 1))


def new_state() -> dict[str, Any]:
    return {"invocation": None, "started_at": None, "failures": 0, "restarts": [], "restarts_total": 0,
            "given_up": False, "reason": None, "last_check": None, "last_result": None, "status": "starting",
            "rank0_invocation": None}


def rank0_now(obs: Mapping[str, Any]) -> str | None:
    """Rank 0's current invocation when its watchdog answered and its unit is active, else None (no evidence)."""
    rank0 = obs.get("rank0") or {}
    if rank0.get("active_state") == "active" and rank0.get("invocation"):
        return str(rank0["invocation"])
    return None


def decide(state: Mapping[str, Any], obs: Mapping[str, Any], cfg: Mapping[str, Any],
           now: float) -> tuple[str, dict[str, Any], str | None]:
    """One check of a rank.  ``obs``: ``active_state`` (systemd ActiveState of the own unit), ``invocation``
    (its InvocationID), ``active_since`` (epoch seconds it became active, optional), ``health_ok`` (rank 0's
    /health_generate answered 200 within the timeout; None when not probed), ``health_error`` and, on ranks
    > 0, ``rank0`` (rank 0's evidence endpoint answer {invocation, active_state}; None when unreachable).  Returns
    (action, new state, journal message or None); action is "none", "restart" or "give_up"."""
    st = dict(state)
    st["restarts"] = [t for t in st.get("restarts", []) if now - t < float(cfg["window"])]
    st["last_check"] = now
    msg = None
    active = obs.get("active_state")
    if obs.get("invocation") and obs.get("invocation") != st.get("invocation"):
        # A new run of the unit (or a new watchdog): its grace counts from when the unit became active.
        st["invocation"], st["started_at"], st["failures"] = obs["invocation"], obs.get("active_since") or now, 0
        st["rank0_invocation"] = None  # the rank 0 this run goes with: the first one seen from now on
    if active == "inactive":  # stopped on purpose (stop.yml, an operator): nothing to heal
        st.update(failures=0, status="unit stopped", last_result="unit inactive")
        return "none", st, None
    if active in ("activating", "deactivating", "reloading"):  # systemd is (re)starting it
        st.update(status="unit " + str(active), last_result="unit " + str(active))
        return "none", st, None
    evidence = None
    rank0 = rank0_now(obs) if int(cfg.get("node_rank", 0)) > 0 else None
    if rank0 and active == "active" and st.get("rank0_invocation") is None:
        st["rank0_invocation"] = rank0
        msg = f"{cfg['unit']} goes with rank 0 invocation {rank0}"
    if active == "failed":
        evidence = f"unit {cfg['unit']} failed"
        st["last_result"] = "unit failed"
    elif obs.get("health_ok"):
        if st.get("given_up") or st.get("failures"):
            msg = f"{cfg['instance_label']} healthy again"
        # A healthy instance runs with this rank 0, whatever its invocation.
        st.update(failures=0, given_up=False, reason=None, status="healthy", last_result="healthy",
                  rank0_invocation=rank0 or st.get("rank0_invocation"))
        return "none", st, msg
    elif rank0 and rank0 != st.get("rank0_invocation"):
        evidence = (f"rank 0 restarted underneath this rank (invocation {st['rank0_invocation']} -> {rank0}) "
                    f"and {cfg['instance_label']} is not healthy")
        st["last_result"] = f"rank 0 now runs as invocation {rank0}"
    else:
        error = obs.get("health_error") or "no answer"
        st["last_result"] = f"rank 0 /health_generate: {error}"
        started = st.get("started_at")
        if started is None or now - started < grace_seconds(cfg):
            st["status"] = "starting"
            return "none", st, msg
        st["failures"] = int(st.get("failures", 0)) + 1
        if st["failures"] < int(cfg["failures"]):
            st["status"] = f"unhealthy ({st['failures']}/{cfg['failures']})"
            return "none", st, msg
        evidence = f"rank 0 /health_generate failed {st['failures']} times in a row (last: {error})"
    if st.get("given_up"):
        st["status"] = "gave up"
        return "none", st, msg
    if len(st["restarts"]) >= int(cfg["max_restarts"]):
        st.update(given_up=True, status="gave up",
                  reason=f"{evidence}; {len(st['restarts'])} restarts within {cfg['window']} s did not heal it")
        return "give_up", st, (f"giving up on {cfg['instance_label']}: {st['reason']}; no more restarts until it is "
                               f"healthy again or this watchdog restarts")
    wait = backoff_seconds(cfg, len(st["restarts"]))
    if st["restarts"] and now - st["restarts"][-1] < wait:
        st["status"] = f"backing off ({wait:g} s between restarts)"
        return "none", st, msg
    st["restarts"].append(now)
    st["restarts_total"] = int(st.get("restarts_total", 0)) + 1
    # The restarted rank goes with the first rank 0 seen after it, as after any (re)start.
    st.update(failures=0, reason=evidence, status="restarting", started_at=now, rank0_invocation=None)
    return "restart", st, (f"restarting {cfg['unit']} ({cfg['instance_label']}, node rank {cfg['node_rank']}): "
                           f"{evidence}; restart {len(st['restarts'])} of at most {cfg['max_restarts']} "
                           f"within {cfg['window']} s")


def decide_worker(wstate: Mapping[str, Any], health_ok: bool, error: str | None,
                  cfg: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """Router side, one instance: "remove" after ``failures`` failed checks in a row (once), "add" at the
    first success after it was removed by this watchdog, else "none"."""
    ws = dict(wstate)
    if health_ok:
        ws.update(failures=0, last_result="healthy")
        return ("add" if ws.get("removed") else "none"), ws
    ws["failures"] = int(ws.get("failures", 0)) + 1
    ws["last_result"] = f"/health_generate: {error or 'no answer'}"
    if ws["failures"] >= int(cfg["failures"]) and not ws.get("removed"):
        return "remove", ws
    return "none", ws


# ----------------------------------------------------------------------------------- effects


def log(msg: str) -> None:
    print(msg, flush=True)


def probe(url: str, timeout: float) -> tuple[bool, str | None]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=timeout) as resp:
            resp.read(4096)
            return resp.status == 200, None if resp.status == 200 else f"HTTP {resp.status}"
    except urllib.error.HTTPError as exc:
        return False, f"HTTP {exc.code}"
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return False, "timed out" if "timed out" in str(reason) else str(reason)


def unit_state(unit: str) -> dict[str, Any]:
    out = subprocess.run(["systemctl", "show", "-p", "ActiveState", "-p", "InvocationID", "-p",
                          "ActiveEnterTimestampMonotonic", unit], capture_output=True, text=True, check=False).stdout
    props = dict(line.partition("=")[::2] for line in out.splitlines() if "=" in line)
    since = None
    try:
        entered = int(props.get("ActiveEnterTimestampMonotonic") or 0) / 1e6  # same clock as /proc/uptime
        with open("/proc/uptime", encoding="ascii") as f:
            uptime = float(f.read().split()[0])
        since = time.time() - (uptime - entered) if entered > 0 else None
    except (OSError, ValueError):
        pass
    return {"active_state": props.get("ActiveState", ""), "invocation": props.get("InvocationID", ""),
            "active_since": since}


def fetch_rank0(url: str, timeout: float) -> dict[str, Any] | None:
    """Rank 0's evidence endpoint: {invocation, active_state}, or None when it does not answer properly."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=timeout) as resp:
            data = json.loads(resp.read(4096).decode("utf-8", "replace"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not all(isinstance(data.get(k), str) for k in ("invocation", "active_state")):
        return None
    return {"invocation": data["invocation"], "active_state": data["active_state"]}


def serve_rank0(cfg: Mapping[str, Any]) -> None:
    """Rank 0's watchdog: answers GET /rank0 with its unit's InvocationID and ActiveState, read from systemd at
    each request (the unit's, so a restarted watchdog serves the same ID).  Read-only; retried while the
    address cannot be bound (the other ranks then fall back to their other evidence)."""
    evidence = cfg["evidence"]
    unit = cfg["unit"]

    class Handler(http.server.BaseHTTPRequestHandler):
        server_version = "sglang-watchdog"

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            if self.path != "/rank0":
                self.send_error(404)
                return
            state = unit_state(unit)
            body = json.dumps({"unit": unit, "invocation": state["invocation"],
                               "active_state": state["active_state"]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # pylint: disable=redefined-builtin
            pass  # one request per rank and interval: not worth a journal line

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True
        address_family = socket.AF_INET6 if ":" in str(evidence["address"]) else socket.AF_INET

    def run() -> None:
        failed = None
        while True:
            try:
                server = Server((evidence["address"], int(evidence["port"])), Handler)
            except OSError as exc:
                if str(exc) != failed:
                    failed = str(exc)
                    log(f"cannot serve rank 0's invocation on {evidence['address']}:{evidence['port']}: {exc}; "
                        f"retrying every {cfg['interval']} s")
                time.sleep(float(cfg["interval"]))
                continue
            log(f"serving rank 0's invocation on {evidence['url']}")
            server.serve_forever()

    threading.Thread(target=run, daemon=True).start()


def write_state(path: str, data: Mapping[str, Any]) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, sort_keys=True)
    os.replace(tmp, path)


def router_call(base: str, method: str, path: str, body: Any = None, timeout: float = 10) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method, headers={"Content-Type": "application/json"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(req, timeout=timeout) as resp:
            text = resp.read().decode("utf-8", "replace")
            return resp.status, (json.loads(text) if text.strip() else {})
    except urllib.error.HTTPError as exc:
        return exc.code, {}
    except (OSError, ValueError) as exc:
        return 0, {"error": str(exc)}


def find_worker(listing: Any, url: str) -> dict[str, Any] | None:
    for worker in (listing or {}).get("workers") or []:
        if str(worker.get("url", "")).rstrip("/") == url.rstrip("/"):
            return worker
    return None


def router_change(base: str, worker: Mapping[str, Any], remove: bool, attempts: int = 5) -> str | None:
    """Takes the worker out of / puts it into sglang-router 0.3.0 (DELETE / POST /workers); a job the router
    reports failed is submitted again (about one in ten fails inside 0.3.0).  None on success, else why."""
    why = "no attempt"
    for _unused in range(attempts):
        code, listing = router_call(base, "GET", "/workers")
        if code != 200:
            return f"GET /workers: {code or listing.get('error')}"
        current = find_worker(listing, worker["url"])
        if remove and current is None or not remove and current is not None:
            return None
        if remove:
            code, answer = router_call(base, "DELETE", f"/workers/{current['id']}")
        else:
            body = {"url": worker["url"], "worker_type": worker["worker_type"]}
            if worker["worker_type"] == "prefill" and worker.get("bootstrap_port") is not None:
                body["bootstrap_port"] = int(worker["bootstrap_port"])
            code, answer = router_call(base, "POST", "/workers", body)
        if code not in (200, 201, 202, 204, 404):
            return f"router refused: HTTP {code}"
        job = answer.get("worker_id") or (current or {}).get("id")
        for _unused in range(20):  # the router applies a change within milliseconds when it succeeds
            time.sleep(0.25)
            code, listing = router_call(base, "GET", "/workers")
            present = find_worker(listing, worker["url"]) is not None
            if code == 200 and present != remove:
                return None
            if job:
                code, record = router_call(base, "GET", f"/workers/{job}")
                status = (record or {}).get("job_status") or {}
                if code == 200 and str(status.get("status", "")).lower() == "failed":
                    why = f"job failed: {status.get('message')}"
                    break
        else:
            why = "not applied in 5 s"
    return why


def run_rank(cfg: Mapping[str, Any]) -> None:
    # A (re)started watchdog starts afresh: a new restart budget and grace; the state file is only its report.
    state = new_state()
    log(f"watching {cfg['unit']} ({cfg['instance_label']}, node rank {cfg['node_rank']} of {cfg['nnodes']}): "
        f"{cfg['health_url']} every {cfg['interval']} s, {cfg['failures']} failures in a row, timeout "
        f"{cfg['timeout']} s, grace {grace_seconds(cfg):g} s, at most {cfg['max_restarts']} restarts "
        f"in {cfg['window']} s" + (f"; rank 0's invocation from {cfg['evidence']['url']}"
                                   if cfg.get("evidence") and int(cfg["node_rank"]) > 0 else ""))
    evidence = cfg.get("evidence")
    if evidence and int(cfg["node_rank"]) == 0:
        serve_rank0(cfg)
    while True:
        obs: dict[str, Any] = dict(unit_state(cfg["unit"]))
        if evidence and int(cfg["node_rank"]) > 0:
            obs["rank0"] = fetch_rank0(evidence["url"], min(float(cfg["timeout"]), 5.0))
        if obs["active_state"] == "active":
            obs["health_ok"], obs["health_error"] = probe(cfg["health_url"], float(cfg["timeout"]))
        action, state, msg = decide(state, obs, cfg, time.time())
        if msg:
            log(msg)
        if action == "restart":
            done = subprocess.run(["systemctl", "reset-failed", cfg["unit"]], check=False, capture_output=True)
            done = subprocess.run(["systemctl", "restart", cfg["unit"]], check=False, capture_output=True, text=True)
            if done.returncode != 0:
                log(f"systemctl restart {cfg['unit']} failed: {done.stderr.strip()}")
            state["invocation"] = unit_state(cfg["unit"])["invocation"]
        write_state(cfg["state_file"], dict(state, kind="rank", unit=cfg["unit"], instance=cfg["instance_label"],
                                            node_rank=cfg["node_rank"], max_restarts=cfg["max_restarts"]))
        time.sleep(float(cfg["interval"]))


def run_router(cfg: Mapping[str, Any]) -> None:
    base = cfg["router_url"].rstrip("/")
    workers: dict[str, dict[str, Any]] = {w["url"]: {"failures": 0, "removed": False} for w in cfg["workers"]}
    log(f"watching {len(cfg['workers'])} instance(s) for router {base}: /health_generate every "
        f"{cfg['interval']} s, out of the router after {cfg['failures']} failures in a row, back at the first success")
    while True:
        for worker in cfg["workers"]:
            ok, error = probe(worker["health_url"], float(cfg["timeout"]))
            action, ws = decide_worker(workers[worker["url"]], ok, error, cfg)
            if action in ("remove", "add"):
                why = router_change(base, worker, remove=action == "remove")
                if why is None:
                    ws["removed"] = action == "remove"
                    log(f"{worker['instance_label']} ({worker['url']}) "
                        + ("taken out of the router: " + ws["last_result"] if action == "remove"
                           else "healthy again: back in the router"))
                else:
                    log(f"could not {'remove' if action == 'remove' else 'add'} {worker['url']}: {why}; next check retries")
            ws["last_check"] = time.time()
            workers[worker["url"]] = ws
        write_state(cfg["state_file"], {"kind": "router", "router_url": base, "workers": [
            dict(workers[w["url"]], instance=w["instance_label"], url=w["url"]) for w in cfg["workers"]]})
        time.sleep(float(cfg["interval"]))


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: sglang_watchdog.py CONFIG.json")
    with open(sys.argv[1], encoding="utf-8") as f:
        cfg = json.load(f)
    (run_router if cfg.get("kind") == "router" else run_rank)(cfg)


if __name__ == "__main__":
    main()
