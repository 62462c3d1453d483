"""The router worker API as the module sglang_router_worker uses it (sglang-router 0.3.0): a worker in a listing,
the body of an addition, a queued job's failure and whether it settled. Pure Python, no host, no Ansible."""

from __future__ import annotations

import pytest

from ansible_collections.ascend.sglang.plugins.module_utils.http._router_workers import (
    find_worker, job_failure, job_settled, worker_body,
)

LISTING = {"workers": [
    {"id": "a", "url": "http://10.0.0.11:8000", "worker_type": "prefill", "is_healthy": True, "bootstrap_port": 8998},
    {"id": "b", "url": "http://10.0.0.13:8001/", "worker_type": "decode", "is_healthy": False},
    {"id": "c", "url": "http://10.9.9.9:8000", "worker_type": "decode", "is_healthy": True}], "total": 3}


def test_find_worker_and_body() -> None:
    assert find_worker(LISTING, "http://10.0.0.13:8001")["id"] == "b"
    assert find_worker(LISTING, "http://10.0.0.12:8000") is None and find_worker(None, "x") is None
    assert worker_body("http://h:1", "prefill", 8998) == {
        "url": "http://h:1", "worker_type": "prefill", "bootstrap_port": 8998}
    assert worker_body("http://h:1", "decode", 8998) == {"url": "http://h:1", "worker_type": "decode"}
    with pytest.raises(ValueError):
        worker_body("http://h:1", "mixed")


def test_job_failure_reads_the_routers_job_status() -> None:
    # GET /workers/{id} of a failed addition, as sglang-router 0.3.0 answers it.
    failed = {"id": "a370d5e9", "url": "http://h:8000", "worker_type": "unknown", "is_healthy": False,
              "job_status": {"job_type": "AddWorker", "worker_url": "http://h:8000", "status": "failed",
                             "message": "Workflow failed at step create_worker: Unknown error"}}
    assert job_failure(failed) == "AddWorker failed: Workflow failed at step create_worker: Unknown error"
    pending = dict(failed, job_status=dict(failed["job_status"], status="pending"))
    assert job_failure(pending) is None
    assert job_failure({"id": "a", "url": "http://h:8000", "is_healthy": True}) is None
    assert job_failure(None) is None and job_failure({"job_status": "failed"}) is None


def test_a_job_is_judged_only_once_it_settled() -> None:
    # GET /workers/{id} answers of sglang-router 0.3.0 while an addition runs, once it is done, and for removals.
    job = {"job_type": "AddWorker", "worker_url": "http://h:8000", "message": None, "status": "processing"}
    listed_healthy = {"id": "a", "url": "http://h:8000", "is_healthy": True}
    assert not job_settled(200, dict(listed_healthy, job_status=job))  # listed, healthy, still registering
    assert not job_settled(200, {"job_status": dict(job, status="pending")})
    assert job_settled(200, listed_healthy)  # registered: the job is gone from the record
    assert job_settled(200, {"job_status": dict(job, status="failed", message="Workflow failed at step x")})
    assert job_settled(404, {"error": "Worker a not found", "code": "WORKER_NOT_FOUND"})  # removed
    assert not job_settled(503, {})
