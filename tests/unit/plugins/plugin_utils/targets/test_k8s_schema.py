"""Every manifest of the Kubernetes export validates against the real schemas (tests/support/k8s_schema.py): core
objects and every pod template with kubernetes-validate's strict schemas, RoleBasedGroup and LeaderWorkerSet with
their CRDs' openAPIV3Schema; an unknown field fails. Not proven here: that a cluster runs them (no cluster here)."""

from __future__ import annotations

import copy

import pytest
import yaml

from ansible_collections.ascend.sglang.plugins.plugin_utils.targets._k8s_manifests import dump
from ansible_collections.ascend.sglang.plugins.plugin_utils.targets import _k8s_export
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import available_profiles, load_profile
from k8s_objects import pod_templates
from k8s_schema import CUSTOM_KINDS, as_pod, core_problems, custom_problems, unknown_fields, crd_schema

DOCUMENTED = [pid for pid in available_profiles() if load_profile(pid).id == pid]
VARIABLES = {"sglang_model_path": "/models/m", "sglang_draft_model_path": "/models/draft",
             "sglang_init_expert_location": "/models/experts.json", "sglang_container_image": "lmsysorg/sglang:k8s-test"}


def export(pid, kind, **more):
    profile = load_profile(pid)
    variables = dict(VARIABLES, sglang_k8s_kind=kind,
                     sglang_k8s_instances={role: profile.roles[role].documented_instances + 1
                                           for role in profile.server_roles},
                     sglang_k8s_secret_flags={profile.server_roles[0]: ["--api-key"]}, **more)
    result = _k8s_export.export(pid, variables, nic="ens1")
    return [yaml.safe_load(dump(obj, pid)) for obj in result.objects], profile


def problems(objects, kind, roles):
    out = []
    for obj in objects:
        out += custom_problems(obj) if obj["kind"] in CUSTOM_KINDS else core_problems(obj)
    for role in (*roles, "router"):
        leader, worker = pod_templates(objects, kind, "sglang", role)[:2]
        for rank, template in (("leader", leader), ("worker", worker)):
            if template is not None:
                out += core_problems(as_pod(template, f"sglang-{role}-0-{rank}", "default"))
    return out


@pytest.mark.parametrize("kind", ["rbg", "lws"])
@pytest.mark.parametrize("pid", DOCUMENTED)
def test_every_manifest_validates(pid, kind):
    objects, profile = export(pid, kind)
    kinds = sorted(obj["kind"] for obj in objects)
    roles = profile.server_roles
    router = profile.roles.get("router")
    # A router with a worker API discovers its workers under a ServiceAccount of its own; --mini-lb does not.
    mini_lb = router is not None and router.args.get("--mini-lb") is True
    rbac = [] if mini_lb else ["Role", "RoleBinding", "ServiceAccount"]
    # Metrics are on by default: a PodMonitor per role (the mini load balancer has no exporter) and the rules.
    rbac += ["PodMonitor"] * (len(roles) + (0 if mini_lb else 1)) + ["PrometheusRule"]
    if kind == "rbg":
        assert kinds == sorted(["RoleBasedGroup", "Service"] + rbac)
    else:
        assert kinds == sorted(["LeaderWorkerSet"] * len(roles) + ["Deployment", "Service"] + rbac)
    assert problems(objects, kind, roles) == []


def test_model_claim_validates():
    objects, profile = export("deepseek_r1_pd32", "lws", sglang_k8s_model_pvc="models")
    assert problems(objects, "lws", profile.server_roles) == []
    leader = pod_templates(objects, "lws", "sglang", "prefill")[0]
    claims = [v for v in leader["spec"]["volumes"] if "persistentVolumeClaim" in v]
    assert claims == [{"name": "model", "persistentVolumeClaim": {"claimName": "models", "readOnly": True}}]
    assert {"name": "model", "mountPath": "/models/m", "readOnly": True} in leader["spec"]["containers"][0]["volumeMounts"]
    assert not [v for v in leader["spec"]["volumes"] if v.get("hostPath", {}).get("path") == "/models/m"]


@pytest.mark.parametrize("kind", ["rbg", "lws"])
def test_an_unknown_or_mistyped_field_fails(kind):
    """The validation can fail: a field the schemas do not know, in the workload and in a template, and a wrong type."""
    objects, profile = export("deepseek_r1_pd32", kind)
    workload = next(o for o in objects if o["kind"] in ("RoleBasedGroup", "LeaderWorkerSet"))
    bad = copy.deepcopy(workload)
    bad["spec"]["replicasTypo"] = 2
    assert any("replicasTypo: unknown field" in p for p in custom_problems(bad))
    bad = copy.deepcopy(workload)
    if kind == "rbg":
        container = bad["spec"]["roles"][0]["leaderWorkerPattern"]["template"]["spec"]["containers"][0]
        bad["spec"]["roles"][0]["restartPolicyConfig"] = {"type": "Always"}  # a field of the pattern, not the role
    else:
        container = bad["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]
    container["argz"] = ["--oops"]
    found = custom_problems(bad)
    assert any(p.endswith("containers[0].argz: unknown field") for p in found), found
    if kind == "rbg":
        assert any(p.endswith("roles[0].restartPolicyConfig: unknown field") for p in found), found
    bad = copy.deepcopy(workload)
    if kind == "rbg":
        bad["spec"]["roles"][0]["replicas"] = "two"
    else:
        bad["spec"]["replicas"] = "two"
    assert any("is not of type 'integer'" in p for p in custom_problems(bad))
    service = copy.deepcopy(next(o for o in objects if o["kind"] == "Service"))
    service["spec"]["ports"][0]["portt"] = 1
    assert core_problems(service)
    leader = pod_templates(objects, kind, "sglang", "prefill")[0]
    pod = as_pod(leader, "p", "default")
    pod["spec"]["containers"][0]["resources"]["limits"]["huawei.com/Ascend910"] = {"count": 16}
    assert core_problems(pod)


def test_the_walk_honours_the_structural_schema():
    schema = {"type": "object", "properties": {
        "a": {"type": "object", "properties": {"b": {"type": "string"}}},
        "m": {"type": "object", "additionalProperties": {"type": "object", "properties": {"x": {"type": "string"}}}},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True, "properties": {
            "k": {"type": "object", "properties": {"y": {"type": "string"}}}}},
        "items": {"type": "array", "x-kubernetes-preserve-unknown-fields": True,
                  "items": {"type": "object", "properties": {"z": {"type": "string"}}}},
        "meta": {"type": "object"},
    }}
    instance = {"a": {"b": "1", "c": 2}, "m": {"k1": {"x": "1", "w": 1}}, "free": {"any": 1, "k": {"q": 1}},
                "items": [{"z": "1", "zz": 2}], "meta": {"labels": {}}, "top": 1}
    assert sorted(unknown_fields(instance, schema)) == [".a.c", ".free.k.q", ".items[0].zz", ".m.k1.w", ".meta.labels",
                                                        ".top"]


def test_the_vendored_crds_serve_the_exported_versions():
    assert crd_schema("workloads.x-k8s.io", "RoleBasedGroup", "v1alpha2")["properties"]["spec"]["required"] == ["roles"]
    assert "leaderWorkerTemplate" in crd_schema("leaderworkerset.x-k8s.io", "LeaderWorkerSet", "v1")[
        "properties"]["spec"]["properties"]
