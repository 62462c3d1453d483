#!/usr/bin/python
# Copyright: ascend.sglang contributors
# Apache License 2.0
# The work happens in the action plugin of the same name, on the controller; this file carries the
# documentation (ansible-doc ascend.sglang.sglang_preflight_report).

from __future__ import annotations

DOCUMENTATION = r"""
module: sglang_preflight_report
short_description: Aggregate every host's preflight / doctor findings into one table and a JSON report
description:
  - Runs on the controller. Reads the registered result of M(ascend.sglang.sglang_preflight) of every host
    in O(hosts) (a host without one, e.g. unreachable, is a failure), prints one table of every warning and
    failure (status, host, check, found, expected, how to fix), optionally writes the full report as JSON,
    and fails when the worst finding reaches O(fail_on).
  - The report's C(exit_code) is 0 (all ok), 1 (warnings) or 2 (failures).
  - The JSON file is written in check mode too (it is a controller-side report, not a change to a host).
version_added: 0.2.0
options:
  hosts:
    description: Hosts whose results are aggregated (normally the plan's hosts).
    type: list
    elements: str
    required: true
  result_var:
    description: Name of the registered per-host result.
    type: str
    default: sglang_preflight_result
  ping_var:
    description:
      - Name of the registered per-host result of the pings (M(ascend.sglang.sglang_preflight) in C(ping) mode);
        its findings join the host's. Omit when no pings ran.
    type: str
  plan:
    description:
      - The plan. With it, the checks that compare hosts are decided here from the hosts' observations (the TLS
        switch of every NPU, the model files of every host loading one model directory).
    type: dict
  json_path:
    description: Write the report here (controller path). Omit to write nothing.
    type: path
  fail_on:
    description: Fail the task at C(fail) (failures only), C(warn) (warnings too) or C(never).
    type: str
    choices: [fail, warn, never]
    default: fail
  mode:
    description: C(preflight), C(doctor) or C(stack), recorded in the report.
    type: str
    default: preflight
  profile:
    description: Profile id, recorded in the report.
    type: str
  include_ok:
    description: List passed checks in the table too.
    type: bool
    default: false
extends_documentation_fragment:
  - ascend.sglang.attributes.controller
author:
  - ascend.sglang maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: One table for every host; stop on failures
  ascend.sglang.sglang_preflight_report:
    hosts: "{{ sglang_plan.hosts | list }}"
    json_path: /tmp/sglang-preflight.json
"""

RETURN = r"""
status:
  description: C(ok), C(warnings) or C(failures).
  returned: always
  type: str
exit_code:
  description: 0 ok, 1 warnings, 2 failures.
  returned: always
  type: int
counts:
  description: Findings per severity (ok, warn, fail).
  returned: always
  type: dict
table:
  description: The table, one line per element.
  returned: always
  type: list
  elements: str
problems:
  description: Every warning and failure, each with host, check, severity, found, expected, fix, service.
  returned: always
  type: list
  elements: dict
json_path:
  description: Absolute path of the JSON report written.
  returned: when json_path is set
  type: str
"""
