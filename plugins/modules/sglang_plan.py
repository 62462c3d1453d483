#!/usr/bin/python
# Copyright: ascend.sglang contributors
# Apache License 2.0
# The work happens in the action plugin of the same name, on the controller; this file
# carries the documentation (ansible-doc ascend.sglang.sglang_plan).

from __future__ import annotations

DOCUMENTATION = r"""
module: sglang_plan
short_description: Compute an SGLang deployment plan from a profile and the inventory
description:
  - Runs on the controller only, once, and contacts no host.
  - Reads the inventory groups C(prefill), C(decode), C(mixed) and C(router) (hosts in inventory order),
    each host's C(sglang_host_ip) (else C(ansible_host)) and C(sglang_nic), and the deployment variables
    C(sglang_model_path), C(sglang_draft_model_path), C(sglang_init_expert_location), C(sglang_overrides),
    C(sglang_release), C(sglang_router_release), C(sglang_python), C(sglang_router_python), C(sglang_secrets)
    (flag names only; the values never enter the plan), and each planned host's role variables that reach
    files on it (C(sglang_etc_dir), C(sglang_libexec_dir), C(sglang_restart_sec), ...).
  - Every value is checked against the input contract (types, syntax, ranges, scope) before anything else;
    user values are taken literally, never searched for planner placeholders.
  - Computes ranks, node counts, dist-init addresses, ports, bootstrap ports, the MemFabric store URL,
    the HCCL/GLOO NIC variables and the router's upstreams, and every service's full argv and environment.
  - Fails, listing every problem with the group, host and variable at fault, when the inventory does not
    fit the profile. Nothing is returned (so nothing can be written) unless the plan is complete.
version_added: 0.1.0
options:
  profile:
    description: Profile id, the name of a file under the collection's C(profiles/) without C(.yml).
    type: str
    required: true
  profiles_dir:
    description: Read profiles from this directory instead of the collection's.
    type: path
extends_documentation_fragment:
  - ascend.sglang.attributes.controller
author:
  - ascend.sglang maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: Plan the deployment
  ascend.sglang.sglang_plan:
    profile: deepseek_r1_pd32
  delegate_to: localhost
  run_once: true
  register: planned

- name: Show the decode rank 1 command
  ansible.builtin.debug:
    msg: "{{ planned.plan.hosts['decode1'].services[0].argv | join(' ') }}"
"""

RETURN = r"""
plan:
  description: >-
    The plan: C(profile), C(title), C(deploy_mode), C(releases), C(hosts) (inventory hostname ->
    C(host_tuning), C(cann), C(services)), C(router_upstreams), C(bench) and C(cards) (the cards the servers occupy). Each service has C(name),
    C(role), C(instance), C(node_rank), C(nnodes), C(inventory_host), C(host), C(port), C(bootstrap_port),
    C(dist_init_addr), C(argv), C(env), C(health_url), C(ready_url), C(instance_key), C(depends_on), C(listens),
    C(secret_flags) (flags whose values the launcher reads from the host's root-only secret file).
  returned: success
  type: dict
findings:
  description: Every problem found, each with message, group, host and variable.
  returned: failure
  type: list
  elements: dict
"""
