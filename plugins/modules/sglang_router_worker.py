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
  - Both operations are queued by the router as jobs. The module waits (bounded by O(wait_timeout)) until its job
    has settled (C(GET /workers/{id}) no longer reports it C(pending) or C(processing)), then until the worker is
    gone, or listed and healthy. An added worker is listed, even healthy, before its job has finished.
  - sglang-router 0.3.0 fails a share of the changes inside its workflow scheduler (C(job_status.status=failed),
    C(Workflow deadlocked), a race inside the router that a busy router host loses more often; measured up to
    6 removals in 10 on two busy cores, in bursts of several seconds). A job that failed before its change took
    effect is submitted again. A removal that failed after the worker was
    removed is reported with a warning (the router skipped only re-initialising the other workers' cache-aware
    policies). An addition that failed after the worker was listed (its tokenizer and policy steps skipped) is
    undone and submitted again. Each resubmission waits a pause that doubles with each failure, from 0.25 s to 4 s
    (the failures come in bursts). The module gives up after O(max_attempts) job failures of one worker, or once
    a resubmission would start after O(wait_timeout).
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
    description:
      - The worker's URL as the router knows it (the plan's rank-0 C(http://host:port)).
      - Exactly one of O(url) and O(workers) is required.
    type: str
  worker_type:
    description: C(regular) (PD-mixed), C(prefill) or C(decode), with O(url).
    type: str
    choices: [regular, prefill, decode]
    default: regular
  bootstrap_port:
    description: The prefill worker's disaggregation bootstrap port, with O(url).
    type: int
  workers:
    description:
      - Several workers brought to the same O(state) in one call, one after the other, after one look at the
        router's list (a deployment registers every planned instance with one call per router).
    type: list
    elements: dict
    suboptions:
      url:
        description: As O(url).
        type: str
        required: true
      worker_type:
        description: As O(worker_type).
        type: str
        choices: [regular, prefill, decode]
        default: regular
      bootstrap_port:
        description: As O(bootstrap_port).
        type: int
  state:
    description: C(absent) takes the worker out, C(present) puts it back and waits until it is healthy.
    type: str
    choices: [present, absent]
    default: present
  wait_timeout:
    description: Seconds to wait for the router to apply the change of each worker.
    type: int
    default: 300
  max_attempts:
    description:
      - How many job failures the router may report for one worker before the module gives up.
      - The default of 20 outlasts the router's bursts of failed jobs (about a minute of resubmissions).
    type: int
    default: 20
  timeout:
    description: Seconds to wait for each HTTP answer.
    type: int
    default: 10
extends_documentation_fragment:
  - ascend.sglang.attributes.host
author:
  - ascend.sglang maintainers (!UNKNOWN)
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

- name: Register two instances with the router of this host (one look at its list, then what is missing)
  ascend.sglang.sglang_router_worker:
    router_url: http://127.0.0.1:6688
    workers:
      - url: http://198.51.100.11:8000
        worker_type: prefill
        bootstrap_port: 8998
      - url: http://198.51.100.13:8001
        worker_type: decode
"""

RETURN = r"""
worker:
  description: The router's record of the worker after the change (C(id), C(url), C(worker_type), C(is_healthy), ...);
    empty when absent. With O(workers), the record of the last one.
  returned: always
  type: dict
workers:
  description: The router's record of each worker of O(workers) (or of O(url)) after the change, in order; empty
    dicts for the absent ones.
  returned: always
  type: list
  elements: dict
waited_s:
  description: Seconds spent waiting for the router.
  returned: always
  type: float
attempts:
  description: How many changes were submitted (0 when nothing had to be sent); more than one per worker when the
    router reported jobs failed.
  returned: always
  type: int
job_failures:
  description: The router's messages for every job of these changes that it reported failed, in order.
  returned: always
  type: list
  elements: str
"""

import json
import time

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.urls import open_url

from ansible_collections.ascend.sglang.plugins.module_utils._router_workers import (
    find_worker, job_failure, job_settled, worker_body,
)


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
    one_worker = {
        "worker_type": {"type": "str", "default": "regular", "choices": ["regular", "prefill", "decode"]},
        "bootstrap_port": {"type": "int"},
    }
    module = AnsibleModule(
        argument_spec={
            "router_url": {"type": "str", "required": True},
            "url": {"type": "str"},
            **one_worker,
            "workers": {"type": "list", "elements": "dict",
                        "options": {"url": {"type": "str", "required": True}, **one_worker}},
            "state": {"type": "str", "default": "present", "choices": ["present", "absent"]},
            "wait_timeout": {"type": "int", "default": 300},
            "max_attempts": {"type": "int", "default": 20},
            "timeout": {"type": "int", "default": 10},
        },
        required_one_of=[["url", "workers"]],
        mutually_exclusive=[["url", "workers"]],
        supports_check_mode=True,
    )
    p = module.params
    base = p["router_url"].rstrip("/")
    wanted_absent = p["state"] == "absent"
    wanted = p["workers"] if p["workers"] is not None else [
        {"url": p["url"], "worker_type": p["worker_type"], "bootstrap_port": p["bootstrap_port"]}]
    start = time.monotonic()
    failures = []
    submissions = []  # "add" / "remove", in the order sent

    def waited():
        return round(time.monotonic() - start, 1)

    def give_up(msg, worker):
        module.fail_json(msg=msg, worker=worker or {}, waited_s=waited(), attempts=len(submissions),
                         job_failures=failures)

    def listing():
        code, answer = _call(module, "GET", base + "/workers")
        if code == 404:
            module.fail_json(msg=f"{base} has no worker API (GET /workers: 404): a --mini-lb router cannot "
                                 "take workers out; restart without the router step")
        if code != 200:
            module.fail_json(msg=f"GET {base}/workers answered {code}")
        return answer

    def records(listing_now):
        """The router's record of each wanted worker, in order ({} where absent)."""
        return [find_worker(listing_now, want["url"]) or {} for want in wanted]

    def holds(worker, absent):
        return (worker is None) if absent else (worker is not None and bool(worker.get("is_healthy")))

    def converge(want, absent, began, mine):
        """Submits the change of one worker until the router reports it done; returns the failure message of a
        job that failed after its change took effect (None when the last job succeeded). ``began`` and ``mine``
        (this worker's job failures) span every call for one worker: wait_timeout and max_attempts bound each
        worker, the take-out-and-add-again of a late failure included."""
        url = want["url"]
        verb = "remove" if absent else "add"

        def lookup():
            return find_worker(listing(), url)

        def poll(what, done):
            """Polls ``done()`` (a value, or None while not there) until it answers, bounded by wait_timeout."""
            polls = 0
            while True:
                value = done()
                if value is not None:
                    return value
                if time.monotonic() - began > p["wait_timeout"]:
                    give_up(f"router did not {what} {url} within {p['wait_timeout']} s", lookup())
                # A change takes the router milliseconds when nothing waits on the worker: poll soon, then every
                # second.
                time.sleep(min(1.0, 0.1 * 2 ** polls))
                polls += 1

        def submit(worker):
            """Queues one change and waits until its job settled; returns the router's failure message or None."""
            if absent:
                code, answer = _call(module, "DELETE", f"{base}/workers/{worker['id']}")
                accepted = (200, 202, 204, 404)  # 404: removed meanwhile
            else:
                code, answer = _call(module, "POST", base + "/workers",
                                     worker_body(url, want["worker_type"], want["bootstrap_port"]))
                accepted = (200, 201, 202)
            submissions.append(verb)
            if code not in accepted:
                give_up(f"router refused the change: HTTP {code} {answer}", worker)
            job_id = answer.get("worker_id") or (worker["id"] if absent else None)
            if not job_id:
                return None
            record = poll("finish the job to " + verb, lambda: _settled(module, base, job_id))
            return job_failure(record)

        while True:
            worker = lookup()
            if holds(worker, absent):
                return None
            if not absent and worker is not None:
                # Listed, not yet healthy (added by someone else or still starting): wait, send nothing.
                poll("see healthy", lambda: True if holds(lookup(), False) else None)
                return None
            failure = submit(worker)
            if failure is None:
                poll(verb, lambda: True if holds(lookup(), absent) else None)
                return None
            failures.append(failure)
            mine.append(failure)
            if len(mine) >= p["max_attempts"]:
                give_up(f"router failed to {verb} {url} {len(mine)} times: {failure}", lookup())
            if holds(lookup(), absent):
                return failure
            # The failed job changed nothing: submit it again after a pause, bounded by the attempts and the time.
            pause = min(4.0, 0.25 * 2 ** (len(mine) - 1))
            if time.monotonic() + pause - began > p["wait_timeout"]:
                give_up(f"router failed to {verb} {url} {len(mine)} times within "
                        f"{p['wait_timeout']} s: {failure}", lookup())
            time.sleep(pause)

    # One look at the router's list decides which workers need a change at all.
    current = listing()
    todo = [want for want in wanted if not holds(find_worker(current, want["url"]), wanted_absent)]
    if not todo or module.check_mode:
        found = records(current)
        module.exit_json(changed=bool(todo), worker=found[-1] if found else {}, workers=found,
                         waited_s=0.0, attempts=0, job_failures=[])
    for want in todo:
        began, mine = time.monotonic(), []
        late = converge(want, wanted_absent, began, mine)
        while late and not wanted_absent:
            # The worker is listed, but the router stopped its registration before the tokenizer and policy
            # steps: take it out and add it again, so that it is registered whole.
            converge(want, True, began, mine)
            late = converge(want, False, began, mine)
        if late:
            module.warn(f"sglang-router removed {want['url']} but reported the job failed ({late}): only the "
                        "re-initialisation of the other workers' cache-aware policies was skipped")
    found = records(listing())
    module.exit_json(changed=bool(submissions), worker=found[-1] if found else {}, workers=found,
                     waited_s=waited(), attempts=len(submissions), job_failures=failures)


def _settled(module, base, job_id):
    """The ``GET /workers/{id}`` answer once the job behind it has finished, else None."""
    code, record = _call(module, "GET", f"{base}/workers/{job_id}")
    return (record or {}) if job_settled(code, record) else None


if __name__ == "__main__":
    main()
