#!/usr/bin/python
# Copyright: ascend.sglang contributors
# Apache License 2.0
# The work happens in the action plugin of the same name, on the controller, which runs
# ascend.sglang.sglang_gather on the host; this file carries the documentation (ansible-doc ascend.sglang.sglang_collect).

from __future__ import annotations

DOCUMENTATION = r"""
module: sglang_collect
short_description: Gather a host's part of the failure bundle into the bundle directory on the controller
description:
  - Lists, on the controller, this host's units (its services' and their watchdogs') and rendered files (environment,
    launcher, unit, watchdog configuration and unit, C(cann_env.sh), kernel settings; never the C(.secrets) file) from
    the plan, the way the renderer lists them, where the host's C(sglang_etc_dir), C(sglang_libexec_dir),
    C(sglang_systemd_dir) and C(sglang_sysctl_dir) put them (else the roles' defaults); gathers them on the host in one call of M(ascend.sglang.sglang_gather),
    which takes every secret out on the host; writes them under O(bundle_dir)/<inventory host>/ on the controller
    (files 0600, directories 0700) with an C(index.json) of what was collected and what failed, and why.
  - Every value of the host's C(sglang_secrets) is taken out of everything collected. It is read from the host's
    variables, never passed as an argument.
  - An unreachable host gets an C(index.json) saying so; the task reports it unreachable (run it with
    C(ignore_unreachable)) and the play goes on.
  - The task result holds counts, never texts. Playbook C(ascend.sglang.collect) runs it on every host of the plan,
    and M(ascend.sglang.sglang_collect_report) closes the bundle.
  - With O(record_start), records the deploy's start on the host instead (C(deploy.yml)).
version_added: 0.5.0
options:
  plan:
    description: The deployment plan (C(sglang_plan)).
    type: dict
  bundle_dir:
    description: The bundle's directory on the controller.
    type: path
  since:
    description: Start of the journal window, see M(ascend.sglang.sglang_gather).
    type: str
  max_lines:
    description: Journal lines per unit, the newest kept.
    type: int
  max_bytes:
    description: Bytes per collected text, the newest kept.
    type: int
  dmesg_lines:
    description: NPU driver kernel lines kept.
    type: int
  npu_smi:
    description: The npu-smi program.
    type: str
  timeout:
    description: Seconds each command on the host may take.
    type: int
  record_start:
    description: Record this deploy's start (seconds since the epoch) on the host and collect nothing.
    type: float
  profile:
    description: Profile name written with O(record_start).
    type: str
extends_documentation_fragment:
  - ascend.sglang.attributes.controller
author:
  - ascend.sglang maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: This host's part of the bundle
  ascend.sglang.sglang_collect:
    plan: "{{ hostvars['localhost'].sglang_plan }}"
    bundle_dir: "{{ hostvars['localhost'].sglang_collect_bundle }}"
  ignore_unreachable: true
"""

RETURN = r"""
collected:
  description: How many items were collected.
  returned: always
  type: int
missed:
  description: How many items could not be collected (their reasons are in the host's C(index.json)).
  returned: always
  type: int
since:
  description: The journal window's start that was used.
  returned: when the host answered
  type: str
directory:
  description: The host's directory in the bundle.
  returned: when the host answered
  type: str
"""
