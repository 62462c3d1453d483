"""Bringing a router's workers to a state (module_utils/http/_router_converge.py), against a scripted stand-in of
sglang-router 0.3.0's worker API that fails jobs as the real one does (a failure before the change took effect,
an addition listed before its last steps failed). The real router: tests/integration/test_router_worker.py.
Pure Python; the stand-in answers at once, so every wait ends at its first poll."""

from __future__ import annotations

import pytest

from ansible_collections.ascend.sglang.plugins.module_utils.http._router_converge import (
    RouterGaveUp, apply_planned, converge)

PREFILL = {"url": "http://10.0.0.11:8000", "worker_type": "prefill", "bootstrap_port": 8998}
DECODE = {"url": "http://10.0.0.13:8001", "worker_type": "decode", "bootstrap_port": None}


class Router:
    """The worker API; ``fail`` lists, per POST in order, how the job ends: "ok", "early" (failed at
    create_worker: nothing changed) or "late" (the worker listed, then the job failed)."""

    def __init__(self, listed=(), fail=()):
        self.workers = {w["url"]: {"id": f"w{i}", "url": w["url"], "worker_type": w["worker_type"], "is_healthy": True}
                        for i, w in enumerate(listed)}
        self.fail = list(fail)
        self.jobs, self.calls = {}, []

    def __call__(self, method, url, body=None):
        self.calls.append((method, url.split("/", 3)[-1]))
        path = "/" + url.split("/", 3)[-1]
        if method == "GET" and path == "/workers":
            return 200, {"workers": list(self.workers.values())}
        if method == "POST":
            job = f"j{len(self.jobs)}"
            outcome = self.fail.pop(0) if self.fail else "ok"
            if outcome in ("ok", "late"):
                self.workers[body["url"]] = {"id": job, "url": body["url"], "worker_type": body["worker_type"],
                                             "is_healthy": True}
            self.jobs[job] = outcome
            return 202, {"worker_id": job}
        if method == "DELETE":
            wid = path.rsplit("/", 1)[-1]
            self.workers = {u: w for u, w in self.workers.items() if w["id"] != wid}
            return 202, {"worker_id": wid}
        if method == "GET" and path.startswith("/workers/"):
            job = path.rsplit("/", 1)[-1]
            outcome = self.jobs.get(job, "ok")
            if outcome == "ok":
                return (200, {"id": job}) if any(w["id"] == job for w in self.workers.values()) else (404, {})
            step = "create_worker" if outcome == "early" else "register_tokenizer"
            return 200, {"id": job, "job_status": {"job_type": "AddWorker", "status": "failed",
                                                   "message": f"Workflow failed at step {step}"}}
        raise AssertionError((method, url))


def test_nothing_to_do_sends_nothing() -> None:
    router = Router(listed=[PREFILL, DECODE])
    got = converge(router, "http://r:6688/", [PREFILL, DECODE])
    assert not got["changed"] and got["attempts"] == 0 and [w["url"] for w in got["workers"]] == [
        PREFILL["url"], DECODE["url"]]
    assert [c for c in router.calls if c[0] != "GET"] == []


def test_a_missing_worker_is_added_and_an_early_failure_submitted_again(monkeypatch) -> None:
    monkeypatch.setattr("time.sleep", lambda s: None)
    router = Router(listed=[DECODE], fail=["early", "ok"])
    got = converge(router, "http://r:6688", [PREFILL, DECODE])
    assert got["changed"] and got["attempts"] == 2
    assert got["job_failures"] == ["AddWorker failed: Workflow failed at step create_worker"]
    assert got["workers"][0]["url"] == PREFILL["url"] and got["workers"][0]["is_healthy"]


def test_a_late_failure_is_taken_out_and_added_again(monkeypatch) -> None:
    monkeypatch.setattr("time.sleep", lambda s: None)
    router = Router(fail=["late", "ok"])
    got = converge(router, "http://r:6688", [PREFILL])
    assert [c[0] for c in router.calls if c[0] != "GET"] == ["POST", "DELETE", "POST"]
    assert got["attempts"] == 3 and got["workers"][0]["is_healthy"]


def test_check_mode_and_the_bounds(monkeypatch) -> None:
    monkeypatch.setattr("time.sleep", lambda s: None)
    router = Router()
    assert converge(router, "http://r:6688", [PREFILL], check_mode=True)["changed"]
    assert [c for c in router.calls if c[0] != "GET"] == []
    with pytest.raises(RouterGaveUp) as failed:
        converge(Router(fail=["early"] * 5), "http://r:6688", [PREFILL], max_attempts=3)
    assert "failed to add http://10.0.0.11:8000 3 times" in failed.value.msg
    assert failed.value.details["attempts"] == 3 and len(failed.value.details["job_failures"]) == 3
    with pytest.raises(RouterGaveUp, match="no worker API"):
        converge(lambda method, url, body=None: (404, {}), "http://r:6688", [PREFILL])


def test_the_planned_list_is_applied_whole(monkeypatch) -> None:
    """A router that a change of instances did not restart: the planned workers are added, the others taken out
    (an instance the plan no longer has); nothing is sent when the list is the planned one."""
    monkeypatch.setattr("time.sleep", lambda s: None)
    gone = {"url": "http://10.0.0.14:8001", "worker_type": "decode", "bootstrap_port": None}
    router = Router(listed=[DECODE, gone])
    got = apply_planned(router, "http://r:6688", [PREFILL, DECODE])
    assert got["changed"] and got["removed"] == [gone["url"]]
    assert sorted(router.workers) == sorted([PREFILL["url"], DECODE["url"]])
    assert [c[0] for c in router.calls if c[0] != "GET"] == ["POST", "DELETE"]
    again = Router(listed=[PREFILL, DECODE])
    got = apply_planned(again, "http://r:6688", [PREFILL, DECODE])
    assert not got["changed"] and got["removed"] == [] and [c for c in again.calls if c[0] != "GET"] == []
    # Check mode: says what it would take out, changes nothing.
    looked = Router(listed=[DECODE, gone])
    got = apply_planned(looked, "http://r:6688", [DECODE], check_mode=True)
    assert got["changed"] and got["removed"] == [gone["url"]] and sorted(looked.workers) == sorted([DECODE["url"],
                                                                                                    gone["url"]])
