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
    and returns C(stop) when the worst finding reaches O(fail_on); the task fails then, unless O(fail_task=false)
    leaves that to a later task (one that shows the table first, say).
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
  look_key:
    description:
      - Report only the hosts with findings. A host without O(result_var) at all takes the entry of this name of
        its C(sglang_preflight_result). deploy.yml's stack report gives C(stack), the stack checks preflight ran
        on a host whose install had nothing to do, so the stack play did not run for it.
    type: str
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
    description:
      - Stop the run (C(stop)) at C(fail) (failures only), C(warn) (warnings too) or C(never).
      - "The plan's value of the operator's threshold (C(sglang_plan.settings.sglang_preflight_fail_on) or
        C(sglang_doctor_fail_on)): the settings table holds its default."
    type: str
    choices: [fail, warn, never]
    required: true
  fail_on_var:
    description:
      - The variable O(fail_on) comes from, named in the error when its value is not one of the choices.
    type: str
    default: fail_on
  fail_task:
    description:
      - Fail this task when C(stop) is true. V(false) only returns C(stop), for a later task to fail with its
        own message.
    type: bool
    default: true
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
    fail_on: "{{ sglang_plan.settings.sglang_preflight_fail_on }}"

- name: The operator's threshold; a later task stops the run with its own message
  ascend.sglang.sglang_preflight_report:
    hosts: "{{ sglang_plan.hosts | list }}"
    fail_on: "{{ sglang_plan.settings.sglang_preflight_fail_on }}"
    fail_on_var: sglang_preflight_fail_on
    fail_task: false
  register: __report

- name: Stop
  ansible.builtin.fail:
    msg: "{{ __report.msg }}: fix the problems in the table above"
  when: __report.stop
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
stop:
  description: The report reaches O(fail_on) (C(exit_code) 2 at C(fail), 1 or 2 at C(warn), never at C(never)).
  returned: always
  type: bool
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
hosts:
  description: The hosts reported (with O(look_key), those with findings).
  returned: always
  type: list
  elements: str
json_path:
  description: Absolute path of the JSON report written.
  returned: when json_path is set
  type: str
"""
