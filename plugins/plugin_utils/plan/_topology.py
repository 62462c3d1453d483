# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Inventory groups -> instances: who is rank 0 of what, with typed records.

This replaces the documents' bash array arithmetic (``P_IP[$i]``, ``$((8998+$i))``,
``--node-rank $i``): a group of k x nnodes hosts, in inventory order, is k instances of
nnodes consecutive hosts each.
"""

from __future__ import annotations

import dataclasses
import difflib
import ipaddress
from typing import Any, Mapping

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _contract as contract
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _settings
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import Collector, Finding
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import ROLES, SERVER_ROLES, Profile


@dataclasses.dataclass(frozen=True)
class HostFacts:
    """What the planner reads of one inventory host."""

    name: str
    address: str
    nic: str | None
    hardware: str | None = None
    # The host's sglang_watchdog_port, from its checked settings (None: the planner's default).
    watchdog_port: int | None = None
    # The host's role settings (the settings table's host rows with a default), checked, defaults filled in.
    settings: Mapping[str, Any] = dataclasses.field(default_factory=dict, compare=False)
    # Which variable gave ``address``: sglang_host_ip, ansible_host or inventory_hostname.
    address_from: str = "sglang_host_ip"

    @property
    def address_key(self) -> str:
        """The address as compared for duplicates and shared ports (canonical IPv4, lower-case name)."""
        return contract.address_key(self.address)


@dataclasses.dataclass(frozen=True)
class Inventory:
    groups: dict[str, list[str]]
    hosts: dict[str, HostFacts]
    variables: dict[str, Any]
    # Contract findings on the host values (raised by the planner with every other problem).
    findings: tuple[Finding, ...] = ()
    # The hosts of MONITORING_GROUP -> their sglang_monitoring_host_dir, checked (playbooks/monitoring.yml).
    monitoring_dirs: Mapping[str, str] = dataclasses.field(default_factory=dict)
    # A role group -> the operator's group whose name resembles it and whose hosts are planned nowhere (prefil):
    # refused naming that group, so the role's own group is not also called empty.
    misnamed: Mapping[str, str] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class Instance:
    role: str
    index: int
    hosts: tuple[HostFacts, ...]
    # Dense packing (plugins/plugin_utils/plan/_packing.py): this replica's place among the `slots` its host runs.
    slot: int = 0
    slots: int = 1

    @property
    def rank0(self) -> HostFacts:
        return self.hosts[0]

    @property
    def nnodes(self) -> int:
        return len(self.hosts)

    @property
    def key(self) -> str:
        return f"{self.role}-i{self.index}"


# The inventory group of the Prometheus hosts playbooks/monitoring.yml writes onto.
MONITORING_GROUP = "sglang_monitoring"


def host_facts(name: str, hostvars: Mapping[str, Any], errors: Collector | None = None,
               group: str | None = None) -> HostFacts:
    """A host's address is ``sglang_host_ip``, else ``ansible_host``, else its inventory name; each value
    is checked by the contract (a set but blank or malformed value is an error, never skipped)."""
    errors = errors if errors is not None else Collector()
    contract.inventory_name(name, errors, contract.Where("inventory_hostname", group, name))
    for var in ("sglang_host_ip", "ansible_host"):
        if var in hostvars and hostvars[var] is not None:
            address = contract.address(hostvars[var], errors, contract.Where(var, group, name))
            break
    else:
        var = "inventory_hostname"
        address = contract.address(name, errors, contract.Where(var, group, name))
    nic = hostvars.get("sglang_nic")
    if nic is not None:
        # A refused NIC is kept as text so that the multi-node check does not also call it missing;
        # its finding stops the plan.
        nic = contract.nic(nic, errors, contract.Where("sglang_nic", group, name)) or repr(nic)
    hardware = hostvars.get("sglang_hardware")
    if hardware is not None:
        hardware = contract.hardware(hardware, errors, contract.Where("sglang_hardware", group, name))
    # Each value checked once, here: a refused one keeps its default and its finding stops the plan.
    settings = _settings.check_host_values(hostvars, errors, group, name)
    # An unusable address is replaced by the inventory name only so that planning can go on and
    # report every other problem; the findings above stop the plan.
    return HostFacts(name=name, address=address or name, nic=nic, hardware=hardware,
                     watchdog_port=settings.get("sglang_watchdog_port"), settings=settings, address_from=var)


def build_inventory(groups: Mapping[str, Any], hostvars: Mapping[str, Mapping[str, Any]],
                    variables: Mapping[str, Any]) -> Inventory:
    """Keep only the deployment's groups; read and check each member host once."""
    errors = Collector()
    wanted: dict[str, list[str]] = {}
    for role in ROLES:
        members = groups.get(role) or []
        if isinstance(members, str) or not all(isinstance(m, str) for m in members):
            errors.add("must be a list of inventory host names", group=role)
            members = []
        wanted[role] = list(members)
    hosts: dict[str, HostFacts] = {}
    for role, members in wanted.items():
        for name in members:
            if name not in hosts:
                hosts[name] = host_facts(name, hostvars.get(name) or {}, errors, role)
    dirs = monitoring_dirs(groups, hostvars, errors)
    monitoring = groups.get(MONITORING_GROUP)
    planned = set(hosts) | (set(monitoring) if isinstance(monitoring, (list, tuple)) else set())
    misnamed = misnamed_groups(groups, planned, errors)
    return Inventory(groups=wanted, hosts=hosts, variables=dict(variables), findings=tuple(errors.findings),
                     monitoring_dirs=dirs, misnamed=misnamed)


# Groups that are never a misspelled role group: Ansible's own and the collection's monitoring group.
OWN_GROUPS = frozenset({"all", "ungrouped", MONITORING_GROUP})
# How close a group's name must be to a role group's to be taken for a misspelling of it: difflib's ratio on lower
# case, and at most two characters longer or shorter.  prefil, decod, mix, Mixed, decoder, routers are; an operator's
# own groups (sglang_monitoring, gpu_nodes, models, prefill_a3, mixed_a2) are not.
MISSPELLING_CUTOFF = 0.75
MISSPELLING_LENGTH = 2


def misnamed_groups(groups: Mapping[str, Any], planned: set[str], errors: Collector) -> dict[str, str]:
    """Refuses each group of the inventory whose name resembles a role group's and whose hosts the plan places
    nowhere (an operator's typo: its hosts would silently not be deployed); returns role -> that group.  The
    operator's other groups are theirs: not read."""
    found: dict[str, str] = {}
    for name in sorted(g for g in groups if isinstance(g, str) and g not in ROLES and g not in OWN_GROUPS):
        close = [role for role in difflib.get_close_matches(name.lower(), ROLES, n=1, cutoff=MISSPELLING_CUTOFF)
                 if abs(len(role) - len(name)) <= MISSPELLING_LENGTH]
        members = groups.get(name)
        if not close or isinstance(members, str) or not isinstance(members, (list, tuple)):
            continue
        stray = [m for m in members if isinstance(m, str) and m not in planned]
        if not stray:
            continue  # an operator's group of hosts the plan places anyway (a parent or child of a role group)
        hosts = f"its host {stray[0]} is" if len(stray) == 1 else f"its hosts {', '.join(stray)} are"
        errors.add(f"is not a group of this collection ({', '.join(ROLES)}): {hosts} planned nowhere; "
                   f"did you mean '{close[0]}'?", group=name)
        found.setdefault(close[0], name)
    return found


def monitoring_dirs(groups: Mapping[str, Any], hostvars: Mapping[str, Mapping[str, Any]], errors: Collector
                    ) -> dict[str, str]:
    """Each Prometheus host's sglang_monitoring_host_dir (the table's default where unset), checked like every
    host value before any host task: absolute, no control character."""
    members = groups.get(MONITORING_GROUP) or []
    if isinstance(members, str) or not all(isinstance(m, str) for m in members):
        errors.add("must be a list of inventory host names", group=MONITORING_GROUP)
        return {}
    row = _settings.BY_NAME["sglang_monitoring_host_dir"]
    out = {}
    for name in members:
        value = (hostvars.get(name) or {}).get(row.name, row.default)
        checked = _settings.check(row, value, errors, contract.Where(row.name, MONITORING_GROUP, name))
        if checked is not None:
            out[name] = checked.rstrip("/") or "/"
    return out


def check_membership(inv: Inventory, server_roles: tuple[str, ...], errors: Collector) -> None:
    """Group shape independent of the profile's sizes: empty / foreign / shared hosts."""
    for role in SERVER_ROLES:
        members = inv.groups[role]
        if role in server_roles and not members and role not in inv.misnamed:
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
        key = inv.hosts[name].address_key
        if key in by_address:
            errors.add(f"address {address} is also the address of host '{by_address[key]}'",
                       group=owner[name], host=name, variable="sglang_host_ip")
        elif contract.is_unspecified(address):
            errors.add(f"{address} is not an address peers or the router can dial: set the host's own address",
                       group=owner[name], host=name, variable="sglang_host_ip")
        by_address.setdefault(key, name)


def _check_one_network(role: str, index: int, hosts: tuple[HostFacts, ...], errors: Collector) -> None:
    """The ranks of one instance dial each other on one network: a rank without sglang_host_ip would bind its
    management address (ansible_host) while its peers bind their data addresses, with one sglang_nic."""
    given = [h.name for h in hosts if h.address_from == "sglang_host_ip"]
    missing = [h.name for h in hosts if h.address_from != "sglang_host_ip"]
    if given and missing:
        errors.add(f"{len(hosts)}-node {role} instance {index}: hosts {', '.join(given)} set sglang_host_ip and "
                   f"{', '.join(missing)} do not (they would bind their ansible_host or inventory name, another "
                   "network than their peers'): set it on every rank of the instance or on none",
                   group=role, host=missing[0], variable="sglang_host_ip")


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
        if nnodes > 1 and contract.is_loopback(hosts[0].address):
            errors.add(f"host is rank 0 of {nnodes}-node {role} instance {index} with the loopback address "
                       f"{hosts[0].address}: the other ranks dial it (--dist-init-addr); set its network address",
                       group=role, host=hosts[0].name, variable="sglang_host_ip")
        if nnodes > 1:
            _check_one_network(role, index, hosts, errors)
            for host in hosts:
                if not host.nic:
                    errors.add(f"host is rank {hosts.index(host)} of {nnodes}-node {role} instance {index}: "
                               "set the NIC carrying its address for HCCL/GLOO", group=role, host=host.name,
                               variable="sglang_nic")
    return instances


# Stand-in hosts' addresses: RFC 2544's benchmarking range, never a real peer's.
STAND_IN_NET = ipaddress.ip_network("198.18.0.0/15")


def stand_in_fleet(profile: Profile, counts: Mapping[str, int], nic: str | None
                   ) -> tuple[dict[str, list[str]], dict[str, dict[str, Any]]]:
    """Groups and host variables of a fleet of stand-in hosts: ``counts[role]`` instances of each server role (one
    host per rank, named ``<role>-i<index>-r<rank>``) and one router.  For plans made without an inventory (the
    Kubernetes export, the import's validation); nothing dials their addresses."""
    groups: dict[str, list[str]] = {}
    hostvars: dict[str, dict[str, Any]] = {}
    addresses = STAND_IN_NET.hosts()
    for role in profile.server_roles:
        nnodes = profile.roles[role].nnodes
        for index in range(counts[role]):
            for rank in range(nnodes):
                name = f"{role}-i{index}-r{rank}"
                groups.setdefault(role, []).append(name)
                hostvars[name] = {"sglang_host_ip": str(next(addresses)), **({"sglang_nic": nic} if nic else {})}
    groups["router"] = ["router-i0"]
    hostvars["router-i0"] = {"sglang_host_ip": str(next(addresses))}
    return groups, hostvars
