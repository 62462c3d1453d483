#!/usr/bin/python
# Copyright: ascend.sglang contributors
# Apache License 2.0
# The work happens in the action plugin of the same name, on the controller; this file carries the
# documentation (ansible-doc ascend.sglang.sglang_status_report).

from __future__ import annotations

DOCUMENTATION = r"""
module: sglang_status_report
short_description: One status table (and JSON) for a whole SGLang deployment
description:
  - Runs on the controller. Reads the registered M(ascend.sglang.sglang_service_status) result of every host of the
    plan (a host without one, e.g. unreachable, shows C(unknown (no answer from host))) and builds one row per
    planned service - host, role, instance, node rank, port, systemd state, health, uptime and the router's view
    of that instance (registered and healthy, unhealthy, not registered; for a C(--mini-lb) router that it has no
    worker API). Workers the router lists that are not in the plan get rows of their own.
  - The JSON file is a controller-side report, written in check mode too; C(changed) is false.
version_added: 0.3.0
options:
  plan:
    description: The deployment plan (C(sglang_plan)).
    type: dict
    required: true
  result_var:
    description: Name of the registered per-host result.
    type: str
    default: sglang_status_result
  json_path:
    description: Write C({profile, healthy, services}) here (controller path). Omit to write nothing.
    type: path
  fail_unhealthy:
    description: Fail when a service is not active or its health endpoint does not answer 200 (status.yml passes
      C(sglang_status_fail_unhealthy) from the plan).
    type: bool
    required: true
extends_documentation_fragment:
  - ascend.sglang.attributes.controller
author:
  - ascend.sglang maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: One table for the deployment
  ascend.sglang.sglang_status_report:
    plan: "{{ sglang_plan }}"
    json_path: sglang-status.json
    fail_unhealthy: "{{ sglang_plan.settings.sglang_status_fail_unhealthy }}"
"""

RETURN = r"""
healthy:
  description: Every service active and every health endpoint answering 200.
  returned: always
  type: bool
restarts_pending:
  description: The services that run other files than their own, or whose watchdog does (a deployment cut short
    after writing the files and before restarting them, a file edited by hand); rerunning the deployment restarts
    them, as does C(restart.yml -e sglang_restart_only=pending).
  returned: always
  type: list
  elements: str
rows:
  description: One dict per service (host, service, role, instance, node_rank, port, state, health, uptime_s, uptime,
    router_view, restarts, config, pending, and from rank 0's C(/metrics) of a server instance metrics,
    metrics_error, run, queue, tpot).
  returned: always
  type: list
  elements: dict
table:
  description: The table, one line per element.
  returned: always
  type: list
  elements: str
json_path:
  description: Absolute path of the JSON written.
  returned: when json_path is set
  type: str
"""
