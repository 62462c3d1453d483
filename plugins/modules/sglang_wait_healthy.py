#!/usr/bin/python
# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Waits, in one module call, until every given service of this host is healthy (bounded)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: sglang_wait_healthy
short_description: Wait until every given SGLang service of this host is healthy, all at once, bounded
description:
  - Polls every given service of this host in the same loop until each is healthy or the bound is reached;
    changes nothing (but the router workers O(router_workers) adds). A service with a health URL is healthy when it answers HTTP 200 (a router's C(ready_url),
    its C(/readiness), when O(readiness) is true); one without (node ranks > 0 of a multi-node instance serve no
    HTTP) when C(systemctl is-active) says its unit is active.
  - Returns the services that were not healthy in RV(unhealthy), with the last status of each in RV(services), so
    that the caller reports them all together (the role ascend.sglang.sglang_service then reads their journal).
    It fails then only with O(fail_unhealthy), the result still holding them.
  - Requests never go through a proxy from the environment (cluster-internal addresses).
version_added: 0.4.0
options:
  services:
    description: This host's services from the plan (C(sglang_plan.hosts[inventory_hostname].services)); each
      needs C(name), and C(health_url) and C(ready_url) where it has them.
    type: list
    elements: dict
    required: true
  readiness:
    description: Poll C(ready_url) instead of C(health_url) where a service has one (the playbooks pass
      C(sglang_health_readiness) of the plan, whose default the settings table holds).
    type: bool
    required: true
  retries:
    description: Polls of each service at most, O(delay) seconds apart (each poll bounded by O(timeout));
      C(sglang_health_retries).
    type: int
    required: true
  delay:
    description: Seconds between two polls; C(sglang_health_delay).
    type: float
    required: true
  timeout:
    description: Seconds to wait for one HTTP answer; C(sglang_health_timeout).
    type: int
    required: true
  fail_unhealthy:
    description: Fail when a service was not healthy within the bound (RV(unhealthy) and RV(services) are returned
      all the same), so that a caller needs no task of its own to stop.
    type: bool
    default: false
  router_workers:
    description:
      - A router's health gate in one call. First every service's C(health_url) (its C(/health), the process
        answers); then every worker of O(router_workers.workers) is made a healthy worker of each router of
        O(router_workers.routers) (added where missing, through its worker API, as
        M(ascend.sglang.sglang_router_worker) does; nothing is sent when all are listed healthy); then the URLs
        O(readiness) asks for (the Rust router's C(/readiness), 200 once it can route).
      - sglang-router 0.3.0 can fail the registration of one of its own configured workers at start; its
        C(/readiness) then never turns 200 when that was the only worker of a kind.
      - Not in check mode (a router that does not run cannot be asked).
    type: dict
    suboptions:
      routers:
        description: Base URLs of this host's routers that have a worker API (not C(--mini-lb)).
        type: list
        elements: str
        required: true
      workers:
        description: The planned instances (C(sglang_plan | ascend.sglang.sglang_instances), their C(worker)).
        type: list
        elements: dict
        required: true
        suboptions:
          url:
            description: The worker's URL as the router knows it (rank 0's C(http://host:port)).
            type: str
            required: true
          worker_type:
            description: C(regular) (PD-mixed), C(prefill) or C(decode).
            type: str
            choices: [regular, prefill, decode]
            default: regular
          bootstrap_port:
            description: A prefill worker's disaggregation bootstrap port.
            type: int
      wait_timeout:
        description: Seconds each worker may take (as O(ascend.sglang.sglang_router_worker#module:wait_timeout)).
        type: int
        default: 300
      prune:
        description:
          - Also take out every worker the router lists that is none of O(router_workers.workers) (an instance the
            plan no longer has), once the planned ones are listed and healthy - the router's workers are then the
            planned ones. A router whose list changed is not restarted (its launcher reads the workers at start from
            a file outside the restart decision), so the deploy applies the list this way.
        type: bool
        default: false
        version_added: 0.5.0
extends_documentation_fragment:
  - ascend.sglang.attributes.host
author:
  - ascend.sglang maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: Wait for this host's servers
  ascend.sglang.sglang_wait_healthy:
    services: "{{ sglang_plan.hosts[inventory_hostname].services }}"
    readiness: "{{ sglang_plan.hosts[inventory_hostname].settings.sglang_health_readiness }}"
    retries: "{{ sglang_plan.hosts[inventory_hostname].settings.sglang_health_retries }}"
    delay: "{{ sglang_plan.hosts[inventory_hostname].settings.sglang_health_delay }}"
    timeout: "{{ sglang_plan.hosts[inventory_hostname].settings.sglang_health_timeout }}"
  register: wait

- name: Stop when one did not become healthy
  ansible.builtin.assert:
    that: wait.unhealthy | length == 0
"""

RETURN = r"""
services:
  description: Per service name, C(url) (polled URL, or null for a unit that must be active), C(healthy), C(status)
    (the last HTTP status or error, or the unit's C(systemctl is-active) state) and C(waited_s) (seconds until it
    was healthy, null if it never was).
  returned: always
  type: dict
registered:
  description: With O(router_workers), per router base URL, what registering the workers did (C(changed), C(attempts),
    C(job_failures), C(workers)); with O(router_workers.prune) also C(removed), the URLs taken out.
  returned: with router_workers
  type: dict
unhealthy:
  description: Names of the services that were not healthy within the bound, in the order given.
  returned: always
  type: list
  elements: str
waited_s:
  description: Seconds the module waited in all.
  returned: always
  type: float
"""

import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ascend.sglang.plugins.module_utils.http._router_converge import (
    RouterGaveUp, apply_planned, converge, http_call)
from ansible_collections.ascend.sglang.plugins.module_utils.http._health_wait import look, wait_target
from ansible_collections.ascend.sglang.plugins.module_utils.files._units import UNIT_NAME


def poll(module, targets, retries, delay, timeout, start):
    """Polls every target (name -> URL, or None: the unit must be active) until each is healthy, at most
    ``retries`` polls of each, ``delay`` apart; returns the rows by name."""
    systemctl = module.get_bin_path("systemctl", required=True) if None in targets.values() else None
    result = {name: {"url": url, "healthy": False, "status": "not polled", "waited_s": None}
              for name, url in targets.items()}
    # Bounded in polls, like an until/retries/delay loop: at most `retries` polls of each service, `delay` apart.
    for attempt in range(retries):
        for name, url in targets.items():
            row = result[name]
            if row["healthy"]:
                continue
            row.update(look(name, url, timeout, module.run_command, systemctl))
            if row["healthy"]:
                row["waited_s"] = round(time.monotonic() - start, 1)
        if all(row["healthy"] for row in result.values()) or attempt == retries - 1:
            break
        time.sleep(delay)
    return result


def _argument_spec():
    return {
        "services": {"type": "list", "elements": "dict", "required": True},
        # The settings table holds these defaults (sglang_health_*): the playbooks pass the plan's values.
        "readiness": {"type": "bool", "required": True},
        "retries": {"type": "int", "required": True},
        "delay": {"type": "float", "required": True},
        "timeout": {"type": "int", "required": True},
        "fail_unhealthy": {"type": "bool", "default": False},
        "router_workers": {"type": "dict", "options": {
            "routers": {"type": "list", "elements": "str", "required": True},
            "workers": {"type": "list", "elements": "dict", "required": True, "options": {
                "url": {"type": "str", "required": True},
                "worker_type": {"type": "str", "default": "regular", "choices": ["regular", "prefill", "decode"]},
                "bootstrap_port": {"type": "int"}}},
            "wait_timeout": {"type": "int", "default": 300},
            "prune": {"type": "bool", "default": False}}},
    }


def main():
    module = AnsibleModule(
        argument_spec=_argument_spec(),
        supports_check_mode=True,
    )
    p = module.params
    if p["retries"] < 1 or p["delay"] < 0 or p["timeout"] < 1:
        module.fail_json(msg=f"retries and timeout must be >= 1 and delay >= 0 (got {p['retries']}, "
                             f"{p['timeout']}, {p['delay']})")
    for svc in p["services"]:
        name = str(svc.get("name") or "")
        if not UNIT_NAME.fullmatch(name + ".service"):
            module.fail_json(msg=f"not a service name: {name!r}")
    services = {str(svc["name"]): svc for svc in p["services"]}
    start = time.monotonic()
    out = {}

    def finish(result):
        unhealthy = [name for name, row in result.items() if not row["healthy"]]
        done = dict(out, changed=bool(out.get("changed")), services=result, unhealthy=unhealthy,
                    waited_s=round(time.monotonic() - start, 1))
        if unhealthy and p["fail_unhealthy"]:
            module.fail_json(msg=f"Not healthy in time: {', '.join(unhealthy)}", **done)
        module.exit_json(**done)

    register = p["router_workers"]
    if register and not module.check_mode:
        # /health first: a router that does not answer cannot take workers.
        first = poll(module, {name: wait_target(svc, False) for name, svc in services.items()},
                     p["retries"], p["delay"], p["timeout"], start)
        if not all(row["healthy"] for row in first.values()):
            finish(first)
        _register(module, register, p["timeout"], first, out)
    finish(poll(module, {name: wait_target(svc, p["readiness"]) for name, svc in services.items()},
                p["retries"], p["delay"], p["timeout"], start))


def _register(module, register, timeout, first, out):
    """Registers the planned instances with each router (and, with ``prune``, takes out the others); fails the
    module on a router that gives up."""
    out["registered"] = {}
    for router in register["routers"]:
        try:
            if register["prune"]:
                got = apply_planned(http_call(timeout), router, register["workers"],
                                    wait_timeout=register["wait_timeout"], warn=module.warn)
            else:
                got = converge(http_call(timeout), router, register["workers"],
                               wait_timeout=register["wait_timeout"], warn=module.warn)
        except RouterGaveUp as exc:
            module.fail_json(msg=f"registering the planned instances with {router}: {exc.msg}",
                             services=first, unhealthy=[], registered=out["registered"], **exc.details)
        out["registered"][router] = got
        out["changed"] = out.get("changed") or got["changed"]


if __name__ == "__main__":
    main()
