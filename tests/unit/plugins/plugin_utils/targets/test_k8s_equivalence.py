"""The Kubernetes export runs the host plan: for every documented profile, both workload kinds and every rank, the
manifest's argv and env with the rank's placement values put back equal the host plan's, element for element.

The host plan is planned on an inventory of its own (one host per rank, addresses 10.x), independently of the export
(stand-in hosts, the Kubernetes placement). The placement values are put back by name (the pod's own address, the
leader address and worker index the workload injects, the leader pods' DNS names as the controllers form them:
tests/support/k8s_objects.py) and by flag (a role's bootstrap port, --base-gpu-id), and one recorded deviation is
applied to the host side: a router bound to loopback on its host binds its pod's address. A router with a worker API
discovers its workers (sglang_k8s_router_discovery, on by default): its worker flags are replaced by the discovery
flags, written here from sglang-router's launcher and the export's labels, and every server role listens on the
first role's port (the one port the router dials).
"""

from __future__ import annotations

import re

import pytest
import yaml

from ansible_collections.ascend.sglang.plugins.plugin_utils.targets._k8s_manifests import dump
from ansible_collections.ascend.sglang.plugins.plugin_utils.targets import _k8s_export
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import available_profiles, load_profile
from ansible_collections.ascend.sglang.tests.unit.plans import instances_plan
from k8s_objects import INDEX_VAR, LEADER_VAR, leader_dns, pod_templates

DOCUMENTED = [pid for pid in available_profiles() if load_profile(pid).id == pid]
# The profiles on SGLang 0.5.7 have no documented image: every profile gets the same one here (the documented
# default is test_k8s_export.py's).
PATHS = {"sglang_model_path": "/models/m", "sglang_draft_model_path": "/models/draft",
         "sglang_init_expert_location": "/models/experts.json", "sglang_container_image": "lmsysorg/sglang:k8s-test"}
SECRET = "s3cret-never-written"
NAME, NAMESPACE = "sg", "llm"


def test_every_documented_profile_is_exported():
    # 40 January configurations, 154 of the current pages (80 imported, 68 kept as <id>_at_<commit>, 6 retired)
    # and 28 of SGLang's nightly tests (one retired).
    assert len(DOCUMENTED) == 222


def _counts(profile):
    # One more instance than documented: a role's instances differ in their bootstrap ports on hosts.
    return {role: profile.roles[role].documented_instances + 1 for role in profile.server_roles}


def host_plan(profile, counts):
    return instances_plan(profile, counts, dict(PATHS, sglang_runtime="container",
                                                sglang_secrets={profile.server_roles[0]: {"--api-key": SECRET}}))


def exported(pid, kind, counts):
    profile = load_profile(pid)
    result = _k8s_export.export(pid, dict(PATHS, sglang_k8s_kind=kind, sglang_k8s_name=NAME,
                                          sglang_k8s_namespace=NAMESPACE, sglang_k8s_instances=counts,
                                          sglang_k8s_secret_flags={profile.server_roles[0]: ["--api-key"]}),
                                nic="ens1")
    # Read back from the files' text, as kubectl would.
    return [yaml.safe_load(dump(obj, result.plan.profile)) for obj in result.objects], result


def _put_back(text, values):
    for key in sorted(values, key=len, reverse=True):
        text = text.replace(key, values[key])
    return text


def _by_flag(args, host_argv, flags):
    """The value after each of ``flags`` from the host's argv (the flag at the same place in both)."""
    out = list(args)
    for at, word in enumerate(out[:-1]):
        if word in flags:
            assert host_argv[at] == word
            out[at + 1] = host_argv[at + 1]
    return out


def _router_bootstrap(args, bootstrap_of):
    """--prefill URL BOOTSTRAP: each instance's own bootstrap port on hosts."""
    out = list(args)
    for at, word in enumerate(out[:-2]):
        if word == "--prefill" and re.fullmatch(r"[0-9]+", out[at + 2]):
            out[at + 2] = str(bootstrap_of[out[at + 1]])
    return out


def _container(template):
    return template["spec"]["containers"][0]


def _discovery_flags(profile, pd):
    """sglang-router 0.3.x's discovery flags (router_args.py: selectors as key=value words) for the leader pods of
    each server role, by the labels the export documents."""
    out = ["--service-discovery"]
    for role in profile.server_roles:
        out += [f"--{role}-selector" if pd else "--selector", f"app.kubernetes.io/instance={NAME}",
                f"app.kubernetes.io/component={role}", "ascend.sglang/leader=true"]
    return out + ["--service-discovery-port", str(profile.roles[profile.server_roles[0]].port),
                  "--service-discovery-namespace", NAMESPACE]


@pytest.mark.parametrize("kind", ["rbg", "lws"])
@pytest.mark.parametrize("pid", DOCUMENTED)
def test_every_rank_runs_the_host_plan(pid, kind):
    profile = load_profile(pid)
    counts = _counts(profile)
    objects, result = exported(pid, kind, counts)
    on_hosts = host_plan(profile, counts)
    services = [svc for host in on_hosts.hosts.values() for svc in host.services]
    rank0 = {(svc.role, svc.instance): svc.host for svc in services if svc.role != "router" and svc.node_rank == 0}
    dns = {leader_dns(kind, NAME, NAMESPACE, role, index): address for (role, index), address in rank0.items()}
    bootstrap_of = {u["url"]: u["bootstrap_port"] for u in on_hosts.router_upstreams.get("prefill", [])}
    router_svc = next(svc for svc in services if svc.role == "router")
    discovers = not router_svc.mini_lb
    checked = 0
    for svc in services:
        leader, worker, replicas, size = pod_templates(objects, kind, NAME, svc.role)
        template = leader if svc.node_rank == 0 else worker
        assert template is not None, f"{svc.name}: no worker template"
        container = _container(template)
        if svc.role == "router":
            address = "10.9.0.1"
            assert replicas == 1
        else:
            address = svc.host
            assert (replicas, size) == (counts[svc.role], svc.nnodes)
            assert container["resources"]["limits"] == {"huawei.com/Ascend910": str(len(svc.devices))}
        values = {"$(POD_IP)": address, f"$({LEADER_VAR[kind]})": rank0.get((svc.role, svc.instance), ""),
                  f"$({INDEX_VAR[kind]})": str(svc.node_rank), **dns}
        args = [_put_back(word, values) for word in container["args"]]
        args = _by_flag(args, svc.argv, ("--disaggregation-bootstrap-port", "--base-gpu-id"))
        args = _router_bootstrap(args, bootstrap_of)
        expected = list(svc.argv)
        if svc.role == "router" and "--host" in expected and expected[expected.index("--host") + 1] == "127.0.0.1":
            # The recorded deviation: the router's Service reaches it on its pod's address.
            expected[expected.index("--host") + 1] = address
        if svc.role == "router" and discovers:
            start, end = svc.boot_workers
            expected[start:end] = _discovery_flags(profile, "--pd-disaggregation" in expected)
        elif discovers and "--port" in expected:
            # One port for every server role: the router's --service-discovery-port.
            expected[expected.index("--port") + 1] = str(profile.roles[profile.server_roles[0]].port)
        assert args == expected, svc.name
        env = {e["name"]: _put_back(e["value"], values) for e in container["env"] if "value" in e}
        assert env == svc.env, svc.name
        sources = [e for e in container["env"] if "valueFrom" in e]
        assert sources[0] == {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}
        assert sources[1:] == [{"name": f"SGLANG_SECRET_{i}", "valueFrom": {"secretKeyRef": {
            "name": "sglang-secrets", "key": flag.lstrip("-")}}} for i, flag in enumerate(svc.secret_flags)]
        # The container runtime's entry command (CANN scripts, secret flags) around the argv, as on a host.
        run = list(svc.container.run)
        at = run.index("--entrypoint")
        assert container["command"] == [run[at + 1]] + run[at + 3:], svc.name
        assert container["image"] == run[at + 2]
        checked += 1
    assert checked == len(services) > 0
    text = "".join(dump(obj, pid).decode() for obj in result.objects)
    assert SECRET not in text
    # No stand-in address of the export's own planning reaches a manifest.
    assert not re.search(r"198\.1[89]\.", text)
