#!/usr/bin/python
# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Read-only status of this host's planned SGLang services: systemd state, uptime, health, router workers."""

from __future__ import annotations

DOCUMENTATION = r"""
module: sglang_service_status
short_description: Report the systemd state, uptime and health of this host's planned SGLang services
description:
  - Runs on a host of the plan and changes nothing. For every given service it reads
    C(systemctl show) (load/active/sub state, restarts, time it became active), computes its uptime,
    and, where the service has a health URL, sends one bounded GET to it.
  - For a service and its watchdog that run, whether they run the files they have now, from each unit's start
    record (C(/run/sglang/<unit>.started), written by its C(ExecStartPre)) against the files on disk. A unit whose
    files changed after its start (a deployment cut short before its restart, a file edited by hand) has a restart
    pending.
  - For a router service it also reads the router's view of its workers (C(GET /workers) of
    sglang-router 0.3.0). A C(--mini-lb) router has no worker API; that is reported, not an error.
  - For node rank 0 of a server instance whose plan has a C(metrics_url) (SGLang started with C(--enable-metrics)),
    one bounded GET of that C(/metrics) page gives the instance's running and queued requests and its mean
    inter-token latency (TPOT) since it started. Metrics are informational; a page that cannot be read is reported
    in C(metrics_error) and changes nothing else.
  - M(ascend.sglang.sglang_status_report) turns every host's result into one table.
version_added: 0.3.0
options:
  services:
    description: This host's services from the plan (C(sglang_plan.hosts[inventory_hostname].services)).
    type: list
    elements: dict
    required: true
  timeout:
    description: Seconds to wait for each HTTP answer (the playbooks pass C(sglang_status_timeout) from the plan).
    type: int
    required: true
  watchdog_state_dir:
    description: Directory of the instance watchdogs' state files (C(<name>.json)); a service with one gets C(watchdog).
      The playbooks pass the host's C(sglang_watchdog_state_dir) from the plan (the settings table holds its default).
    type: path
    required: true
extends_documentation_fragment:
  - ascend.sglang.attributes.host
author:
  - ascend.sglang maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: Status of this host's services
  ascend.sglang.sglang_service_status:
    services: "{{ sglang_plan.hosts[inventory_hostname].services }}"
    timeout: "{{ sglang_plan.settings.sglang_status_timeout }}"
    watchdog_state_dir: "{{ sglang_plan.hosts[inventory_hostname].settings.sglang_watchdog_state_dir }}"
  register: sglang_status_result
"""

RETURN = r"""
services:
  description:
    - Per service name, C(load_state), C(state) (ActiveState), C(sub_state), C(main_pid), C(restarts),
      C(uptime_s), C(health) (HTTP status or error text, C(-) without a health URL) and, for routers, C(workers)
      (the C(GET /workers) answer) or C(workers_error); C(watchdog) (the watchdog's state, C(status), C(last_check),
      C(last_check_age_s), C(restarts) in its window, C(restarts_total), C(given_up), C(reason)) where a watchdog
      runs; C(pending) (the service's and its watchdog's restarts pending, each C(unit), C(reason), C(files); empty
      when both run their files).
    - For node rank 0 of a server instance with a C(metrics_url), C(metrics) read from its C(/metrics) page
      (SGLang's collector, every label set summed) - C(running) (C(sglang:num_running_reqs)), C(queued)
      (C(sglang:num_queue_reqs)), C(tpot_ms) (the mean inter-token latency since the server started,
      C(sglang:inter_token_latency_seconds) sum over count, in ms; null before its first output token) and
      C(requests) (C(sglang:num_requests_total); null before its first finished request) - or C(metrics_error)
      (the page did not answer 200, or lacks the running or queued requests, as a server that has not reported
      them yet does). Neither key for other services.
  returned: always
  type: dict
"""

import json
import os
import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ascend.sglang.plugins.module_utils.http._http import http_get
from ansible_collections.ascend.sglang.plugins.module_utils.collect._prom_text import server_load
from ansible_collections.ascend.sglang.plugins.module_utils.files._unit_show import parse_systemctl_show, uptime_seconds
from ansible_collections.ascend.sglang.plugins.module_utils.files._started import check_units, pending_rows
from ansible_collections.ascend.sglang.plugins.module_utils.files._units import service_units

PROPS = "LoadState,ActiveState,SubState,MainPID,NRestarts,ActiveEnterTimestampMonotonic"
SERVER_ROLES = ("prefill", "decode", "mixed")


def _watchdog_state(path):
    """The watchdog's last written state (files/sglang_watchdog.py), or None without a watchdog."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    if data.get("kind") == "router":
        keys = ("instance", "url", "removed", "failures", "last_check", "last_result")
        return {"kind": "router", "workers": [{k: w.get(k) for k in keys} for w in data.get("workers") or []]}
    checked = data.get("last_check")
    age = int(time.time() - checked) if isinstance(checked, (int, float)) else None  # this host's clock
    return {"kind": "rank", "status": data.get("status"), "last_check": checked, "last_check_age_s": age,
            "last_result": data.get("last_result"), "restarts": len(data.get("restarts") or []),
            "restarts_total": data.get("restarts_total", 0), "given_up": bool(data.get("given_up")),
            "reason": data.get("reason"), "max_restarts": data.get("max_restarts")}


def _metrics(url, timeout):
    """``{"metrics": ...}`` from the server's /metrics page, or ``{"metrics_error": why}``."""
    answer = http_get(url, timeout, read_body=True)
    if answer.status != 200:
        return {"metrics_error": f"GET /metrics: {answer.label()}"}
    load, why = server_load(answer.body or "")
    return {"metrics": load} if load is not None else {"metrics_error": why}


def main():
    module = AnsibleModule(argument_spec={"services": {"type": "list", "elements": "dict", "required": True},
                                          "timeout": {"type": "int", "required": True},
                                          "watchdog_state_dir": {"type": "path", "required": True}},
                           supports_check_mode=True)
    systemctl = module.get_bin_path("systemctl", required=True)
    with open("/proc/uptime", encoding="ascii") as handle:
        now = float(handle.read().split()[0])
    names = [str(svc["name"]) for svc in module.params["services"]]
    started = check_units([unit for name in names for unit in service_units(name)], module.run_command, systemctl)
    out = {}
    for svc in module.params["services"]:
        name = str(svc["name"])
        rc, stdout, stderr = module.run_command([systemctl, "show", "--property=" + PROPS, name + ".service"])
        props = parse_systemctl_show(stdout) if rc == 0 else {}
        state = props.get("ActiveState") or "unknown"
        if props.get("LoadState") == "not-found":
            state = "not installed"
        row = {"load_state": props.get("LoadState"), "state": state, "sub_state": props.get("SubState"),
               "main_pid": int(props.get("MainPID") or 0), "restarts": int(props.get("NRestarts") or 0),
               "uptime_s": uptime_seconds(props, now), "health": "-"}
        if rc != 0:
            row["error"] = stderr.strip()
        if svc.get("health_url"):
            row["health"] = http_get(str(svc["health_url"]), module.params["timeout"]).label()
        if svc.get("role") == "router":
            if svc.get("mini_lb"):
                row["workers_error"] = "mini-lb: no worker API"
            else:
                answer = http_get(f"http://{svc['host']}:{svc['port']}/workers", module.params["timeout"],
                                  read_body=True)
                try:
                    row["workers"] = json.loads(answer.body) if answer.status == 200 and answer.body else None
                except ValueError:
                    row["workers"] = None
                if row["workers"] is None:
                    row["workers_error"] = f"GET /workers: {answer.label()}"
        # Rank 0 runs the instance's HTTP server: its /metrics is the instance's.
        if svc.get("metrics_url") and svc.get("role") in SERVER_ROLES and svc.get("node_rank") in (0, "0"):
            row.update(_metrics(str(svc["metrics_url"]), module.params["timeout"]))
        row["watchdog"] = _watchdog_state(os.path.join(module.params["watchdog_state_dir"], name + ".json"))
        row["pending"] = pending_rows([started[unit] for unit in service_units(name)])
        out[name] = row
    module.exit_json(changed=False, services=out)


if __name__ == "__main__":
    main()
