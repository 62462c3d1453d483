# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Bringing a router's workers to a state through its worker API (sglang-router 0.3.0), bounded: the modules
sglang_router_worker (take out / put back, register) and sglang_wait_healthy (the router's health gate, which
registers the planned instances between /health and /readiness in the same call) share it.

Private to the collection. Runs on the router's host. converge() takes the HTTP call
(``call(method, url, body) -> (status, answer)``, raising RouterGaveUp when the router does not answer; tests give
their own), http_call() is the modules' one. What the API answers, and how 0.3.0 fails its jobs:
module_utils/http/_router_workers.py.
"""

from __future__ import annotations

import json
import time
from typing import Any, Callable, Mapping, Sequence

from ansible.module_utils.urls import open_url

from ansible_collections.ascend.sglang.plugins.module_utils.http._router_workers import (
    find_worker, job_failure, job_settled, unplanned, worker_body,
)

Call = Callable[[str, str, Any], "tuple[int, Any]"]


class RouterGaveUp(Exception):
    """The change could not be made: ``msg`` says why; ``details`` go into the failed result."""

    def __init__(self, msg: str, **details: Any) -> None:
        super().__init__(msg)
        self.msg = msg
        self.details = details


def http_call(timeout: int) -> Call:
    """The router's HTTP API as converge() calls it: (status, JSON answer), never through a proxy; no answer at
    all raises RouterGaveUp."""
    def call(method: str, url: str, body: Any = None) -> "tuple[int, Any]":
        data = json.dumps(body) if body is not None else None
        try:
            resp = open_url(url, method=method, data=data, headers={"Content-Type": "application/json"},
                            timeout=timeout, use_proxy=False, validate_certs=False)
            text = resp.read().decode("utf-8", "replace")
            return resp.getcode(), (json.loads(text) if text.strip() else {})
        except Exception as exc:  # pylint: disable=broad-except
            code = getattr(exc, "code", None)
            if code is None:
                raise RouterGaveUp(f"{method} {url}: no answer from the router ({exc})") from None
            return code, {}
    return call


class _Convergence:
    """One converge() run: the router's base URL, the bounds, and what the run has sent and seen so far (the
    submissions and the job failures its result reports)."""

    def __init__(self, call: Call, router_url: str, wait_timeout: float, max_attempts: int) -> None:
        self.call = call
        self.base = router_url.rstrip("/")
        self.wait_timeout = wait_timeout
        self.max_attempts = max_attempts
        self.start = time.monotonic()
        self.failures: list[str] = []
        self.submissions: list[str] = []  # "add" / "remove", in the order sent

    def waited(self) -> float:
        return round(time.monotonic() - self.start, 1)

    def give_up(self, msg: str, worker: Mapping[str, Any] | None) -> None:
        raise RouterGaveUp(msg, worker=dict(worker or {}), waited_s=self.waited(), attempts=len(self.submissions),
                           job_failures=list(self.failures))

    def listing(self) -> Any:
        code, answer = self.call("GET", self.base + "/workers", None)
        if code == 404:
            raise RouterGaveUp(f"{self.base} has no worker API (GET /workers: 404): a --mini-lb router cannot "
                               "take workers out; restart without the router step")
        if code != 200:
            raise RouterGaveUp(f"GET {self.base}/workers answered {code}")
        return answer

    @staticmethod
    def records(listing_now: Any, wanted: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """The router's record of each wanted worker, in order ({} where absent)."""
        return [find_worker(listing_now, want["url"]) or {} for want in wanted]

    @staticmethod
    def holds(worker: Mapping[str, Any] | None, gone: bool) -> bool:
        return (worker is None) if gone else (worker is not None and bool(worker.get("is_healthy")))

    def settled(self, job_id: str) -> dict[str, Any] | None:
        """The ``GET /workers/{id}`` answer once the job behind it has finished, else None."""
        code, record = self.call("GET", f"{self.base}/workers/{job_id}", None)
        return (record or {}) if job_settled(code, record) else None

    def lookup(self, url: str) -> dict[str, Any] | None:
        return find_worker(self.listing(), url)

    def poll(self, what: str, url: str, began: float, done: Callable[[], Any]) -> Any:
        """Polls ``done()`` (a value, or None while not there) until it answers, bounded by wait_timeout."""
        polls = 0
        while True:
            value = done()
            if value is not None:
                return value
            if time.monotonic() - began > self.wait_timeout:
                self.give_up(f"router did not {what} {url} within {self.wait_timeout} s", self.lookup(url))
            # A change takes the router milliseconds when nothing waits on the worker: poll soon, then every
            # second.
            time.sleep(min(1.0, 0.1 * 2 ** polls))
            polls += 1

    def submit(self, want: Mapping[str, Any], gone: bool, began: float,
               worker: Mapping[str, Any] | None) -> str | None:
        """Queues one change and waits until its job settled; returns the router's failure message or None."""
        url = want["url"]
        verb = "remove" if gone else "add"
        if gone:
            code, answer = self.call("DELETE", f"{self.base}/workers/{(worker or {}).get('id')}", None)
            accepted: tuple[int, ...] = (200, 202, 204, 404)  # 404: removed meanwhile
        else:
            code, answer = self.call("POST", self.base + "/workers",
                                     worker_body(url, want["worker_type"], want.get("bootstrap_port")))
            accepted = (200, 201, 202)
        self.submissions.append(verb)
        if code not in accepted:
            self.give_up(f"router refused the change: HTTP {code} {answer}", worker)
        job_id = (answer or {}).get("worker_id") or ((worker or {}).get("id") if gone else None)
        if not job_id:
            return None
        record = self.poll("finish the job to " + verb, url, began, lambda: self.settled(job_id))
        return job_failure(record)

    def converge_one(self, want: Mapping[str, Any], gone: bool, began: float, mine: list[str]) -> str | None:
        """Submits the change of one worker until the router reports it done; returns the failure message of a
        job that failed after its change took effect (None when the last job succeeded). ``began`` and ``mine``
        (this worker's job failures) span every call for one worker: wait_timeout and max_attempts bound each
        worker, the take-out-and-add-again of a late failure included."""
        url = want["url"]
        verb = "remove" if gone else "add"
        while True:
            worker = self.lookup(url)
            if self.holds(worker, gone):
                return None
            if not gone and worker is not None:
                # Listed, not yet healthy (added by someone else or still starting): wait, send nothing.
                self.poll("see healthy", url, began, lambda: True if self.holds(self.lookup(url), False) else None)
                return None
            failure = self.submit(want, gone, began, worker)
            if failure is None:
                self.poll(verb, url, began, lambda: True if self.holds(self.lookup(url), gone) else None)
                return None
            self.failures.append(failure)
            mine.append(failure)
            if len(mine) >= self.max_attempts:
                self.give_up(f"router failed to {verb} {url} {len(mine)} times: {failure}", self.lookup(url))
            if self.holds(self.lookup(url), gone):
                return failure
            # The failed job changed nothing: submit it again after a pause, bounded by the attempts and the time.
            pause = min(4.0, 0.25 * 2 ** (len(mine) - 1))
            if time.monotonic() + pause - began > self.wait_timeout:
                self.give_up(f"router failed to {verb} {url} {len(mine)} times within {self.wait_timeout} s: "
                             f"{failure}", self.lookup(url))
            time.sleep(pause)


def converge(call: Call, router_url: str, wanted: Sequence[Mapping[str, Any]], *, absent: bool = False,
             wait_timeout: float = 300, max_attempts: int = 20, check_mode: bool = False,
             warn: Callable[[str], None] = lambda text: None) -> dict[str, Any]:
    """Brings every worker of ``wanted`` ({url, worker_type, bootstrap_port}) to listed-and-healthy (or, with
    ``absent``, to not listed), one after the other, after one look at the router's list. ``wait_timeout`` and
    ``max_attempts`` bound each worker. Returns {changed, worker, workers, waited_s, attempts, job_failures};
    raises RouterGaveUp."""
    run = _Convergence(call, router_url, wait_timeout, max_attempts)
    # One look at the router's list decides which workers need a change at all.
    current = run.listing()
    todo = [want for want in wanted if not run.holds(find_worker(current, want["url"]), absent)]
    if not todo or check_mode:
        found = run.records(current, wanted)
        return {"changed": bool(todo), "worker": found[-1] if found else {}, "workers": found, "waited_s": 0.0,
                "attempts": 0, "job_failures": []}
    for want in todo:
        began, mine = time.monotonic(), []
        late = run.converge_one(want, absent, began, mine)
        while late and not absent:
            # The worker is listed, but the router stopped its registration before the tokenizer and policy
            # steps: take it out and add it again, so that it is registered whole.
            run.converge_one(want, True, began, mine)
            late = run.converge_one(want, False, began, mine)
        if late:
            warn(f"sglang-router removed {want['url']} but reported the job failed ({late}): only the "
                 "re-initialisation of the other workers' cache-aware policies was skipped")
    found = run.records(run.listing(), wanted)
    return {"changed": bool(run.submissions), "worker": found[-1] if found else {}, "workers": found,
            "waited_s": run.waited(), "attempts": len(run.submissions), "job_failures": run.failures}


def apply_planned(call: Call, router_url: str, planned: Sequence[Mapping[str, Any]], *, wait_timeout: float = 300,
                  max_attempts: int = 20, check_mode: bool = False,
                  warn: Callable[[str], None] = lambda text: None) -> dict[str, Any]:
    """Makes the router's workers the planned ones: every planned worker listed and healthy (converge()), then every
    worker the plan no longer has taken out, so that a router that a change of instances did not restart routes
    to the planned ones only. Returns converge()'s result of the planned workers with ``removed`` (the URLs taken
    out) and ``changed`` of both; raises RouterGaveUp."""
    got = converge(call, router_url, planned, wait_timeout=wait_timeout, max_attempts=max_attempts,
                   check_mode=check_mode, warn=warn)
    code, listing = call("GET", router_url.rstrip("/") + "/workers", None)
    if code != 200:
        raise RouterGaveUp(f"GET {router_url.rstrip('/')}/workers answered {code}")
    extra = unplanned(listing, [want["url"] for want in planned])
    removed = [worker["url"] for worker in extra]
    if extra:
        gone = converge(call, router_url, extra, absent=True, wait_timeout=wait_timeout, max_attempts=max_attempts,
                        check_mode=check_mode, warn=warn)
        got = dict(got, attempts=got["attempts"] + gone["attempts"],
                   job_failures=got["job_failures"] + gone["job_failures"], waited_s=got["waited_s"] + gone["waited_s"])
    return dict(got, changed=bool(got["changed"] or removed), removed=removed)
