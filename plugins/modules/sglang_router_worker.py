#!/usr/bin/python
# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Take a worker out of / put it back into a running sglang-router (0.3.0 worker API)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: sglang_router_worker
short_description: Remove a worker from, or add it to, a running sglang-router and wait until it took effect
description:
  - Uses the worker API of sglang-router 0.3.0 (the Rust model gateway), from the router's host
    - C(GET /workers) to look the worker up by URL, C(DELETE /workers/{id}) to remove it,
    C(POST /workers) with C(url), C(worker_type) and, for PD prefill workers, C(bootstrap_port) to add it.
  - Both operations are queued by the router; the module then polls C(GET /workers) (bounded by
    O(wait_timeout)) until the worker is gone, or listed and healthy.
  - When the router reports the queued job as failed (C(GET /workers/{id}) C(job_status.status=failed); sglang-router
    0.3.0 fails about one change in ten inside its workflow scheduler), the change is submitted again, up to
    O(max_attempts) times in all.
  - C(changed) only when a worker was removed or added. In check mode nothing is sent beyond the lookup.
  - A C(--mini-lb) router has no worker API; the module fails saying so (the restart playbook does not call it
    for such routers).
version_added: 0.3.0
options:
  router_url:
    description: Base URL of the router as its own host reaches it, e.g. C(http://127.0.0.1:6688).
    type: str
    required: true
  url:
    description: The worker's URL as the router knows it (the plan's rank-0 C(http://host:port)).
    type: str
    required: true
  worker_type:
    description: C(regular) (PD-mixed), C(prefill) or C(decode).
    type: str
    choices: [regular, prefill, decode]
    default: regular
  bootstrap_port:
    description: The prefill worker's disaggregation bootstrap port.
    type: int
  state:
    description: C(absent) takes the worker out, C(present) puts it back and waits until it is healthy.
    type: str
    choices: [present, absent]
    default: present
  wait_timeout:
    description: Seconds to wait for the router to apply the change.
    type: int
    default: 300
  max_attempts:
    description: How many times the change is submitted in all when the router reports its job failed.
    type: int
    default: 5
  timeout:
    description: Seconds to wait for each HTTP answer.
    type: int
    default: 10
extends_documentation_fragment:
  - ascend.sglang.attributes.host
author:
  - ascend.sglang contributors
"""

EXAMPLES = r"""
- name: Take prefill instance 0 out of the router
  ascend.sglang.sglang_router_worker:
    router_url: http://127.0.0.1:6688
    url: http://198.51.100.11:8000
    worker_type: prefill
    bootstrap_port: 8998
    state: absent
  delegate_to: router-0
"""

RETURN = r"""
worker:
  description: The router's record of the worker after the change (C(id), C(url), C(worker_type), C(is_healthy), ...);
    empty when absent.
  returned: always
  type: dict
waited_s:
  description: Seconds spent waiting for the router.
  returned: always
  type: float
attempts:
  description: How many times the change was submitted (0 when nothing had to be sent).
  returned: always
  type: int
job_failures:
  description: The router's messages for the jobs it reported failed (each was submitted again).
  returned: always
  type: list
  elements: str
"""

import json
import time

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.urls import open_url

from ansible_collections.ascend.sglang.plugins.module_utils._ops import find_worker, job_failure, worker_body


def _call(module, method, url, body=None):
    data = json.dumps(body) if body is not None else None
    try:
        resp = open_url(url, method=method, data=data, headers={"Content-Type": "application/json"},
                        timeout=module.params["timeout"], use_proxy=False, validate_certs=False)
        text = resp.read().decode("utf-8", "replace")
        return resp.getcode(), (json.loads(text) if text.strip() else {})
    except Exception as exc:
        code = getattr(exc, "code", None)
        if code is None:
            module.fail_json(msg=f"{method} {url}: no answer from the router ({exc})")
        return code, {}


def main():
    module = AnsibleModule(
        argument_spec={
            "router_url": {"type": "str", "required": True},
            "url": {"type": "str", "required": True},
            "worker_type": {"type": "str", "default": "regular", "choices": ["regular", "prefill", "decode"]},
            "bootstrap_port": {"type": "int"},
            "state": {"type": "str", "default": "present", "choices": ["present", "absent"]},
            "wait_timeout": {"type": "int", "default": 300},
            "max_attempts": {"type": "int", "default": 5},
            "timeout": {"type": "int", "default": 10},
        },
        supports_check_mode=True,
    )
    p = module.params
    base = p["router_url"].rstrip("/")
    wanted_absent = p["state"] == "absent"
    verb = "remove" if wanted_absent else "add"

    def lookup():
        code, listing = _call(module, "GET", base + "/workers")
        if code == 404:
            module.fail_json(msg=f"{base} has no worker API (GET /workers: 404): a --mini-lb router cannot "
                                 "take workers out; restart without the router step")
        if code != 200:
            module.fail_json(msg=f"GET {base}/workers answered {code}")
        return find_worker(listing, p["url"])

    def is_done(worker):
        return (worker is None) if wanted_absent else (worker is not None and bool(worker.get("is_healthy")))

    current = lookup()
    # A listed but not yet healthy worker is only waited for: nothing is sent, nothing changes.
    changed = (current is not None) if wanted_absent else (current is None)
    if is_done(current) or module.check_mode:
        module.exit_json(changed=changed, worker=current or {}, waited_s=0.0, attempts=0, job_failures=[])

    # From here on a change is sent unless the worker is listed but not yet healthy (changed is false then).
    # Each resubmission follows a reported job failure: attempts = failures + the outstanding submission.
    failures = []

    def attempts():
        return len(failures) + int(changed)

    def submit(worker):
        """Queue the change; returns the router's id for the job, whose status tells whether it failed."""
        if wanted_absent:
            code, answer = _call(module, "DELETE", f"{base}/workers/{worker['id']}")
            accepted = (200, 202, 204, 404)  # 404: removed meanwhile
        else:
            code, answer = _call(module, "POST", base + "/workers",
                                 worker_body(p["url"], p["worker_type"], p["bootstrap_port"]))
            accepted = (200, 201, 202)
        if code not in accepted:
            module.fail_json(msg=f"router refused the change: HTTP {code} {answer}", worker=worker or {},
                             attempts=attempts(), job_failures=failures)
        return answer.get("worker_id") or (worker["id"] if wanted_absent else None)

    job_id = submit(current) if changed else None
    start = time.monotonic()
    polls = 0
    while True:
        # The router applies a change within milliseconds when it succeeds: poll soon, then every second.
        time.sleep(min(1.0, 0.2 * 2 ** polls))
        polls += 1
        current = lookup()
        waited = round(time.monotonic() - start, 1)
        if is_done(current):
            module.exit_json(changed=changed, worker=current or {}, waited_s=waited, attempts=attempts(),
                             job_failures=failures)
        # The router reports a failed job on GET /workers/{id}; a failed job changed nothing, so it is queued
        # again (sglang-router 0.3.0 fails about one change in ten, see module_utils/_ops.py).
        failure = None
        if job_id and (wanted_absent or current is None):
            code, record = _call(module, "GET", f"{base}/workers/{job_id}")
            failure = job_failure(record) if code == 200 else None
        if failure:
            failures.append(failure)
            if len(failures) >= p["max_attempts"]:
                module.fail_json(msg=f"router failed to {verb} {p['url']} {len(failures)} times: {failure}",
                                 worker=current or {}, waited_s=waited, attempts=len(failures),
                                 job_failures=failures)
            job_id = submit(current)
            continue
        if waited > p["wait_timeout"]:
            module.fail_json(msg=f"router did not {verb} {p['url']} within {p['wait_timeout']} s",
                             worker=current or {}, waited_s=waited, attempts=attempts(), job_failures=failures)


if __name__ == "__main__":
    main()
