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
    changes nothing. A service with a health URL is healthy when it answers HTTP 200 (a router's C(ready_url),
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
    description: Poll C(ready_url) instead of C(health_url) where a service has one.
    type: bool
    default: true
  retries:
    description: Polls of each service at most, O(delay) seconds apart (each poll bounded by O(timeout)).
    type: int
    default: 180
  delay:
    description: Seconds between two polls.
    type: float
    default: 10
  timeout:
    description: Seconds to wait for one HTTP answer.
    type: int
    default: 10
  fail_unhealthy:
    description: Fail when a service was not healthy within the bound (RV(unhealthy) and RV(services) are returned
      all the same), so that a caller needs no task of its own to stop.
    type: bool
    default: false
extends_documentation_fragment:
  - ascend.sglang.attributes.host
author:
  - ascend.sglang maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: Wait for this host's servers
  ascend.sglang.sglang_wait_healthy:
    services: "{{ sglang_plan.hosts[inventory_hostname].services }}"
    retries: 180
    delay: 10
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

from ansible_collections.ascend.sglang.plugins.module_utils._http import http_get
from ansible_collections.ascend.sglang.plugins.module_utils._health_wait import wait_target
from ansible_collections.ascend.sglang.plugins.module_utils._units import UNIT_NAME


def main():
    module = AnsibleModule(
        argument_spec={
            "services": {"type": "list", "elements": "dict", "required": True},
            "readiness": {"type": "bool", "default": True},
            "retries": {"type": "int", "default": 180},
            "delay": {"type": "float", "default": 10},
            "timeout": {"type": "int", "default": 10},
            "fail_unhealthy": {"type": "bool", "default": False},
        },
        supports_check_mode=True,
    )
    p = module.params
    if p["retries"] < 1 or p["delay"] < 0 or p["timeout"] < 1:
        module.fail_json(msg=f"retries and timeout must be >= 1 and delay >= 0 (got {p['retries']}, "
                             f"{p['timeout']}, {p['delay']})")
    targets = {}
    for svc in p["services"]:
        name = str(svc.get("name") or "")
        if not UNIT_NAME.fullmatch(name + ".service"):
            module.fail_json(msg=f"not a service name: {name!r}")
        targets[name] = wait_target(svc, p["readiness"])
    systemctl = module.get_bin_path("systemctl", required=True) if None in targets.values() else None
    result = {name: {"url": url, "healthy": False, "status": "not polled", "waited_s": None}
              for name, url in targets.items()}
    start = time.monotonic()
    # Bounded in polls, like an until/retries/delay loop: at most `retries` polls of each service, `delay` apart.
    for attempt in range(p["retries"]):
        for name, url in targets.items():
            row = result[name]
            if row["healthy"]:
                continue
            if url:
                row["status"] = http_get(url, p["timeout"]).label()
                row["healthy"] = row["status"] == "200"
            else:
                rc, stdout, _unused = module.run_command([systemctl, "is-active", "--", name + ".service"])
                row["status"] = stdout.strip() or f"rc {rc}"
                row["healthy"] = rc == 0
            if row["healthy"]:
                row["waited_s"] = round(time.monotonic() - start, 1)
        if all(row["healthy"] for row in result.values()) or attempt == p["retries"] - 1:
            break
        time.sleep(p["delay"])
    unhealthy = [name for name, row in result.items() if not row["healthy"]]
    if unhealthy and p["fail_unhealthy"]:
        module.fail_json(msg=f"Not healthy in time: {', '.join(unhealthy)}", changed=False, services=result,
                         unhealthy=unhealthy, waited_s=round(time.monotonic() - start, 1))
    module.exit_json(changed=False, services=result, unhealthy=unhealthy, waited_s=round(time.monotonic() - start, 1))


if __name__ == "__main__":
    main()
