# Copyright: ascend.sglang contributors
# Apache License 2.0
"""A plan placed on Kubernetes (plugin_utils/targets/_k8s_placement.py) -> the objects that run it.

Pure; no Ansible import.  Every container runs its service's argv and env from the plan as they are, started by the
container runtime's entry script (plugin_utils/plan/_container.py: it sources the profile's CANN scripts in the image,
appends the secret flags from SGLANG_SECRET_<i> and execs the argv); the orchestrator only provides the placement
values the argv refers to.  One template serves every instance of a role, so the instances' launches must be
equal: they are, since nothing in them but placement values differs between instances (checked here).

- ``rbg``: one RoleBasedGroup (workloads.x-k8s.io/v1alpha2): a leader-worker role per server role (size = nnodes,
  a failed pod recreates its whole instance) and a standalone router role that starts after them.
- ``lws``: a LeaderWorkerSet per server role (leaderworkerset.x-k8s.io/v1, RecreateGroupOnPodRestart) and the router
  as a Deployment.
Both: a ClusterIP Service for the router, and no Service of the export's own for a server role: the workload makes
one headless Service per role (LeaderWorkerSet: named after it, subdomainPolicy Shared; RoleBasedGroup:
s-<rbg>-<role>), which gives the pods the DNS names the ranks, the MemFabric store and a --mini-lb router dial;
the discovering router and the PodMonitors find the pods by label.  Server pods on the host network (the Ascend
RDMA path) and each alone on its node (ports of the host network cannot be shared); NPUs as an extended resource;
the driver files as read-only hostPaths; /dev/shm a memory emptyDir; secrets from a Secret.
A router with a worker API finds the leaders by label (plugin_utils/targets/_k8s_discovery.py), under a
ServiceAccount of its own; a --mini-lb router keeps the planned list.  With metrics on, a PodMonitor per role and the
deployment's rules as a PrometheusRule (plugin_utils/targets/_k8s_monitoring.py).
"""

from __future__ import annotations

import dataclasses
import math
import posixpath
import re
from typing import Any, Mapping

from ansible_collections.ascend.sglang.plugins.plugin_utils.targets import _k8s_discovery, _k8s_monitoring
from ansible_collections.ascend.sglang.plugins.plugin_utils.targets._k8s_discovery import Discovery
from ansible_collections.ascend.sglang.plugins.plugin_utils.targets._k8s_placement import POD_IP_VAR, Workload
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import Plan, Service
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._serialize import yaml_text

CONTAINER = "sglang"
LABEL_LEADER = "ascend.sglang/leader"
LABEL_SERVER = "ascend.sglang/npu-server"
LABEL_PROFILE = "ascend.sglang/profile"
# Named ports (IANA_SVC_NAME: at most 15 characters) of a service's planned listeners; the watchdog does not run
# on Kubernetes (the workload recreates a failed instance).
PORT_NAMES = {"http": "http", "bootstrap": "bootstrap", "dist_init": "dist-init", "memfabric_store": "mf-store",
              "metrics": "metrics"}
PROBE_PERIOD = 10


@dataclasses.dataclass(frozen=True)
class Options:
    """The export's checked settings (plugin_utils/targets/_k8s_export.py reads them)."""

    workload: Workload
    npu_resource: str
    startup_seconds: int
    shm_size: str  # a Kubernetes quantity (16Gi)
    router_replicas: int
    secret_name: str
    model_pvc: str | None = None
    # The router discovers its workers (None: the planned list, as a --mini-lb router keeps it).
    discovery: Discovery | None = None
    # A PodMonitor per role and a PrometheusRule, scraped at this interval (None: no monitoring objects).
    scrape_interval: str | None = None
    # A server role's rolling update: instances out of service at once (sglang_restart_batch: a count or "N%").
    max_unavailable: int | str = 1
    # role -> its rollout partition (sglang_k8s_rollout_partition); a role not named: none.
    partitions: Mapping[str, int] = dataclasses.field(default_factory=dict)


def quantity(size: str) -> str:
    """The container runtime's --shm-size (16g, 512m) as a Kubernetes quantity (16Gi, 512Mi); bytes stay bytes."""
    number, unit = size[:-1], size[-1]
    return number + {"b": "", "k": "Ki", "m": "Mi", "g": "Gi"}[unit]


class TemplateMismatch(ValueError):
    """Two instances (or ranks) of a role would need different templates: a placement value the planner did not
    take from the placement (a bug, never a user error)."""


def _labels(opts: Options, role: str, plan: Plan) -> dict[str, str]:
    out = {"app.kubernetes.io/name": "sglang", "app.kubernetes.io/instance": opts.workload.name,
           "app.kubernetes.io/component": role, LABEL_PROFILE: plan.profile[:63].rstrip("_.-")}
    if role != "router":
        out[LABEL_SERVER] = "true"
    return out


def _command(svc: Service) -> list[str]:
    """The container runtime's entry command around the argv: the interpreter of its --entrypoint, then ``-c``, the
    entry script and its arguments (CANN scripts, secret flags), exactly as a host's container runs them."""
    run = list(svc.container.run) if svc.container else []
    if "--entrypoint" not in run:
        raise TemplateMismatch(f"{svc.name}: the plan has no container command (the export plans the container "
                               "runtime)")
    at = run.index("--entrypoint")
    return [run[at + 1]] + run[at + 3:]


def _env(svc: Service, opts: Options) -> list[dict[str, Any]]:
    env: list[dict[str, Any]] = [{"name": POD_IP_VAR, "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}]
    env += [{"name": name, "value": value} for name, value in svc.env.items()]
    # The secret flags' values by name, in the entry script's order: never a value in the manifest.
    env += [{"name": f"SGLANG_SECRET_{i}",
             "valueFrom": {"secretKeyRef": {"name": opts.secret_name, "key": flag.lstrip("-")}}}
            for i, flag in enumerate(svc.secret_flags)]
    return env


def _probe(port: int, path: str, period: int, failures: int, timeout: int) -> dict[str, Any]:
    return {"httpGet": {"path": path, "port": port}, "periodSeconds": period, "timeoutSeconds": timeout,
            "failureThreshold": failures}


def _probes(svc: Service, opts: Options) -> dict[str, Any]:
    """Readiness on /health; liveness after a start-up allowance (a server loads its weights for minutes)."""
    if not svc.health_url:
        return {}
    return {
        "startupProbe": _probe(svc.port, "/health", PROBE_PERIOD, math.ceil(opts.startup_seconds / PROBE_PERIOD), 5),
        "readinessProbe": _probe(svc.port, "/health", PROBE_PERIOD, 3, 5),
        "livenessProbe": _probe(svc.port, "/health", 30, 3, 10),
    }


def _ports(svc: Service) -> list[dict[str, Any]]:
    return [{"name": PORT_NAMES[what], "containerPort": port, "protocol": "TCP"}
            for what, port in svc.listens.items() if what in PORT_NAMES]


def model_root(paths: list[str]) -> str:
    """Where a model claim is mounted: the model paths' common parent."""
    return posixpath.commonpath(paths)


def _volumes(svc: Service, opts: Options) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The container runtime's read-only mounts (driver files, /etc/hccn.conf, the model paths) as hostPaths, or
    the model paths from the claim; /dev/shm as a memory emptyDir."""
    volumes: list[dict[str, Any]] = []
    mounts: list[dict[str, Any]] = []
    model_paths = [entry["path"] for entry in svc.model_paths]
    for index, mount in enumerate(svc.container.mounts if svc.container else ()):
        source, target = mount.split(":")[:2]
        if opts.model_pvc and source in model_paths:
            continue
        name = f"host-{index}"
        volumes.append({"name": name, "hostPath": {"path": source}})
        mounts.append({"name": name, "mountPath": target, "readOnly": True})
    if opts.model_pvc and model_paths:
        root = model_root(model_paths)
        volumes.append({"name": "model", "persistentVolumeClaim": {"claimName": opts.model_pvc, "readOnly": True}})
        mounts.append({"name": "model", "mountPath": root, "readOnly": True})
    if svc.role != "router":
        volumes.append({"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": opts.shm_size}})
        mounts.append({"name": "dshm", "mountPath": "/dev/shm"})
    return volumes, mounts


def _args(svc: Service, opts: Options) -> list[str]:
    """The service's argv; a discovering router's with its worker flags replaced by the discovery flags."""
    if svc.role == "router" and opts.discovery is not None:
        if svc.boot_workers is None:
            raise TemplateMismatch(f"{svc.name}: no worker flags to replace by discovery (a --mini-lb router, or "
                                   "its worker flags apart from each other)")
        return _k8s_discovery.router_args(list(svc.argv), svc.boot_workers, opts.discovery)
    return list(svc.argv)


def _container(svc: Service, image: str, opts: Options, mounts: list[dict[str, Any]]) -> dict[str, Any]:
    container: dict[str, Any] = {"name": CONTAINER, "image": image, "command": _command(svc), "args": _args(svc, opts),
                                 "env": _env(svc, opts)}
    ports = _ports(svc)
    if ports:
        container["ports"] = ports
    if svc.role != "router":
        count = str(len(svc.devices))
        container["resources"] = {"limits": {opts.npu_resource: count}, "requests": {opts.npu_resource: count}}
    container.update(_probes(svc, opts))
    if mounts:
        container["volumeMounts"] = mounts
    return container


def pod_template(svc: Service, plan: Plan, opts: Options, labels: Mapping[str, str]) -> dict[str, Any]:
    """The PodTemplateSpec of one service (a rank, or the router)."""
    volumes, mounts = _volumes(svc, opts)
    image = plan.container.image if plan.container else ""
    spec: dict[str, Any] = {"containers": [_container(svc, image, opts, mounts)]}
    pod_labels = dict(labels)
    metadata: dict[str, Any] = {"labels": pod_labels}
    if opts.discovery is not None and svc.role == "prefill" and svc.bootstrap_port is not None:
        # Where the discovering router reads a prefill worker's bootstrap port (every instance has the role's).
        metadata["annotations"] = {_k8s_discovery.BOOTSTRAP_PORT_ANNOTATION: str(svc.bootstrap_port)}
    if opts.discovery is not None and svc.role == "router":
        spec["serviceAccountName"] = opts.discovery.service_account
    if svc.role != "router":
        if svc.node_rank == 0:
            pod_labels[LABEL_LEADER] = "true"
        # The host network: HCCL, the KV transfer and the bootstrap server bind the node's own address and NICs.
        # Cluster DNS (the leader and store names) needs ClusterFirstWithHostNet on the host network.
        spec.update(hostNetwork=True, dnsPolicy="ClusterFirstWithHostNet")
        # Each server pod alone on its node: two would bind the same host ports (and a rank uses the node's NPUs).
        # Not the workloads' exclusive-topology annotation: it places a whole group in ONE topology domain, which
        # on kubernetes.io/hostname would put every rank of a multi-node instance on the same node.
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
            "labelSelector": {"matchLabels": {"app.kubernetes.io/instance": opts.workload.name, LABEL_SERVER: "true"}},
            "topologyKey": "kubernetes.io/hostname"}]}}
    if volumes:
        spec["volumes"] = volumes
    return {"metadata": metadata, "spec": spec}


def _by_role(plan: Plan) -> dict[str, dict[int, dict[int, Service]]]:
    """role -> instance -> node rank -> service."""
    out: dict[str, dict[int, dict[int, Service]]] = {}
    for host_plan in plan.hosts.values():
        for svc in host_plan.services:
            out.setdefault(svc.role, {}).setdefault(svc.instance, {})[svc.node_rank] = svc
    return out


def _launch(svc: Service) -> tuple[Any, ...]:
    """What one template fixes for every pod it makes (the listeners may differ: only the first prefill instance
    serves the MemFabric store, and its port is declared on every leader of the role)."""
    return (svc.argv, svc.env, svc.secret_flags, svc.devices, svc.port, _command(svc),
            svc.container.mounts if svc.container else None)


def role_services(by_role: Mapping[str, Mapping[int, Mapping[int, Service]]], role: str
                  ) -> tuple[Service, Service | None, int, int]:
    """(rank 0 of instance 0, rank 1 of instance 0 or None, instances, nnodes) of ``_by_role``'s role;
    TemplateMismatch when another instance or rank would need a template of its own."""
    instances = by_role.get(role) or {}
    first = instances[0]
    leader, worker = first[0], first.get(1)
    for index, ranks in sorted(instances.items()):
        for rank, svc in sorted(ranks.items()):
            model = leader if rank == 0 else worker
            if model is None or _launch(svc) != _launch(model):
                raise TemplateMismatch(f"{svc.name} does not run the launch of {model.name if model else 'rank 1'}: "
                                       "one template cannot serve both")
    if worker is not None and (worker.argv, worker.env) != (leader.argv, leader.env):
        raise TemplateMismatch(f"{worker.name} does not run the launch of {leader.name}")
    return leader, worker, len(instances), leader.nnodes


def _rolling(opts: Options, role: str) -> dict[str, Any]:
    """A server role's rolling update, as restart.yml restarts: sglang_restart_batch instances out of service at
    once, and no instance above the role's count (a surge needs idle NPU nodes the deployment does not have); with a
    partition, the instances below it keep their version (upgrade.yml's canary, by the workload)."""
    out: dict[str, Any] = {"maxUnavailable": opts.max_unavailable, "maxSurge": 0}
    if role in opts.partitions:
        out["partition"] = opts.partitions[role]
    return out


def _metadata(name: str, opts: Options, labels: Mapping[str, str]) -> dict[str, Any]:
    return {"name": name, "namespace": opts.workload.namespace, "labels": dict(labels)}


def _leader_patch(leader: dict[str, Any]) -> dict[str, Any]:
    """What the leader's template adds to the workers' (a strategic merge patch: containers merge by name)."""
    container = leader["spec"]["containers"][0]
    added = {key: container[key] for key in ("ports", "startupProbe", "readinessProbe", "livenessProbe")
             if key in container}
    return {"metadata": {"labels": {LABEL_LEADER: "true"}}, "spec": {"containers": [{"name": CONTAINER, **added}]}}


def _services(plan: Plan, opts: Options, router: Service | None) -> list[dict[str, Any]]:
    """The router's Service (the server roles' headless Services are the workload's own)."""
    out = []
    if router is not None:
        labels = _labels(opts, "router", plan)
        ports = [{"name": p["name"], "port": p["containerPort"], "targetPort": p["name"], "protocol": "TCP"}
                 for p in _ports(router)]
        out.append({"apiVersion": "v1", "kind": "Service",
                    "metadata": _metadata(f"{opts.workload.name}-router", opts, labels),
                    "spec": {"type": "ClusterIP", "selector": _selector(opts, "router"), "ports": ports}})
    return out


def _selector(opts: Options, role: str) -> dict[str, str]:
    return {"app.kubernetes.io/instance": opts.workload.name, "app.kubernetes.io/component": role}


def leader_selector(workload: Workload, role: str) -> dict[str, str]:
    """The labels of a server role's leader pods (rank 0 of each instance): the pods that serve HTTP."""
    return {"app.kubernetes.io/instance": workload.name, "app.kubernetes.io/component": role, LABEL_LEADER: "true"}


def manifests(plan: Plan, roles: tuple[str, ...], opts: Options) -> list[dict[str, Any]]:
    """Every object of the export, workloads first."""
    kind = opts.workload.kind
    by_role = _by_role(plan)
    router = ((by_role.get("router") or {}).get(0) or {}).get(0)
    objects: list[dict[str, Any]] = []
    rbg_roles: list[dict[str, Any]] = []
    leaders: dict[str, Service] = {}
    for role in roles:
        leader_svc, worker_svc, count, nnodes = role_services(by_role, role)
        leaders[role] = leader_svc
        labels = _labels(opts, role, plan)
        leader = pod_template(leader_svc, plan, opts, labels)
        worker = pod_template(worker_svc, plan, opts, labels) if worker_svc else None
        if kind == "rbg":
            rbg_roles.append(_rbg_role(opts, role, labels, leader, worker, count, nnodes))
        else:
            objects.append(_leader_worker_set(opts, role, labels, leader, worker, count, nnodes))
    if router is not None:
        labels = _labels(opts, "router", plan)
        template = pod_template(router, plan, opts, labels)
        if kind == "rbg":
            rbg_roles.append({"name": "router", "replicas": opts.router_replicas, "labels": labels,
                              "dependencies": list(roles), "standalonePattern": {"template": template}})
        else:
            objects.append({
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": _metadata(f"{opts.workload.name}-router", opts, labels),
                "spec": {"replicas": opts.router_replicas, "selector": {"matchLabels": _selector(opts, "router")},
                         "template": template}})
    if kind == "rbg":
        objects.insert(0, {
            "apiVersion": "workloads.x-k8s.io/v1alpha2", "kind": "RoleBasedGroup",
            "metadata": _metadata(opts.workload.name, opts, {k: v for k, v in _labels(opts, "router", plan).items()
                                                             if k != "app.kubernetes.io/component"}),
            "spec": {"roles": rbg_roles}})
    objects += _services(plan, opts, router)
    if router is not None and opts.discovery is not None:
        objects += _k8s_discovery.rbac(opts.discovery, {"namespace": opts.workload.namespace,
                                                        "labels": _labels(opts, "router", plan)})
    if opts.scrape_interval is not None:
        objects += _monitors(plan, opts, leaders, router)
    return objects


def _rbg_role(opts: Options, role: str, labels: dict[str, str], leader: dict[str, Any], worker: dict[str, Any] | None,
              count: int, nnodes: int) -> dict[str, Any]:
    """A server role of the RoleBasedGroup: its instances as leader-worker groups."""
    pattern: dict[str, Any] = {
        "size": nnodes,
        # A pod that fails or restarts recreates its whole instance: the other ranks cannot rejoin alone.
        "restartPolicyConfig": {"type": "RecreateRoleInstanceOnPodRestart"},
        "template": worker or leader,
    }
    if worker is not None:
        pattern["leaderTemplatePatch"] = _leader_patch(leader)
    return {"name": role, "replicas": count, "labels": labels,
            "rolloutStrategy": {"type": "RollingUpdate", "rollingUpdate": _rolling(opts, role)},
            "leaderWorkerPattern": pattern}


def _leader_worker_set(opts: Options, role: str, labels: dict[str, str], leader: dict[str, Any],
                       worker: dict[str, Any] | None, count: int, nnodes: int) -> dict[str, Any]:
    """A server role as a LeaderWorkerSet: one group per instance."""
    template: dict[str, Any] = {
        "size": nnodes,
        "restartPolicy": "RecreateGroupOnPodRestart",
        "workerTemplate": worker or leader,
    }
    if worker is not None:
        template["leaderTemplate"] = leader
    return {
        "apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
        "metadata": _metadata(opts.workload.group(role), opts, labels),
        "spec": {"replicas": count,
                 "rolloutStrategy": {"type": "RollingUpdate", "rollingUpdateConfiguration": _rolling(opts, role)},
                 # Not LeaderReady: the leader (rank 0) is ready only once every rank has joined it.
                 "startupPolicy": "LeaderCreated",
                 "networkConfig": {"subdomainPolicy": "Shared"},
                 "leaderWorkerTemplate": template}}


def _monitors(plan: Plan, opts: Options, leaders: Mapping[str, Service], router: Service | None
              ) -> list[dict[str, Any]]:
    """A PodMonitor of every role that serves metrics (servers: /metrics on their port, every rank; a Rust router:
    its exporter) and the deployment's PrometheusRule."""
    interval = str(opts.scrape_interval)
    out = [_k8s_monitoring.pod_monitor(plan, opts.workload, role, svc, PORT_NAMES["http"], interval,
                                       _labels(opts, role, plan), _selector(opts, role))
           for role, svc in leaders.items()]
    if router is not None and "metrics" in router.listens:
        out.append(_k8s_monitoring.pod_monitor(plan, opts.workload, "router", router, PORT_NAMES["metrics"], interval,
                                               _labels(opts, "router", plan), _selector(opts, "router")))
    group_labels = {k: v for k, v in _labels(opts, "router", plan).items() if k != "app.kubernetes.io/component"}
    return out + [_k8s_monitoring.prometheus_rule(plan, opts.workload, group_labels)]


def file_name(obj: Mapping[str, Any]) -> str:
    """<kind>-<name>.yaml, lower-case: one object per file."""
    return re.sub(r"[^a-z0-9.-]", "-", f"{obj['kind'].lower()}-{obj['metadata']['name']}") + ".yaml"


HEADER = ("# Generated by ascend.sglang (playbooks/kubernetes.yml) from profile {profile}: the host plan's argv and env,\n"
          "# with the placement values from the workload (README: Kubernetes). Regenerate instead of editing.\n")


def dump(obj: Mapping[str, Any], profile: str) -> bytes:
    """One object's file: the header, then the object as a YAML document (every string read back as given, by
    kubectl's YAML 1.1 reader too: _serialize.yaml_text)."""
    return (HEADER.format(profile=profile) + "---\n" + yaml_text(obj)).encode("utf-8")
