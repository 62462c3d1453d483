"""The Kubernetes export's values and refusals (no Ansible): plugin_utils/targets/_k8s_export.py and _k8s_manifests.py."""

from __future__ import annotations

import json

import pytest

from ansible_collections.ascend.sglang.plugins.plugin_utils.targets import _k8s_export
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import PlanError
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import load_profile
from k8s_objects import pod_templates

MODEL = {"sglang_model_path": "/models/m", "sglang_draft_model_path": "/models/draft"}


def export(pid="deepseek_r1_pd32", nic="ens1", **variables):
    return _k8s_export.export(pid, dict(MODEL, **variables), nic=nic)


def refused(pid="deepseek_r1_pd32", nic="ens1", **variables):
    with pytest.raises(PlanError) as exc:
        export(pid, nic, **variables)
    return {(f.variable, f.message) for f in exc.value.findings}


def named(found):
    return {variable for variable, message in found if message}


def container(template):
    return template["spec"]["containers"][0]


def test_bad_values_are_refused_together_naming_each_variable():
    found = dict(refused(sglang_k8s_npu_resource="huawei.com/Ascend 910", sglang_k8s_kind="statefulset",
                         sglang_k8s_instances={"decode": -1, "mixed": 1}, sglang_k8s_name="SGLang",
                         sglang_k8s_namespace="a_b", sglang_k8s_secret_flags={"router": "--api-key"},
                         sglang_k8s_startup_seconds=5, sglang_k8s_model_pvc="models/x"))
    assert set(found) == {"sglang_k8s_npu_resource", "sglang_k8s_kind", "sglang_k8s_instances.decode",
                          "sglang_k8s_instances.mixed", "sglang_k8s_name", "sglang_k8s_namespace",
                          "sglang_k8s_secret_flags.router", "sglang_k8s_startup_seconds", "sglang_k8s_model_pvc"}
    assert "huawei.com/Ascend 910" in found["sglang_k8s_npu_resource"]
    assert "must be one of rbg, lws" in found["sglang_k8s_kind"]
    assert "within 1..64, got -1" in found["sglang_k8s_instances.decode"]
    assert "not a role of profile" in found["sglang_k8s_instances.mixed"]


def test_a_multi_node_profile_needs_the_nic_once():
    assert refused(nic=None) == {("sglang_nic", "profile 'deepseek_r1_a3_32c_pd_3k5_1k5_50ms' runs multi-node "
                                                "instances: set the NIC of HCCL/GLOO on the nodes "
                                                "(-e sglang_nic=IFACE; one name for every node)")}
    assert named(refused(nic="bad nic")) == {"sglang_nic"}
    # A single-node profile needs none (its ranks talk over loopback, as on hosts).
    assert export("qwen3_32b_a2_8c_mixed_2k_2k_50ms", nic=None, sglang_container_image="lmsysorg/sglang:t").objects


def test_the_planner_checks_still_apply():
    """The same contract as plan.yml: a flag the release's parser lacks, an unknown variable's nearest name."""
    found = refused(sglang_overrides={"decode": {"args": {"--no-such-flag": 1}}})
    assert "sglang_overrides.decode.args.--no-such-flag" in named(found)
    assert named(refused("qwen3_32b_a2_8c_mixed_2k_2k_50ms", nic=None)) == {"sglang_container_image"}


def test_the_documented_image_is_the_default():
    result = export()
    leader = pod_templates(result.objects, "rbg", "sglang", "prefill")[0]
    assert container(leader)["image"] == "lmsysorg/sglang:cann8.3.rc2-a3-release20260106"


def test_secret_flags_come_from_the_secret_never_inline():
    result = export(sglang_secrets={"router": {"--api-key": "hunter2-secret"}}, sglang_k8s_secret_name="llm-keys")
    router = container(pod_templates(result.objects, "rbg", "sglang", "router")[0])
    assert router["env"][-1] == {"name": "SGLANG_SECRET_0",
                                 "valueFrom": {"secretKeyRef": {"name": "llm-keys", "key": "api-key"}}}
    assert router["command"][-2:] == ["1", "--api-key"]
    assert "hunter2" not in json.dumps(result.objects) and "hunter2" not in json.dumps(result.plan.as_dict())
    found = refused(sglang_k8s_secret_flags={"router": ["--no-such-router-flag"]})
    # Named as the operator set it, not as the planner saw it (sglang_secrets).
    assert named(found) == {"sglang_k8s_secret_flags.router.--no-such-router-flag"}


@pytest.mark.parametrize("kind", ["rbg", "lws"])
def test_server_pods(kind):
    result = export(sglang_k8s_kind=kind, sglang_k8s_npu_resource="huawei.com/ascend-1980", sglang_k8s_startup_seconds=1801,
                    sglang_container_shm_size="32g")
    leader, worker, replicas, size = pod_templates(result.objects, kind, "sglang", "decode")
    assert (replicas, size) == (1, 2)
    for template in (leader, worker):
        spec = template["spec"]
        assert spec["hostNetwork"] is True and spec["dnsPolicy"] == "ClusterFirstWithHostNet"
        anti = spec["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
        assert anti["topologyKey"] == "kubernetes.io/hostname"
        assert container(template)["resources"]["limits"] == {"huawei.com/ascend-1980": "16"}
        assert {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "32Gi"}} in spec["volumes"]
        paths = {v["hostPath"]["path"] for v in spec["volumes"] if "hostPath" in v}
        assert paths == {"/usr/local/Ascend/driver", "/usr/local/dcmi", "/usr/local/bin/npu-smi",
                         "/etc/ascend_install.info", "/etc/hccn.conf", "/models/m"}
        assert all(m["readOnly"] for m in container(template)["volumeMounts"] if m["name"] != "dshm")
    # Only the leader serves HTTP: its probes; the start-up allowance before liveness counts.
    assert container(leader)["startupProbe"]["failureThreshold"] == 181
    assert container(leader)["readinessProbe"]["httpGet"] == {"path": "/health", "port": 8001}
    assert "livenessProbe" in container(leader) and "readinessProbe" not in container(worker)
    args = container(worker)["args"]
    assert args[args.index("--node-rank") + 1] == ("$(RBG_LWP_WORKER_INDEX)" if kind == "rbg" else "$(LWS_WORKER_INDEX)")
    assert args[args.index("--host") + 1] == "$(POD_IP)"


def test_pd_mixed_router_and_a_partial_node():
    """A PD-mixed profile gets a router in front of its replicas, reached through its Service; a replica of part of
    a node numbers its NPUs from 0 (the device plugin's), whatever --base-gpu-id the document gives."""
    pid = "qwen3_32b_a3_4c_mixed_4k_1k5_11ms"
    port = load_profile(pid).roles["mixed"].port
    result = export(pid, nic=None, sglang_k8s_instances={"mixed": 3}, sglang_k8s_kind="lws",
                    sglang_k8s_router_discovery=False)
    router = container(pod_templates(result.objects, "lws", "sglang", "router")[0])
    urls = router["args"][router["args"].index("--worker-urls") + 1:][:3]
    assert urls == [f"http://sglang-mixed-{i}.sglang-mixed.default:{port}" for i in range(3)]
    assert router["args"][router["args"].index("--host") + 1] == "$(POD_IP)"
    mixed = container(pod_templates(result.objects, "lws", "sglang", "mixed")[0])
    assert mixed["args"][mixed["args"].index("--base-gpu-id") + 1] == "0"
    assert mixed["resources"]["limits"] == {"huawei.com/Ascend910": "8"}
    service = next(o for o in result.objects if o["kind"] == "Service" and o["metadata"]["name"] == "sglang-router")
    assert service["spec"]["ports"][0] == {"name": "http", "port": 6688, "targetPort": "http", "protocol": "TCP"}


def test_a_claim_is_mounted_at_the_model_paths_common_parent_never_on_root():
    pid = "qwen3_235b_a3_8c_mixed_11k_1k_10ms"  # an EAGLE3 draft model besides the model
    image = "lmsysorg/sglang:t"
    result = export(pid, sglang_k8s_model_pvc="models", sglang_container_image=image)
    mixed = container(pod_templates(result.objects, "rbg", "sglang", "mixed")[0])
    assert [m for m in mixed["volumeMounts"] if m["name"] == "model"] == [
        {"name": "model", "mountPath": "/models", "readOnly": True}]
    found = refused(pid, sglang_k8s_model_pvc="models", sglang_draft_model_path="/draft", sglang_container_image=image)
    assert named(found) == {"sglang_k8s_model_pvc"} and len(found) == 1


# A PD profile whose router has a worker API (no --mini-lb): 4 single-node prefill instances, 1 decode on 2 nodes.
PD_RUST = "glm_5_1_a3_48c_pd_65k5_1k_prefix90_50ms"


def labels_match(selector_words, labels):
    return all(labels.get(k) == v for k, v in (w.split("=", 1) for w in selector_words))


def selector_words(args, flag):
    at = args.index(flag) + 1
    words = []
    while at < len(args) and not args[at].startswith("--"):
        words.append(args[at])
        at += 1
    return words


@pytest.mark.parametrize("kind", ["rbg", "lws"])
def test_the_router_discovers_the_leader_pods_by_label(kind):
    profile = load_profile(PD_RUST)
    result = export(PD_RUST, sglang_k8s_kind=kind, sglang_k8s_namespace="llm", sglang_container_image="x/sglang:t")
    router_template = pod_templates(result.objects, kind, "sglang", "router")[0]
    args = container(router_template)["args"]
    assert "--prefill" not in args and "--decode" not in args and "--service-discovery" in args
    assert args[args.index("--service-discovery-namespace") + 1] == "llm"
    port = profile.roles["prefill"].port
    assert args[args.index("--service-discovery-port") + 1] == str(port)
    for role in ("prefill", "decode"):
        leader, worker = pod_templates(result.objects, kind, "sglang", role)[:2]
        words = selector_words(args, f"--{role}-selector")
        # Every leader is selected, never another rank (they serve no HTTP) nor the other role's pods.
        assert labels_match(words, leader["metadata"]["labels"]), role
        assert worker is None or not labels_match(words, worker["metadata"]["labels"]), role
        other = pod_templates(result.objects, kind, "sglang", "decode" if role == "prefill" else "prefill")[0]
        assert not labels_match(words, other["metadata"]["labels"])
        # One port for both roles: the one the router dials.
        leader_args = container(leader)["args"]
        assert leader_args[leader_args.index("--port") + 1] == str(port)
        assert container(leader)["readinessProbe"]["httpGet"]["port"] == port
    prefill = pod_templates(result.objects, kind, "sglang", "prefill")[0]
    bootstrap = container(prefill)["args"][container(prefill)["args"].index("--disaggregation-bootstrap-port") + 1]
    assert prefill["metadata"]["annotations"] == {"sglang.ai/bootstrap-port": bootstrap}
    # Its own ServiceAccount, allowed to list and watch pods in its namespace and nothing else.
    assert router_template["spec"]["serviceAccountName"] == "sglang-router"
    rbac = {o["kind"]: o for o in result.objects if o["kind"] in ("ServiceAccount", "Role", "RoleBinding")}
    assert set(rbac) == {"ServiceAccount", "Role", "RoleBinding"}
    assert all(o["metadata"]["namespace"] == "llm" and o["metadata"]["name"] == "sglang-router" for o in rbac.values())
    assert rbac["Role"]["rules"] == [{"apiGroups": [""], "resources": ["pods"], "verbs": ["list", "watch"]}]
    assert rbac["RoleBinding"]["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                              "name": "sglang-router"}
    assert rbac["RoleBinding"]["subjects"] == [{"kind": "ServiceAccount", "name": "sglang-router", "namespace": "llm"}]
    assert not any(o["kind"] == "ClusterRole" for o in result.objects)


def test_scaling_a_role_leaves_the_discovering_router_unchanged():
    def router_args(counts):
        result = export(PD_RUST, sglang_k8s_instances=counts, sglang_container_image="x/sglang:t")
        return container(pod_templates(result.objects, "rbg", "sglang", "router")[0])["args"]

    assert router_args({"prefill": 4, "decode": 1}) == router_args({"prefill": 7, "decode": 3})
    fixed = export(PD_RUST, sglang_k8s_router_discovery=False, sglang_container_image="x/sglang:t")
    args = container(pod_templates(fixed.objects, "rbg", "sglang", "router")[0])["args"]
    assert args.count("--prefill") == 4 and "--service-discovery" not in args


def test_a_mini_lb_router_keeps_its_fixed_list():
    """--mini-lb has no worker API and no discovery: the planned list, each role on its documented port."""
    result = export()
    args = container(pod_templates(result.objects, "rbg", "sglang", "router")[0])["args"]
    assert "--mini-lb" in args and "--service-discovery" not in args and args.count("--prefill") == 2
    decode = container(pod_templates(result.objects, "rbg", "sglang", "decode")[0])["args"]
    assert decode[decode.index("--port") + 1] == str(load_profile("deepseek_r1_pd32").roles["decode"].port)
    assert not any(o["kind"] in ("ServiceAccount", "Role", "RoleBinding") for o in result.objects)


@pytest.mark.parametrize("kind", ["rbg", "lws"])
def test_a_role_rolls_as_restart_yml_restarts(kind):
    """sglang_restart_batch is each server role's maxUnavailable (a count or a percentage); no surge: an instance
    above the role's count would need idle NPU nodes."""
    def strategies(**variables):
        objects = export(sglang_k8s_kind=kind, **variables).objects
        if kind == "rbg":
            roles = next(o for o in objects if o["kind"] == "RoleBasedGroup")["spec"]["roles"]
            return {r["name"]: (r.get("rolloutStrategy") or {}).get("rollingUpdate") for r in roles}
        return {o["metadata"]["name"]: o["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"]
                for o in objects if o["kind"] == "LeaderWorkerSet"}

    default = strategies()
    wanted = {"maxUnavailable": 1, "maxSurge": 0}
    if kind == "rbg":
        assert default == {"prefill": wanted, "decode": wanted, "router": None}
    else:
        assert default == {"sglang-prefill": wanted, "sglang-decode": wanted}
    assert {v["maxUnavailable"] for v in strategies(sglang_restart_batch="25%").values() if v} == {"25%"}
    assert {v["maxUnavailable"] for v in strategies(sglang_restart_batch=2).values() if v} == {2}
    assert named(refused(sglang_restart_batch="0%")) == {"sglang_restart_batch"}
    held = strategies(sglang_k8s_rollout_partition={"prefill": 2})
    assert [v.get("partition") for v in held.values() if v] == [2, None]
    assert named(refused(sglang_k8s_rollout_partition={"router": 1, "decode": 65})) == {
        "sglang_k8s_rollout_partition.router", "sglang_k8s_rollout_partition.decode"}
