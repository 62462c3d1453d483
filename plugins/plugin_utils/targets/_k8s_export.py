# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The Kubernetes export: a profile and the run's variables -> the plan placed on Kubernetes -> its objects.

Pure; no Ansible import.  No inventory names a host here: what the host plan takes from the inventory comes from
variables (instance counts from sglang_k8s_instances, the NIC from sglang_nic, per-role overrides from
sglang_overrides, the secret flags from sglang_k8s_secret_flags or the keys of sglang_secrets).  The planner runs on
a fleet of stand-in hosts (one per rank, addresses from the benchmarking range 198.18.0.0/15, which nothing here
dials) with the Kubernetes placement, so the profile, the release checks and the contract are the host plan's, and
no stand-in address reaches a manifest (tests/unit/plugins/plugin_utils/targets/test_k8s_export.py checks it).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _contract as c
from ansible_collections.ascend.sglang.plugins.plugin_utils.targets import _k8s_manifests as manifests
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _settings
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._container import DEFAULT_SHM_SIZE
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import Collector, PlanError
from ansible_collections.ascend.sglang.plugins.plugin_utils.targets._k8s_placement import KubePlacement, Workload
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._planner import plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import Plan, Service
from ansible_collections.ascend.sglang.plugins.plugin_utils.targets._k8s_discovery import Discovery
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import Profile, load_profile
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._topology import build_inventory, stand_in_fleet

PREFIX = "sglang_k8s_"
# Read by the export itself, in the workloads' meaning: sglang_restart_batch is each server role's maxUnavailable (a
# count, or a percentage of the role's replicas), not the count of the whole fleet the plan resolves it into.
EXPORT_READS = ("sglang_restart_batch",)
# The value the planner's secret checks see for a flag whose value the Secret holds (never written anywhere).
SECRET_STAND_IN = "from-the-kubernetes-secret"


def _own(name: str) -> bool:
    """A value the export checks itself rather than handing it to the planner."""
    return name.startswith(PREFIX) or name in EXPORT_READS


@dataclasses.dataclass
class Export:
    plan: Plan
    roles: tuple[str, ...]
    options: manifests.Options
    objects: list[dict[str, Any]]


def _counts(profile: Profile, raw: Mapping[str, int] | None, errors: Collector) -> dict[str, int]:
    counts = {role: profile.roles[role].documented_instances for role in profile.server_roles}
    counts["router"] = 1
    for role, count in (raw or {}).items():
        if role not in counts:
            c.Where(f"sglang_k8s_instances.{role}").add(
                errors, f"not a role of profile '{profile.id}' ({', '.join(counts)})")
            continue
        counts[role] = count
    return counts


def export(profile_id: str, variables: Mapping[str, Any], nic: Any = None, errors: Collector | None = None,
           profiles_dir: str | None = None) -> Export:
    """The export of ``variables`` (the run's sglang_* values, as plan.yml reads them); raises PlanError naming every
    refused value (the export's own and the planner's) before anything is written."""
    errors = errors if errors is not None else Collector()
    profile = load_profile(profile_id, profiles_dir)
    own = {name: value for name, value in variables.items() if _own(name)}
    checked = _settings.check_one_values(own, errors)
    counts = _counts(profile, checked.get("sglang_k8s_instances"), errors)
    partitions = checked.get("sglang_k8s_rollout_partition") or {}
    for role in partitions:
        if role not in profile.server_roles:
            c.Where(f"sglang_k8s_rollout_partition.{role}").add(
                errors, f"not a server role of profile '{profile.id}' ({', '.join(profile.server_roles)})")
    checked_nic = c.nic(nic, errors, c.Where("sglang_nic")) if nic is not None else None
    if checked_nic is None and nic is None and any(profile.roles[r].nnodes > 1 for r in profile.server_roles):
        c.Where("sglang_nic").add(errors, f"profile '{profile.id}' runs multi-node instances: set the NIC of HCCL/GLOO "
                                          "on the nodes (-e sglang_nic=IFACE; one name for every node)")
    planned_vars = _planned_vars(variables, checked)
    # Without a usable NIC the finding above stops the export; the stand-ins get one so that the planner does not
    # also name each of them.
    groups, hostvars = stand_in_fleet(profile, counts, checked_nic or "eth0")
    workload = Workload(checked["sglang_k8s_kind"], checked["sglang_k8s_name"], checked["sglang_k8s_namespace"])
    inventory = build_inventory(groups, hostvars, planned_vars)
    inventory = dataclasses.replace(inventory, findings=tuple(errors.findings) + inventory.findings)
    placed = _plan(profile, inventory, KubePlacement(workload=workload), checked)
    placed, discovery = _discovery(profile, inventory, workload, placed, checked, errors)
    shm = planned_vars.get("sglang_container_shm_size", DEFAULT_SHM_SIZE)
    options = manifests.Options(
        workload=workload, npu_resource=checked["sglang_k8s_npu_resource"],
        startup_seconds=checked["sglang_k8s_startup_seconds"], shm_size=manifests.quantity(shm),
        router_replicas=counts["router"], secret_name=checked["sglang_k8s_secret_name"],
        model_pvc=checked.get("sglang_k8s_model_pvc"), discovery=discovery,
        # The servers' metrics (sglang_metrics) for a Prometheus Operator in the cluster.
        scrape_interval=(str(placed.monitoring["scrape_interval"])
                         if checked["sglang_k8s_prometheus_operator"] and placed.monitoring.get("metrics") else None),
        # restart.yml's batch (checked by the settings table, its default from there) as maxUnavailable.
        max_unavailable=checked["sglang_restart_batch"], partitions=partitions)
    if options.model_pvc:
        _check_claim_root(placed, errors)
        errors.raise_if_any()
    objects = manifests.manifests(placed, profile.server_roles, options)
    return Export(plan=placed, roles=profile.server_roles, options=options, objects=objects)


def _planned_vars(variables: Mapping[str, Any], checked: Mapping[str, Any]) -> dict[str, Any]:
    """The planner's variables of the export: the run's own but the export's, on the container runtime, with
    stand-ins of the secret flags (their values are the Secret's)."""
    secret_flags = checked.get("sglang_k8s_secret_flags")
    if secret_flags is None and isinstance(variables.get("sglang_secrets"), Mapping):
        # The inventory's secret flags; their values are not read: the Secret holds them.
        secret_flags = {role: list(body) for role, body in variables["sglang_secrets"].items()
                        if isinstance(body, Mapping)}
    planned_vars = {name: value for name, value in variables.items() if not _own(name)}
    planned_vars.pop("sglang_secrets", None)
    planned_vars["sglang_runtime"] = "container"
    if secret_flags:
        planned_vars["sglang_secrets"] = {role: {flag: SECRET_STAND_IN for flag in flags}
                                          for role, flags in secret_flags.items()}
    return planned_vars


def _discovery(profile: Profile, inventory: Any, workload: Workload, placed: Plan, checked: Mapping[str, Any],
               errors: Collector) -> "tuple[Plan, Discovery | None]":
    """The router's discovery of the server pods, when asked and the router can take it: the plan (planned again
    with one server port where the roles' differ) and the Discovery, else None."""
    discovery = None
    router = _router(placed)
    if checked["sglang_k8s_router_discovery"] and router is not None and not router.mini_lb:
        ports = {role: _leader(placed, role).port for role in profile.server_roles}
        port = ports[profile.server_roles[0]]
        if len(set(ports.values())) > 1:
            # The router dials every discovered pod on one port: the roles' ports made one (the first role's).
            placed = _plan(profile, inventory, KubePlacement(workload=workload, server_port=port), checked)
            router = _router(placed)
        if router is not None and router.boot_workers is None:
            c.Where("sglang_k8s_router_discovery").add(
                errors, "the router's worker flags (--prefill, --decode, --worker-urls) are not one run in its launch, "
                        "so discovery cannot replace them: set sglang_k8s_router_discovery=false")
            errors.raise_if_any()
        discovery = Discovery(namespace=workload.namespace, port=port,
                              selectors={role: manifests.leader_selector(workload, role)
                                         for role in profile.server_roles},
                              service_account=f"{workload.name}-router")
    return placed, discovery


def _plan(profile: Profile, inventory: Any, placement: KubePlacement, checked: Mapping[str, Any]) -> Plan:
    """The plan on Kubernetes; raises PlanError with every finding, naming the variables the operator set."""
    try:
        return plan(profile, inventory, placement)
    except PlanError as exc:
        if checked.get("sglang_k8s_secret_flags") is not None:
            # The planner checks the flags as sglang_secrets, which the export made of sglang_k8s_secret_flags:
            # its findings name the variable the operator set.
            exc.findings = [dataclasses.replace(f, variable="sglang_k8s_secret_flags." + f.variable.split(".", 1)[1])
                            if (f.variable or "").startswith("sglang_secrets.") else f for f in exc.findings]
        raise


def _router(placed: Plan) -> Service | None:
    return next((svc for host in placed.hosts.values() for svc in host.services if svc.role == "router"), None)


def _leader(placed: Plan, role: str) -> Service:
    return next(svc for host in placed.hosts.values() for svc in host.services
                if svc.role == role and svc.node_rank == 0)


def _check_claim_root(placed: Plan, errors: Collector) -> None:
    """The claim is mounted at the model paths' common parent: '/' would hide the image's own files."""
    paths = sorted({entry["path"] for host in placed.hosts.values() for svc in host.services
                    for entry in svc.model_paths})
    if paths and manifests.model_root(paths) == "/":
        c.Where("sglang_k8s_model_pvc").add(
            errors, f"the model paths ({', '.join(paths)}) have no common parent directory but '/': put them under "
                    "one directory (the claim is mounted there), or leave sglang_k8s_model_pvc unset (hostPath)")
