"""The export's monitoring objects: a PodMonitor per role whose relabelings give every pod's series the labels
monitoring.yml's target lists give the same service, and a PrometheusRule holding the rules monitoring.yml writes;
the real promtool checks both (the rule groups, and the relabelings as a scrape configuration).

The relabelings are evaluated here as Prometheus evaluates a ``replace`` action (Prometheus docs, configuration,
<relabel_config>: the source labels' values joined with ';', the regex anchored at both ends, $1 expanded from its
group; no match leaves the target label as it is), over the pod names the workload controllers give
(tests/support/k8s_objects.py).
"""

from __future__ import annotations

import re
import subprocess

import pytest
import yaml

from ansible_collections.ascend.sglang.plugins.plugin_utils.targets import _k8s_export, _monitoring
from ansible_collections.ascend.sglang.plugins.plugin_utils.targets._k8s_manifests import dump
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import load_profile
from ansible_collections.ascend.sglang.tests.unit.plans import instances_plan
from k8s_schema import custom_problems
from local import promtool

PD_RUST = "glm_5_1_a3_48c_pd_65k5_1k_prefix90_50ms"  # prefill 1 node, decode 2 nodes; a Rust router
MIXED = "qwen3_32b_a2_8c_mixed_2k_2k_50ms"
IMAGE = "lmsysorg/sglang:k8s-test"
NAME = "sg"


def exported(pid, kind="rbg", **variables):
    profile = load_profile(pid)
    counts = {role: profile.roles[role].documented_instances + 1 for role in profile.server_roles}
    result = _k8s_export.export(pid, dict(sglang_model_path="/models/m", sglang_draft_model_path="/models/d",
                                          sglang_container_image=IMAGE, sglang_k8s_kind=kind, sglang_k8s_name=NAME,
                                          sglang_k8s_instances=counts, **variables), nic="ens1")
    return [yaml.safe_load(dump(obj, pid)) for obj in result.objects], counts


def host_plan(pid, counts):
    """The host rollout's plan of the same instances (one host per rank), as monitoring.yml reads it."""
    variables = {"sglang_model_path": "/models/m", "sglang_draft_model_path": "/models/d"}
    return instances_plan(load_profile(pid), counts, variables)


def relabel(rules, labels):
    """Prometheus' replace action, rule after rule."""
    out = dict(labels)
    for rule in rules:
        assert rule["action"] == "replace"
        value = ";".join(out.get(name, "") for name in rule.get("sourceLabels", []))
        match = re.fullmatch(rule.get("regex", "(.*)"), value)
        if match:
            out[rule["targetLabel"]] = re.sub(r"\$(\d+)", lambda m: match.group(int(m.group(1))) or "",
                                              rule.get("replacement", "$1"))
    return out


def pod_name(kind, role, group, worker):
    """The pod names of the controllers (LWS: the leader <lws>-<group>, the others <lws>-<group>-<worker>; RBG:
    <rbg>-<role>-<group>-<worker>)."""
    base = f"{NAME}-{role}-{group}"
    return base if kind == "lws" and worker == 0 else f"{base}-{worker}"


def of_kind(objects, kind):
    return [o for o in objects if o["kind"] == kind]


@pytest.mark.parametrize("kind", ["rbg", "lws"])
@pytest.mark.parametrize("pid", [PD_RUST, MIXED])
def test_every_pod_gets_the_labels_of_monitoring_yml(pid, kind):
    objects, counts = exported(pid, kind)
    on_hosts = host_plan(pid, counts)
    targets = _monitoring.targets(on_hosts)
    monitors = {m["metadata"]["name"]: m for m in of_kind(objects, "PodMonitor")}
    assert set(monitors) == {f"{NAME}-{role}" for role in (*load_profile(pid).server_roles, "router")}
    compared = 0
    for role, entries in targets.items():
        for entry in entries:
            want = entry["labels"]
            monitor = monitors[f"{NAME}-{role}"]
            endpoint = monitor["spec"]["podMetricsEndpoints"][0]
            assert endpoint["port"] == ("metrics" if role == "router" else "http") and endpoint["path"] == "/metrics"
            if role == "router":
                pod = f"{NAME}-router-6d4cf56db6-x7k2p"  # a Deployment's (or RBG's) replica: its name as it comes
            else:
                group = int(want["sglang_instance"].rsplit("-i", 1)[1])
                pod = pod_name(kind, role, group, int(want["node_rank"]))
            # prometheus-operator's own labels first (job <namespace>/<monitor>), then the export's relabelings.
            got = relabel(endpoint["relabelings"], {"__meta_kubernetes_pod_name": pod, "job": f"default/{role}",
                                                    "__meta_kubernetes_pod_node_name": "node-7"})
            expected = dict(want, host="node-7", service=pod, job=f"sglang-{role}")
            if role == "router":
                expected["sglang_instance"] = pod
            assert {k: got.get(k) for k in expected} == expected, (role, pod)
            assert monitor["spec"]["selector"]["matchLabels"] == {"app.kubernetes.io/instance": NAME,
                                                                  "app.kubernetes.io/component": role}
            compared += 1
    assert compared == sum(len(e) for e in targets.values()) > 2


@pytest.mark.parametrize("pid", [PD_RUST, MIXED, "deepseek_r1_pd32"])
def test_the_rules_are_monitoring_yml_s(pid):
    objects, counts = exported(pid)
    rule = of_kind(objects, "PrometheusRule")
    assert len(rule) == 1
    assert rule[0]["spec"]["groups"] == yaml.safe_load(_monitoring.rules(host_plan(pid, counts)))["groups"]
    assert custom_problems(rule[0]) == []
    for monitor in of_kind(objects, "PodMonitor"):
        assert custom_problems(monitor) == []


def test_no_monitoring_objects_without_metrics_or_when_turned_off():
    for variables in ({"sglang_metrics": False}, {"sglang_k8s_prometheus_operator": False}):
        objects, unused = exported(PD_RUST, **variables)
        assert not of_kind(objects, "PodMonitor") and not of_kind(objects, "PrometheusRule"), variables


def test_a_mini_lb_router_has_no_monitor():
    objects, unused = exported("deepseek_r1_pd32")
    assert sorted(m["metadata"]["name"] for m in of_kind(objects, "PodMonitor")) == [f"{NAME}-decode",
                                                                                     f"{NAME}-prefill"]


def _snake(rule):
    """A PodMonitor relabeling as the Prometheus configuration spells it (what prometheus-operator writes)."""
    names = {"sourceLabels": "source_labels", "targetLabel": "target_label"}
    return {names.get(k, k): v for k, v in rule.items()}


@pytest.mark.parametrize("pid", [PD_RUST, MIXED])
def test_promtool_checks_the_rules_and_the_relabelings(tmp_path, pid):
    tool = promtool()
    objects, unused = exported(pid)
    rules = tmp_path / "rules.yml"
    rules.write_text(yaml.safe_dump({"groups": of_kind(objects, "PrometheusRule")[0]["spec"]["groups"]}))
    checked = subprocess.run([tool, "check", "rules", str(rules)], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    jobs = [{"job_name": m["metadata"]["name"], "static_configs": [{"targets": ["127.0.0.1:9"]}],
             "relabel_configs": [_snake(r) for r in m["spec"]["podMetricsEndpoints"][0]["relabelings"]]}
            for m in of_kind(objects, "PodMonitor")]
    config = tmp_path / "prometheus.yml"
    config.write_text(yaml.safe_dump({"scrape_configs": jobs}))
    checked = subprocess.run([tool, "check", "config", str(config)], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr
