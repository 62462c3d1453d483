#!/usr/bin/python
# Copyright: ascend.sglang contributors
# Apache License 2.0
# The work happens in the action plugin of the same name, on the controller; this file carries the
# documentation (ansible-doc ascend.sglang.sglang_monitoring_files).

from __future__ import annotations

DOCUMENTATION = r"""
module: sglang_monitoring_files
short_description: Write the Prometheus scrape targets, scrape configuration and alert rules of a plan
description:
  - Computes, from the plan alone, the files a Prometheus server needs to watch the deployment and writes them
    under O(dest).
  - C(targets/<profile>.<role>.json) - Prometheus C(file_sd) target lists, one per role (C(prefill), C(decode),
    C(mixed), C(router)); every target (a server rank's C(/metrics) on its port, a Rust router's exporter) is
    labelled C(profile), C(role), C(sglang_instance), C(node_rank), C(nnodes), C(host) and C(service). A role the
    plan lacks gets an empty list, so that no stale target stays behind.
  - C(prometheus.yml) - one scrape job per role reading C(targets/*.<role>.json), and the rule files, by absolute
    path. It is the same for every plan, so several deployments can share one directory and one Prometheus.
  - C(rules/<profile>.yml) - recording rules (p90 inter-token latency and TTFT, queued and running requests per
    instance) and alerts (server, router or router worker down, workers missing from the router, ranks of an
    instance disagreeing, requests queueing, TPOT p90 above the profile's target, TTFT p90 above
    C(sglang_alert_ttft_p90_seconds)).
  - Fails when the plan's metrics are off (C(sglang_metrics=false)).
  - C(changed) per file, a diff per changed file in diff mode, nothing written in check mode.
version_added: 0.5.0
options:
  plan:
    description: The deployment plan (C(sglang_plan)).
    type: dict
    required: true
  dest:
    description: Directory of the files (absolute on a host; on the controller, relative to the current directory).
    type: path
    required: true
  controller:
    description: Write on the controller instead of the task's host.
    type: bool
    default: false
extends_documentation_fragment:
  - ascend.sglang.attributes.controller
  - ascend.sglang.attributes.diff
author:
  - ascend.sglang maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: Write the Prometheus files into a controller directory
  ascend.sglang.sglang_monitoring_files:
    plan: "{{ hostvars['localhost'].sglang_plan }}"
    dest: ./monitoring
    controller: true

- name: Write them on the Prometheus host
  ascend.sglang.sglang_monitoring_files:
    plan: "{{ hostvars['localhost'].sglang_plan }}"
    dest: /etc/prometheus/sglang
"""

RETURN = r"""
dest:
  description: The directory written.
  returned: always
  type: str
files:
  description: Every file of the plan, by path.
  returned: always
  type: list
  elements: str
files_changed:
  description: The files that were (or would be) written.
  returned: always
  type: list
  elements: str
targets:
  description: How many scrape targets the plan has.
  returned: always
  type: int
"""
