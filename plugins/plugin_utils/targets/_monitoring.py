# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Monitoring from the plan: the Prometheus files of a deployment (the metrics flags the launches get are
plan/_metrics.py's).

Pure; no Ansible import.  ``files`` turns a plan (typed: plan/_records.py Plan) into the
files an operator's Prometheus reads:

- ``targets/<deployment>.<role>.json``: Prometheus ``file_sd`` target lists, one per scrape job (role), every
  target labelled with deployment (sglang_deployment, default the profile id), profile, role, sglang_instance
  (the instance key), node_rank, nnodes, host and service;
  a role the plan lacks gets an empty list, so that a plan that shrank leaves no stale target behind;
- ``prometheus.yml``: the scrape jobs (one per role, reading ``targets/*.<role>.json``) and the rule files;
  the same for every deployment, so that several deployments' files can share one directory;
- ``rules/<deployment>.yml``: recording and alerting rules, thresholds from the profile and the inventory; they
  select the deployment's own series, and every alert carries its deployment label.
Several deployments share one directory (one Prometheus): each writes its own targets and rules.  A file there
that the collection did not write is never overwritten (``foreign``).

Metric names come from the releases this collection renders for: SGLang's
``python/sglang/srt/metrics/collector.py`` (v0.5.6.post2 to v0.5.9: ``sglang:num_queue_reqs``,
``sglang:time_to_first_token_seconds``, ``sglang:inter_token_latency_seconds``; none of them has a
``time_per_output_token`` histogram, inter-token latency is what TPOT measures) and the sglang-router 0.3.0 /
0.3.2 exporter (``smg_worker_health{worker}``, ``smg_worker_pool_size{worker_type}``, read from the real router's
``/metrics``).  Prometheus' own ``instance`` label stays the target's address: the instance of the plan is
``sglang_instance``.
"""

from __future__ import annotations

import json
import urllib.parse
from typing import Any

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import SERVER_ROLES
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._serialize import yaml_text
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import Plan

ROLES = SERVER_ROLES + ("router",)
# Roles whose servers answer the client's tokens: their TTFT and inter-token latency are what the client sees.
TOKEN_ROLES = "decode|mixed"
# How long a TPOT (p90 inter-token latency) above the profile's target must last before it alerts, and a queue.
TPOT_FOR = "10m"
TTFT_FOR = "10m"
QUEUE_FOR = "5m"
RATE_WINDOW = "5m"


# ---- the files --------------------------------------------------------------------------------------------------

def targets(plan: Plan) -> dict[str, list[dict[str, Any]]]:
    """role -> its file_sd entries: one per service with a metrics URL, by instance and node rank."""
    out: dict[str, list[dict[str, Any]]] = {role: [] for role in ROLES}
    for host, host_plan in plan.hosts.items():
        for svc in host_plan.services:
            if not svc.metrics_url:
                continue
            address = urllib.parse.urlsplit(svc.metrics_url).netloc
            labels = {"deployment": deployment(plan), "profile": plan.profile, "role": svc.role,
                      "sglang_instance": svc.instance_key, "node_rank": str(svc.node_rank), "nnodes": str(svc.nnodes),
                      "host": str(host), "service": svc.name}
            out[svc.role].append({"order": (svc.instance, svc.node_rank), "targets": [address], "labels": labels})
    for role, entries in out.items():
        out[role] = [{k: v for k, v in e.items() if k != "order"} for e in sorted(entries, key=lambda e: e["order"])]
    return out


def deployment(plan: Plan) -> str:
    """The deployment's name (sglang_deployment, the profile id by default)."""
    return plan.deployment or plan.profile


def _yaml(value: Any) -> str:
    """Block YAML, in the order given, long expressions on one line."""
    return yaml_text(value, width=1000)


def prometheus_config(base: str, scrape_interval: str) -> str:
    """The scrape jobs and rule files of every deployment whose files are under ``base``."""
    jobs = [{"job_name": f"sglang-{role}", "scrape_interval": scrape_interval, "metrics_path": "/metrics",
             "file_sd_configs": [{"files": [f"{base}/targets/*.{role}.json"]}]} for role in ROLES]
    head = ("# Scrape jobs of the SGLang deployments whose files ascend.sglang wrote into this directory (one job per\n"
            "# role; the targets and their labels come from each plan: targets/<deployment>.<role>.json). Load it as it\n"
            "# is, or copy scrape_configs and rule_files into your own prometheus.yml.\n")
    return head + _yaml({"scrape_configs": jobs, "rule_files": [f"{base}/rules/*.yml"]})


def _alert(name: str, expr: str, for_: str, severity: str, summary: str, description: str) -> dict[str, Any]:
    return {"alert": name, "expr": expr, "for": for_, "labels": {"severity": severity},
            "annotations": {"summary": summary, "description": description}}


def rules(plan: Plan) -> str:
    """The recording and alerting rules of one plan: the rule file monitoring.yml writes."""
    name = deployment(plan)
    head = (f"# Recording and alerting rules of the SGLang deployment {name} of profile {plan.profile} (ascend.sglang, "
            "from its\n# plan: rerun playbooks/monitoring.yml after the inventory or the profile changed).\n")
    return head + _yaml({"groups": rule_groups(plan)})


def rule_groups(plan: Plan) -> list[dict[str, Any]]:
    """The rule groups of one plan (a rule file's ``groups``; the Kubernetes export's PrometheusRule holds them)."""
    mon = plan.monitoring
    name = deployment(plan)
    # The deployment's own series: another deployment of the same profile in the same Prometheus is not mixed in.
    sel = f'deployment="{name}"'
    servers = f'job=~"sglang-({"|".join(SERVER_ROLES)})", {sel}'
    by = "deployment, profile, role, sglang_instance"
    found = targets(plan)
    interval = mon["scrape_interval"]
    down_for = mon["down_for"]
    alerts = _server_alerts(servers, by, down_for)
    if found["router"]:
        alerts += _router_alerts(found, sel, down_for)
    alerts += _load_alerts(mon, plan.profile, sel, by)
    for alert in alerts:  # every alert names its deployment, whatever its expression keeps of the series' labels
        alert["labels"]["deployment"] = name
    return [
        {"name": f"sglang-{name}-recording", "interval": interval, "rules": _recording_rules(sel, by)},
        {"name": f"sglang-{name}-alerts", "interval": interval, "rules": alerts},
    ]


def _recording_rules(sel: str, by: str) -> list[dict[str, Any]]:
    """The per-instance series the alerts and dashboards read: latency quantiles and request counts."""
    return [
        {"record": "sglang_instance:inter_token_latency_seconds:p90",
         "expr": f'histogram_quantile(0.9, sum by ({by}, le) (rate(sglang:inter_token_latency_seconds_bucket'
                 f'{{{sel}, role=~"{TOKEN_ROLES}"}}[{RATE_WINDOW}])))'},
        {"record": "sglang_instance:time_to_first_token_seconds:p90",
         "expr": f'histogram_quantile(0.9, sum by ({by}, le) (rate(sglang:time_to_first_token_seconds_bucket'
                 f'{{{sel}, role=~"{TOKEN_ROLES}"}}[{RATE_WINDOW}])))'},
        {"record": "sglang_instance:num_queue_reqs:sum", "expr": f"sum by ({by}) (sglang:num_queue_reqs{{{sel}}})"},
        {"record": "sglang_instance:num_running_reqs:sum",
         "expr": f"sum by ({by}) (sglang:num_running_reqs{{{sel}}})"},
    ]


def _server_alerts(servers: str, by: str, down_for: str) -> list[dict[str, Any]]:
    """A server down, and an instance whose ranks disagree."""
    return [
        _alert("SGLangServerDown", f"up{{{servers}}} == 0", down_for, "critical",
               "SGLang server {{ $labels.service }} on {{ $labels.host }} is down",
               "Prometheus cannot scrape {{ $labels.instance }} ({{ $labels.role }} instance "
               "{{ $labels.sglang_instance }}, node rank {{ $labels.node_rank }} of {{ $labels.nnodes }}) for "
               f"{down_for}: read its journal (journalctl -u {{{{ $labels.service }}}}) or run doctor.yml."),
        _alert("SGLangInstanceRanksDisagree",
               f"(count by ({by}) (up{{{servers}}} == 0)) and on ({by}) (count by ({by}) (up{{{servers}}} == 1))",
               down_for, "critical",
               "Instance {{ $labels.sglang_instance }} has ranks down while others run",
               "Some node ranks of {{ $labels.sglang_instance }} answer and others do not: the instance cannot serve "
               "(its live ranks wait in a collective). The watchdog restarts every rank together; restart.yml "
               "-e sglang_restart_only={{ $labels.sglang_instance }} does it by hand."),
    ]


def _router_alerts(found: dict[str, Any], sel: str, down_for: str) -> list[dict[str, Any]]:
    """The router down, a worker it marks unhealthy, and fewer workers of a role than the plan has."""
    alerts = [
        _alert("SGLangRouterDown", f'up{{job="sglang-router", {sel}}} == 0', down_for, "critical",
               "sglang-router {{ $labels.service }} on {{ $labels.host }} is down",
               "Prometheus cannot scrape the router's exporter at {{ $labels.instance }} for " + down_for + "."),
        _alert("SGLangRouterWorkerUnhealthy", f"smg_worker_health{{{sel}}} == 0", down_for, "warning",
               "Router {{ $labels.service }} marks worker {{ $labels.worker }} unhealthy",
               "The router's health checks of {{ $labels.worker }} fail; it sends it no requests."),
    ]
    counts = {role: len({e["labels"]["sglang_instance"] for e in found[role]}) for role in SERVER_ROLES}
    for role, worker_type in (("prefill", "prefill"), ("decode", "decode"), ("mixed", "regular")):
        if counts[role]:
            alerts.append(_alert(
                "SGLangRouterWorkersMissing",
                f'sum by (deployment, profile, host, service) (smg_worker_pool_size{{{sel}, worker_type="{worker_type}"}}) '
                f"< {counts[role]}", down_for, "critical",
                f"Router {{{{ $labels.service }}}} lists fewer {role} workers than the plan's {counts[role]}",
                f"The plan puts {counts[role]} {role} instance(s) behind the router; it lists "
                "{{ $value }}: an instance dropped out (status.yml shows which)."))
    return alerts


def _load_alerts(mon: dict[str, Any], profile: str, sel: str, by: str) -> list[dict[str, Any]]:
    """Requests queueing, and the latencies above the profile's targets."""
    alerts = [_alert(
        "SGLangRequestsQueueing",
        f"sum by ({by}) (sglang:num_queue_reqs{{{sel}}}) > 0 and sum by ({by}) (deriv(sglang:num_queue_reqs{{{sel}}}"
        f"[{RATE_WINDOW}])) > 0", QUEUE_FOR, "warning",
        "Requests queue up on {{ $labels.sglang_instance }}",
        f"{{{{ $value }}}} requests wait on {{{{ $labels.sglang_instance }}}} and their number has grown for "
        f"{QUEUE_FOR}: the deployment receives more than it serves.")]
    if mon["tpot_target_seconds"]:
        target = float(mon["tpot_target_seconds"])
        alerts.append(_alert(
            "SGLangTPOTAboveTarget", f"sglang_instance:inter_token_latency_seconds:p90{{{sel}}} > {target:g}",
            TPOT_FOR, "warning", "TPOT p90 of {{ $labels.sglang_instance }} is above the profile's target",
            f"p90 inter-token latency {{{{ $value | humanizeDuration }}}} for {TPOT_FOR}; profile {profile} documents a "
            "TPOT target of "
            f"{target * 1000:g} ms."))
    ttft = float(mon["ttft_p90_seconds"])
    alerts.append(_alert(
        "SGLangTTFTHigh", f"sglang_instance:time_to_first_token_seconds:p90{{{sel}}} > {ttft:g}", TTFT_FOR,
        "warning", "TTFT p90 of {{ $labels.sglang_instance }} is above " + f"{ttft:g} s",
        f"p90 time to first token {{{{ $value | humanizeDuration }}}} for {TTFT_FOR} (threshold: "
        f"{mon['ttft_source']})."))
    return alerts


def files(plan: Plan, base: str) -> dict[str, str]:
    """Relative path -> content of the Prometheus files of a plan written under ``base`` (absolute: the scrape
    config names its files by absolute path, as an existing prometheus.yml including it needs)."""
    mon = plan.monitoring
    if not mon.get("metrics"):
        raise ValueError("sglang_metrics is false: the servers export no metrics, there is nothing to scrape")
    name = deployment(plan)
    out = {"prometheus.yml": prometheus_config(base, mon["scrape_interval"])}
    for role, entries in targets(plan).items():
        out[f"targets/{name}.{role}.json"] = json.dumps(entries, indent=1) + "\n"
    out[f"rules/{name}.yml"] = rules(plan)
    return out


# What the collection's YAML files carry in their first lines (prometheus_config, rules): a file without it is
# the operator's.
MARK = "ascend.sglang"


def foreign(rel: str, existing: str, name: str) -> str | None:
    """Why the file already at ``rel`` (relative to the directory) is not one the collection wrote for deployment
    ``name``, so must not be replaced; None when it may be.  Target lists carry no comment: one is this
    deployment's when every entry has the labels this collection writes and this deployment's name (an empty list
    holds nothing to lose)."""
    if rel.endswith(".yml"):
        if MARK in "".join(existing.splitlines(keepends=True)[:3]):
            return None
        return f"has no '{MARK}' header: the collection did not write it"
    try:
        entries = json.loads(existing)
    except ValueError:
        return "is not a target list the collection wrote (not JSON)"
    if not isinstance(entries, list) or not all(
            isinstance(e, dict) and isinstance(e.get("labels"), dict) and "sglang_instance" in e["labels"]
            for e in entries):
        return "is not a target list the collection wrote (entries without its labels)"
    others = sorted({str(e["labels"].get("deployment", name)) for e in entries} - {name})
    if others:
        return f"holds the targets of deployment {', '.join(others)}"
    return None
