# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The values of a launch that depend on where its services run, in one place.

Pure; no Ansible import.  The planner asks a ``Placement`` for every such value (a rank's own address, the address
its instance's other ranks dial, the address other services dial, the node rank, the bootstrap port, the router's
exporter address) and fills the profile's launch with the answers; everything else of the argv and env is the
same wherever the services run.  ``HOSTS`` is the host rollout: each value is the inventory host's.  The Kubernetes
export (plugin_utils/targets/_k8s_placement.py) answers with the orchestrator's variables and DNS names instead, so that
its manifests are the host plan by construction.
"""

from __future__ import annotations

import dataclasses
import ipaddress

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import RoleSpec
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._topology import HostFacts, Instance


def bind_address(address: str) -> str:
    """The router's --prometheus-host for its host's address: the address itself when it is an IP; for a host name,
    0.0.0.0, which is what sglang-router 0.3.x binds when given a name it does not parse as an IP."""
    try:
        return str(ipaddress.ip_address(address))
    except ValueError:
        return "0.0.0.0"


@dataclasses.dataclass(frozen=True)
class Placement:
    """The host rollout: every service runs on its inventory host and is dialled on that host's address."""

    def server_spec(self, spec: RoleSpec) -> RoleSpec:
        """A server role's launch as this placement runs it (the host rollout: as planned)."""
        return spec

    def router_spec(self, spec: RoleSpec) -> RoleSpec:
        return spec

    def own_address(self, host: HostFacts) -> str:
        """The address a service binds and announces ({host})."""
        return host.address

    def leader_address(self, inst: Instance) -> str:
        """Rank 0 of an instance as the instance's own ranks dial it (--dist-init-addr)."""
        return inst.rank0.address

    def instance_address(self, inst: Instance) -> str:
        """Rank 0 of an instance as other services dial it (the router's upstreams, the MemFabric store)."""
        return inst.rank0.address

    def node_rank(self, rank: int) -> int | str:
        return rank

    def bootstrap_port(self, base: int, index: int) -> int:
        """Instance ``index``'s bootstrap port: the documents' $((8998+$i)), so that instances may share a host."""
        return base + index

    def metrics_host(self, host: HostFacts) -> str:
        return bind_address(host.address)


HOSTS = Placement()
