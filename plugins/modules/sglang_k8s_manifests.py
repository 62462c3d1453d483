#!/usr/bin/python
# Copyright: ascend.sglang contributors
# Apache License 2.0
# The work happens in the action plugin of the same name, on the controller; this file
# carries the documentation (ansible-doc ascend.sglang.sglang_k8s_manifests).

from __future__ import annotations

DOCUMENTATION = r"""
module: sglang_k8s_manifests
short_description: Write Kubernetes manifests (RoleBasedGroup or LeaderWorkerSet) of an SGLang profile
description:
  - Runs on the controller only and contacts no host and no cluster.
  - Plans the profile as C(ascend.sglang.sglang_plan) does (the same profile, release checks and input contract),
    with one stand-in host per rank, and places the plan on Kubernetes. Every container runs its service's argv
    and environment from the plan; only the values that depend on placement are the orchestrator's, namely the own
    address (C($(POD_IP))), the leader's address and the worker index the workload injects, the leader pods' DNS
    names as router upstreams and MemFabric store, one bootstrap port per role, and C(--base-gpu-id 0).
  - Reads C(sglang_k8s_kind), C(sglang_k8s_name), C(sglang_k8s_namespace), C(sglang_k8s_instances),
    C(sglang_k8s_npu_resource), C(sglang_k8s_model_pvc), C(sglang_k8s_secret_name), C(sglang_k8s_secret_flags),
    C(sglang_k8s_startup_seconds), C(sglang_nic) and the deployment variables plan.yml reads.
  - Every value is checked before anything is written; a refusal names the variable.
  - Writes one file per object into O(dest), which must be new, empty or hold an earlier export of the same plan.
    Files are written 0640 (they hold the services' environment); no secret value is ever written.
version_added: 0.1.0
options:
  dest:
    description: >-
      The controller directory the manifests are written into; unset, the run's C(sglang_k8s_dir), read through
      the settings table by the action (required one way or the other).
    type: path
extends_documentation_fragment:
  - ascend.sglang.attributes.controller
  - ascend.sglang.profile
author:
  - ascend.sglang maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: Export the 32-card DeepSeek-R1 PD profile as one RoleBasedGroup
  ascend.sglang.sglang_k8s_manifests:
    profile: deepseek_r1_pd32
    dest: /tmp/k8s
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
kind:
  description: The workload kind written (rbg or lws).
  returned: success
  type: str
  sample: rbg
files:
  description: One entry per manifest written.
  returned: success
  type: list
  elements: dict
  contains:
    path:
      description: The file.
      type: str
    kind:
      description: The object's kind.
      type: str
      sample: RoleBasedGroup
    name:
      description: The object's name.
      type: str
      sample: sglang
    changed:
      description: Whether the file was written or changed.
      type: bool
findings:
  description: Every refused value, each with its message, group, host and variable.
  returned: failure
  type: list
  elements: dict
"""
