#!/usr/bin/python
# Copyright: ascend.sglang contributors
# Apache License 2.0
# The work happens in the action plugin of the same name, on the controller; this file carries the
# documentation (ansible-doc ascend.sglang.sglang_collect_report).

from __future__ import annotations

DOCUMENTATION = r"""
module: sglang_collect_report
short_description: Close a failure bundle - index, plan, diagnosis - and archive it
description:
  - Runs on the controller after M(ascend.sglang.sglang_collect) ran on every host. Writes an C(index.json) for every
    host of O(hosts) that gave nothing (unreachable, or failed earlier in the run), the plan (the values of every
    host's C(sglang_secrets) and of secret-like environment names taken out),
    the preflight's raw observations of this run where a host has them (O(preflight_vars)), and the bundle's
    C(index.json) with the failures.
  - Matches the table of known failure signatures (C(profiles/_failure_signatures.yml)) against every unit's journal,
    the NPU driver's kernel lines and npu-smi's health; writes C(diagnosis.txt) and C(diagnosis.json), worst first.
    A unit that failed, restarted or is named by a failure without any known signature is listed as unknown, pointing
    to its journal in the archive.
  - Archives the bundle as O(collect_dir)/<bundle name>.tar.gz (0600, members 0600 / 0700; never over an existing
    file) and removes the bundle directory. Works in check mode too (a controller-side report).
version_added: 0.5.0
options:
  plan:
    description: The deployment plan (C(sglang_plan)).
    type: dict
    required: true
  bundle_dir:
    description: The bundle's directory (its name is the archive's, C(sglang-<profile>-<UTC time>)).
    type: path
    required: true
  collect_dir:
    description: Directory on the controller that receives the archive (collect.yml passes C(sglang_collect_dir)
      from the plan).
    type: path
    required: true
  hosts:
    description: Hosts of the bundle. Unset - the plan's hosts.
    type: list
    elements: str
  failures:
    description: The rollout's failures (C(host), C(step), C(msg)), kept in the bundle's index.
    type: list
    elements: dict
    default: []
  preflight_vars:
    description: Registered per-host results of M(ascend.sglang.sglang_preflight) whose C(observed) goes in.
    type: list
    elements: str
    default: []
  reasons:
    description: Host -> why it gave nothing (default reason otherwise).
    type: dict
    default: {}
extends_documentation_fragment:
  - ascend.sglang.attributes.controller
author:
  - ascend.sglang maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: Archive the bundle and diagnose the logs
  ascend.sglang.sglang_collect_report:
    plan: "{{ sglang_plan }}"
    bundle_dir: "{{ sglang_collect_bundle }}"
    collect_dir: "{{ sglang_plan.settings.sglang_collect_dir }}"
  register: sglang_collect_result
"""

RETURN = r"""
archive:
  description: Path of the archive on the controller.
  returned: always
  type: str
  sample: /home/op/sglang-deepseek_r1_pd32-20261125T101500Z.tar.gz
size:
  description: Size of the archive in bytes.
  returned: always
  type: int
diagnosis:
  description: The diagnosis as printed, worst first (severity, host, unit, cause; the log line; the fix and source).
  returned: always
  type: list
  elements: str
findings:
  description: Each known signature found (host, unit, id, severity, cause, fix, source, line, count).
  returned: always
  type: list
  elements: dict
not_collected:
  description: Hosts that gave nothing.
  returned: always
  type: list
  elements: str
"""
