# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Inventory groups -> instances: who is rank 0 of what, with typed records.

This replaces the documents' bash array arithmetic (``P_IP[$i]``, ``$((8998+$i))``,
``--node-rank $i``): a group of k x nnodes hosts, in inventory order, is k instances of
nnodes consecutive hosts each.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from ansible_collections.ascend.sglang.plugins.module_utils._errors import Collector
from ansible_collections.ascend.sglang.plugins.module_utils._profile import ROLES, SERVER_ROLES


@dataclasses.dataclass(frozen=True)
class HostFacts:
    """What the planner reads of one inventory host."""

    name: str
    address: str
    nic: str | None
    hardware: str | None = None


@dataclasses.dataclass(frozen=True)
class Inventory:
    groups: dict[str, list[str]]
    hosts: dict[str, HostFacts]
    variables: dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Instance:
    role: str
    index: int
    hosts: tuple[HostFacts, ...]

    @property
    def rank0(self) -> HostFacts:
        return self.hosts[0]

    @property
    def nnodes(self) -> int:
        return len(self.hosts)

    @property
    def key(self) -> str:
        return f"{self.role}-i{self.index}"


def host_facts(name: str, hostvars: Mapping[str, Any]) -> HostFacts:
    """A host's address is ``sglang_host_ip``, else ``ansible_host``, else its inventory name."""
    address = hostvars.get("sglang_host_ip") or hostvars.get("ansible_host") or name
    nic = hostvars.get("sglang_nic")
    hardware = hostvars.get("sglang_hardware")
    return HostFacts(name=name, address=str(address), nic=str(nic) if nic else None,
                     hardware=str(hardware) if hardware else None)


def build_inventory(groups: Mapping[str, Any], hostvars: Mapping[str, Mapping[str, Any]],
                    variables: Mapping[str, Any]) -> Inventory:
    """Keep only the deployment's groups; read each member host once."""
    wanted = {role: list(groups.get(role) or []) for role in ROLES}
    hosts: dict[str, HostFacts] = {}
    for members in wanted.values():
        for name in members:
            if name not in hosts:
                hosts[name] = host_facts(name, hostvars.get(name) or {})
    return Inventory(groups=wanted, hosts=hosts, variables=dict(variables))


def check_membership(inv: Inventory, server_roles: tuple[str, ...], errors: Collector) -> None:
    """Group shape independent of the profile's sizes: empty / foreign / shared hosts."""
    for role in SERVER_ROLES:
        members = inv.groups[role]
        if role in server_roles and not members:
            errors.add(f"the profile deploys {role} servers but the group is empty", group=role)
        if role not in server_roles and members:
            errors.add(f"the profile has no {role} servers; remove hosts {', '.join(members)} from the group "
                       f"or pick a profile with that deploy mode", group=role, host=members[0])
        seen: set[str] = set()
        for name in members:
            if name in seen:
                errors.add("host listed twice in the group", group=role, host=name)
            seen.add(name)
    owner: dict[str, str] = {}
    for role in SERVER_ROLES:
        for name in inv.groups[role]:
            if name in owner and owner[name] != role:
                errors.add(f"host is in both '{owner[name]}' and '{role}'; a host runs one server role",
                           group=role, host=name)
            owner.setdefault(name, role)
    by_address: dict[str, str] = {}
    for name in sorted(owner):
        address = inv.hosts[name].address
        if address in by_address:
            errors.add(f"address {address} is also the address of host '{by_address[address]}'",
                       group=owner[name], host=name, variable="sglang_host_ip")
        by_address.setdefault(address, name)


def split_instances(inv: Inventory, role: str, nnodes: int, errors: Collector) -> list[Instance]:
    members = inv.groups[role]
    if len(members) % nnodes:
        errors.add(f"{len(members)} hosts is not a multiple of the profile's {nnodes} nodes per {role} instance "
                   f"(add {nnodes - len(members) % nnodes} or remove {len(members) % nnodes})",
                   group=role, host=members[-1], variable=f"roles.{role}.nnodes")
        return []
    instances = []
    for index in range(len(members) // nnodes):
        hosts = tuple(inv.hosts[name] for name in members[index * nnodes:(index + 1) * nnodes])
        instances.append(Instance(role=role, index=index, hosts=hosts))
        if nnodes > 1:
            for host in hosts:
                if not host.nic:
                    errors.add(f"host is rank {hosts.index(host)} of {nnodes}-node {role} instance {index}: "
                               "set the NIC carrying its address for HCCL/GLOO", group=role, host=host.name,
                               variable="sglang_nic")
    return instances
