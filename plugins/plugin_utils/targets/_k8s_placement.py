# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Where services run on Kubernetes: the placement values of a launch as the orchestrator gives them.

Pure; no Ansible import.  The planner fills a profile's launch with these answers instead of inventory hosts'
(plugin_utils/plan/_placement.py), so the manifests carry the host plan's argv and env with only these values changed:
- a rank's own address: ``$(POD_IP)`` (the downward API's status.podIP; the node's address on the host network);
- its instance's rank 0 as the instance's ranks dial it: the leader address the workload injects;
- the node rank: the worker index the workload injects;
- rank 0 of an instance as other services dial it (router upstreams, the MemFabric store): the leader pod's DNS name;
- the bootstrap port: the role's own for every instance (each instance has nodes of its own: exclusive topology);
- ``--base-gpu-id``: 0 (the device plugin gives a pod its NPUs, numbered from 0 inside it);
- ``--port`` of every server role: one port, when the router discovers its workers (sglang-router's service discovery
  dials every pod it finds on one port; each server pod has its node to itself, so the roles need no ports of
  their own there);
- a router bound to loopback on its host binds its pod's address, where its Service reaches it.
Kubernetes expands ``$(NAME)`` in a container's args from the container's environment.
"""

from __future__ import annotations

import dataclasses

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _contract as contract
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._placement import Placement
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import RoleSpec
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._topology import HostFacts, Instance

POD_IP_VAR = "POD_IP"
POD_IP = f"$({POD_IP_VAR})"


@dataclasses.dataclass(frozen=True)
class Workload:
    """How one kind of workload names its pods and what it injects into them."""

    kind: str  # rbg | lws
    name: str  # sglang_k8s_name
    namespace: str

    @property
    def leader_address_var(self) -> str:
        """Injected into every pod of a group: its leader's DNS name."""
        return "RBG_LWP_LEADER_ADDRESS" if self.kind == "rbg" else "LWS_LEADER_ADDRESS"

    @property
    def worker_index_var(self) -> str:
        """Injected: the pod's index in its group (0: the leader)."""
        return "RBG_LWP_WORKER_INDEX" if self.kind == "rbg" else "LWS_WORKER_INDEX"

    def group(self, role: str) -> str:
        """The name of the role's leader-worker workload (its LeaderWorkerSet, or RBG's for the role)."""
        return f"{self.name}-{role}"

    def leader_host(self, role: str, index: int) -> str:
        """The DNS name of instance ``index``'s leader pod, in the form of the leader address the workload injects
        (the pod's hostname in the headless Service the workload creates for the role):
        - LeaderWorkerSet: <lws>-<index>.<lws>.<namespace> (subdomainPolicy Shared: the Service is named after it);
        - RoleBasedGroup: <rbg>-<role>-<index>-0.s-<rbg>-<role>.<namespace> (its role instance's component 0)."""
        group = self.group(role)
        if self.kind == "rbg":
            return f"{group}-{index}-0.s-{group}.{self.namespace}"
        return f"{group}-{index}.{group}.{self.namespace}"


@dataclasses.dataclass(frozen=True)
class KubePlacement(Placement):
    workload: Workload
    # The one port every server role listens on (the router's --service-discovery-port); None: each role's own.
    server_port: int | None = None

    def server_spec(self, spec: RoleSpec) -> RoleSpec:
        if self.server_port is not None and spec.port != self.server_port:
            spec = dataclasses.replace(spec, port=self.server_port)
        if "--base-gpu-id" not in spec.args and not spec.base_gpu_id:
            return spec
        args = {flag: (0 if flag == "--base-gpu-id" else value) for flag, value in spec.args.items()}
        return dataclasses.replace(spec, args=args, base_gpu_id=0)

    def router_spec(self, spec: RoleSpec) -> RoleSpec:
        bind = spec.args.get("--host")
        if isinstance(bind, str) and contract.is_loopback(str.__str__(bind)):
            return dataclasses.replace(spec, args={**spec.args, "--host": "{host}"})
        return spec

    def own_address(self, host: HostFacts) -> str:
        return POD_IP

    def leader_address(self, inst: Instance) -> str:
        return f"$({self.workload.leader_address_var})"

    def instance_address(self, inst: Instance) -> str:
        return self.workload.leader_host(inst.role, inst.index)

    def node_rank(self, rank: int) -> int | str:
        return f"$({self.workload.worker_index_var})"

    def bootstrap_port(self, base: int, index: int) -> int:
        return base

    def metrics_host(self, host: HostFacts) -> str:
        return POD_IP
