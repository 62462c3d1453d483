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
    description: Seconds to wait for the router to apply the change of each worker (the playbooks pass the plan's
      C(sglang_restart_router_timeout)).
    type: int
    required: true
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
    wait_timeout: "{{ sglang_plan.settings.sglang_restart_router_timeout }}"
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
    wait_timeout: "{{ sglang_plan.settings.sglang_restart_router_timeout }}"
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

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ascend.sglang.plugins.module_utils.http._router_converge import RouterGaveUp, converge, http_call


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
            # The plan's sglang_restart_router_timeout: the settings table holds its default.
            "wait_timeout": {"type": "int", "required": True},
            "max_attempts": {"type": "int", "default": 20},
            "timeout": {"type": "int", "default": 10},
        },
        required_one_of=[["url", "workers"]],
        mutually_exclusive=[["url", "workers"]],
        supports_check_mode=True,
    )
    p = module.params
    wanted = p["workers"] if p["workers"] is not None else [
        {"url": p["url"], "worker_type": p["worker_type"], "bootstrap_port": p["bootstrap_port"]}]
    try:
        result = converge(http_call(p["timeout"]), p["router_url"], wanted, absent=p["state"] == "absent",
                          wait_timeout=p["wait_timeout"], max_attempts=p["max_attempts"],
                          check_mode=module.check_mode, warn=module.warn)
    except RouterGaveUp as exc:
        module.fail_json(msg=exc.msg, **exc.details)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
