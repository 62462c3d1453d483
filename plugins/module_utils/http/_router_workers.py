# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The router's worker API (sglang-router 0.3.0) as the module sglang_router_worker uses it on the router's host:
a worker in a listing, the body of an addition, whether a queued change has settled and how it failed.

Private to the collection; pure, no Ansible import.

sglang-router 0.3.0 (the Rust model gateway) manages workers through a REST resource, checked against
the released wheel: ``GET /workers`` lists ``{"workers": [{"id", "url", "worker_type", "is_healthy",
"bootstrap_port"?...}], "total", "stats"}``; ``POST /workers`` with ``{"url", "worker_type":
"regular"|"prefill"|"decode", "bootstrap_port"?}`` queues an addition (202; the worker appears once its
/health answers; posting a listed URL again is accepted and changes nothing); ``DELETE /workers/{id}``
queues a removal (202).  Both answer ``{"worker_id", "location": "/workers/{id}", ...}``; while the worker
is not (or no longer) listed, ``GET /workers/{id}`` carries the queued job's ``job_status``
(``{"job_type", "status", "message"}``).  There is no ``/add_worker`` / ``/remove_worker`` in this release.
The ``--mini-lb`` router (pure Python) has none of these routes (404).

Measured on 0.3.0: a share of the changes fails inside the router for a healthy worker (from 1 in 30 on an
idle machine to 2 in 5 on a busy one; ``job_status.status == "failed"``, logged as "Failed job" after
"Workflow deadlocked: no steps ready and none running": its workflow scheduler can miss the completion of a
step that finishes at once).  The workflow stops after the step named in the message:
- before the change took effect ("at step create_worker" for an addition, "at step find_workers_to_remove"
  for a removal): nothing changed, and submitting the change again is safe;
- after it took effect: a removal failed "at step remove_from_worker_registry" has removed the worker and
  skipped only ``update_remaining_policies`` (the re-initialisation of the other workers' cache-aware
  policies); the API does not show that failure (``GET /workers/{id}`` answers 404, as for a completed
  removal), and there is nothing to repair; an addition that failed after its worker was listed has skipped
  the steps that register its tokenizer and policy, so the worker module takes it out and adds it again.
A change is therefore judged only once its job has settled (``job_settled``): an added worker is listed, and
even healthy, while its job is still processing.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping


def find_worker(listing: Mapping[str, Any] | None, url: str) -> dict[str, Any] | None:
    """The worker of ``url`` in a ``GET /workers`` answer (trailing slashes ignored)."""
    want = url.rstrip("/")
    for worker in (listing or {}).get("workers") or []:
        if str(worker.get("url", "")).rstrip("/") == want:
            return dict(worker)
    return None


def unplanned(listing: Mapping[str, Any] | None, planned: Iterable[str]) -> list[dict[str, Any]]:
    """The workers of a ``GET /workers`` answer whose URL is none of ``planned`` (trailing slashes ignored), each as
    {url, worker_type}: what a router keeps of instances the plan no longer has."""
    wanted = {str(url).rstrip("/") for url in planned}
    return [{"url": str(worker.get("url", "")), "worker_type": str(worker.get("worker_type") or "regular")}
            for worker in (listing or {}).get("workers") or []
            if str(worker.get("url", "")).rstrip("/") not in wanted]


def job_failure(record: Mapping[str, Any] | None) -> str | None:
    """The router's message when a ``GET /workers/{id}`` answer reports its queued job as failed; None while
    the job is queued or running, or once the worker is registered (no ``job_status``)."""
    job = (record or {}).get("job_status")
    if not isinstance(job, Mapping) or str(job.get("status", "")).lower() != "failed":
        return None
    return f"{job.get('job_type') or 'job'} failed: {job.get('message') or 'no message'}"


def job_settled(code: int, record: Mapping[str, Any] | None) -> bool:
    """Whether the job behind a ``GET /workers/{id}`` answer has finished (succeeded or failed).

    While the router works on a queued change the answer carries ``job_status`` ``pending`` or
    ``processing`` (an added worker is listed, even healthy, before its last steps ran); once it is done the
    answer is the worker's record without ``job_status`` (added), 404 (removed) or a ``failed`` job status."""
    if code == 404:
        return True
    job = (record or {}).get("job_status")
    if not isinstance(job, Mapping):
        return code == 200
    return str(job.get("status", "")).lower() not in ("pending", "processing", "queued", "running")


def worker_body(url: str, worker_type: str, bootstrap_port: int | None = None) -> dict[str, Any]:
    """The ``POST /workers`` body; PD prefill workers need their bootstrap port."""
    if worker_type not in ("regular", "prefill", "decode"):
        raise ValueError(f"worker_type must be regular, prefill or decode, not {worker_type!r}")
    body: dict[str, Any] = {"url": url, "worker_type": worker_type}
    if worker_type == "prefill" and bootstrap_port is not None:
        body["bootstrap_port"] = int(bootstrap_port)
    return body
