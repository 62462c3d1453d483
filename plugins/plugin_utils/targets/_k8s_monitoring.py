# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Telling a Prometheus Operator in the cluster about the pods: a PodMonitor per role and the deployment's rules.

Pure; no Ansible import.  The rules are the host rollout's (plugin_utils/targets/_monitoring.py ``rule_groups``, the
groups monitoring.yml writes), in one PrometheusRule.  They select and group series by the labels monitoring.yml's
target lists give (job sglang-<role>, deployment, profile, role, sglang_instance, node_rank, nnodes, host, service):
each PodMonitor gives a pod's series the same labels, from the pod (its name and node) and the plan, with
relabelings (prometheus-operator applies them after its own, so they set ``job`` too).

Pod names, as the workloads make them (tests/support/k8s_objects.py has the controllers' sources): a LeaderWorkerSet
names a group's leader <lws>-<group> and its other pods <lws>-<group>-<worker>; a RoleBasedGroup names them
<rbg>-<role>-<group>-<worker>, the leader's worker index 0.  The group index makes sglang_instance (<role>-i<group>,
the plan's instance key) and the worker index the node rank.
"""

from __future__ import annotations

from typing import Any, Mapping

from ansible_collections.ascend.sglang.plugins.plugin_utils.targets import _monitoring
from ansible_collections.ascend.sglang.plugins.plugin_utils.targets._k8s_placement import Workload
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import Plan, Service

API_VERSION = "monitoring.coreos.com/v1"


def _static(label: str, value: str) -> dict[str, Any]:
    """A relabeling that sets ``label`` to a fixed value (the default regex (.*) matches the empty source)."""
    return {"action": "replace", "targetLabel": label, "replacement": value}


def _from(source: str, label: str, regex: str = "(.*)", replacement: str = "$1") -> dict[str, Any]:
    """A relabeling that sets ``label`` from a discovery label, when ``regex`` matches it (else it is left as is)."""
    return {"action": "replace", "sourceLabels": [source], "regex": regex, "targetLabel": label,
            "replacement": replacement}


def relabelings(plan: Plan, workload: Workload, role: str, nnodes: int) -> list[dict[str, Any]]:
    """The labels monitoring.yml's target lists give a service, for a pod of ``role``."""
    pod = "__meta_kubernetes_pod_name"
    out = [_static("job", f"sglang-{role}"), _static("deployment", _monitoring.deployment(plan)),
           _static("profile", plan.profile), _static("role", role), _static("nnodes", str(nnodes)),
           _from("__meta_kubernetes_pod_node_name", "host"), _from(pod, "service")]
    if role == "router":
        # Router replicas are alike: each is an instance of its own, named by its pod.
        return out + [_from(pod, "sglang_instance"), _static("node_rank", "0")]
    # A DNS label (a-z, 0-9, '-'): nothing in it is special in a regular expression.
    group = workload.group(role)
    return out + [
        _from(pod, "sglang_instance", rf"{group}-([0-9]+)(-[0-9]+)?", f"{role}-i$1"),
        _static("node_rank", "0"),
        _from(pod, "node_rank", rf"{group}-[0-9]+-([0-9]+)"),
    ]


def pod_monitor(plan: Plan, workload: Workload, role: str, svc: Service, port_name: str, interval: str,
                labels: Mapping[str, str], selector: Mapping[str, str]) -> dict[str, Any]:
    """The PodMonitor of one role: every pod of it (every rank: each serves /metrics on its port)."""
    return {"apiVersion": API_VERSION, "kind": "PodMonitor",
            "metadata": {"name": workload.group(role), "namespace": workload.namespace, "labels": dict(labels)},
            "spec": {"selector": {"matchLabels": dict(selector)},
                     "podMetricsEndpoints": [{"port": port_name, "path": "/metrics", "interval": interval,
                                              "relabelings": relabelings(plan, workload, role, svc.nnodes)}]}}


def prometheus_rule(plan: Plan, workload: Workload, labels: Mapping[str, str]) -> dict[str, Any]:
    """The deployment's recording and alerting rules: the groups monitoring.yml writes, as they are."""
    return {"apiVersion": API_VERSION, "kind": "PrometheusRule",
            "metadata": {"name": workload.name, "namespace": workload.namespace, "labels": dict(labels)},
            "spec": {"groups": _monitoring.rule_groups(plan)}}
