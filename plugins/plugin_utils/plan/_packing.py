# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Dense packing: several replicas of a single-node PD-mixed instance on one host (sglang_instances_per_host).

Pure; no Ansible import.  A host that runs k > 1 replicas gives replica s (its slot, 0..k-1):
- the NPUs [s*d, (s+1)*d) of the node, d being the profile's devices per node, through ``--base-gpu-id s*d``
  (SGLang numbers a rank's NPU from it: the argv, npu-smi and preflight name the same devices); on an A3 node a
  slice starts on an even die, so a card's two dies stay in one replica;
- ``--port`` (and a single-node ``--dist-init-addr`` port) + s * PORT_STRIDE: SGLang derives the ports of its
  own processes from them (with DP attention ``--port`` + 233 and the next few), so replicas stay well apart;
- instance numbers after the replicas of the hosts before it in the group, which name its unit, env file,
  launcher, watchdog and container (sglang-mixed-i<n>-r0).
A host with one replica keeps the documented launch (its ``--base-gpu-id``, its port): nothing changes for a
deployment that does not pack.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _contract as contract
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import Collector
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import NODE_DEVICES, Profile, RoleSpec
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._topology import Instance

VARIABLE = "sglang_instances_per_host"
MAX = "max"
# Ports between two replicas of one host.
PORT_STRIDE = 1000
# Overrides that would give every replica of a host the same devices.
DEVICE_FLAGS = ("--base-gpu-id",)
DEVICE_ENV = ("ASCEND_RT_VISIBLE_DEVICES",)


def devices_per_replica(profile: Profile, spec: RoleSpec) -> int:
    return spec.devices_per_node or NODE_DEVICES.get(profile.hardware, 0)


def packable(profile: Profile, role: str) -> bool:
    """A role whose instance is one node that uses part of it."""
    spec = profile.roles.get(role)
    return (profile.deploy_mode == "pd_mixed" and role == "mixed" and spec is not None and spec.nnodes == 1
            and devices_per_replica(profile, spec) < NODE_DEVICES.get(profile.hardware, 0))


def max_replicas(profile: Profile, role: str = "mixed") -> int:
    """Replicas one host of the profile's hardware holds (1 when the role cannot pack)."""
    if not packable(profile, role):
        return 1
    per = devices_per_replica(profile, profile.roles[role])
    return max(1, (NODE_DEVICES[profile.hardware] - per) // _step(profile, per) + 1)


def _step(profile: Profile, per: int) -> int:
    """Devices from one replica's first NPU to the next one's. A3: a replica of an odd number of dies (more than
    one) would split a card, so slices start on even dies; one-die replicas (Qwen3-8B) take every die."""
    return per + per % 2 if profile.hardware == "A3" and per > 1 else per


def first_device(profile: Profile, spec: RoleSpec, slot: int) -> int:
    return slot * _step(profile, devices_per_replica(profile, spec))


def replicas(profile: Profile, role: str, spec: RoleSpec, host: str, value: Any, overrides: Mapping[str, Any],
             errors: Collector) -> int:
    """How many replicas of ``role`` the host runs; each refusal names the host, the group and the variable."""
    if value in (None, 1):
        return 1
    where = contract.Where(VARIABLE, role, host)
    if not packable(profile, role):
        why = (f"{role} instances of {spec.nnodes} nodes" if spec.nnodes > 1
               else f"{role} servers" if profile.deploy_mode != "pd_mixed"
               else f"{role} instances on every NPU of the node")
        where.add(errors, f"only a single-node PD-mixed instance that uses part of its node can run several "
                          f"replicas on a host; profile '{profile.id}' runs {why}: remove it (or set 1)")
        return 1
    most = max_replicas(profile, role)
    count = most if value == MAX else int(value)
    per = devices_per_replica(profile, spec)
    if count > most:
        where.add(errors, f"{count} replicas of {per} NPUs do not fit the {NODE_DEVICES[profile.hardware]} NPUs of "
                          f"an {profile.hardware} node: at most {most} (or set max)")
        return 1
    role_over = overrides.get(role) or {}
    for flag in DEVICE_FLAGS:
        if flag in (role_over.get("args") or {}):
            contract.Where(f"sglang_overrides.{role}.args.{flag}", role, host).add(
                errors, f"gives every replica the same NPUs: with {VARIABLE} {value} the planner sets each "
                        f"replica's {flag}; remove the override")
    for name in DEVICE_ENV:
        if name in (role_over.get("env") or {}):
            contract.Where(f"sglang_overrides.{role}.env.{name}", role, host).add(
                errors, f"gives every replica the same NPUs: with {VARIABLE} {value} each replica uses its own "
                        "slice through --base-gpu-id; remove the override")
    return count


def replica_spec(profile: Profile, spec: RoleSpec, slot: int, count: int, errors: Collector, host: str
                 ) -> RoleSpec:
    """The role's launch for replica ``slot`` of ``count`` on one host (``spec`` itself for a single replica)."""
    if count <= 1:
        return spec
    first = first_device(profile, spec, slot)
    args: dict[str, Any] = {}
    if "--base-gpu-id" not in spec.args:
        # Before --tp-size, as the documents that use part of a node write it.
        for flag, value in spec.args.items():
            if flag == "--tp-size":
                args["--base-gpu-id"] = first
            args[flag] = value
        args.setdefault("--base-gpu-id", first)
    else:
        args = {flag: (first if flag == "--base-gpu-id" else value) for flag, value in spec.args.items()}
    port = spec.port + slot * PORT_STRIDE
    dist_init = spec.dist_init_port + slot * PORT_STRIDE if spec.dist_init_port else spec.dist_init_port
    for what, number in (("--port", port), ("--dist-init-addr port", dist_init)):
        if number is not None and number > 65535:
            contract.Where(VARIABLE, spec.role, host).add(
                errors, f"replica {slot} of {count} would listen on {what} {number}, above 65535 (each replica is "
                        f"{PORT_STRIDE} ports after the previous one): lower the profile's port in sglang_overrides "
                        "or run fewer replicas")
    return dataclasses.replace(spec, args=args, port=port, dist_init_port=dist_init, base_gpu_id=first)


def pack(profile: Profile, role: str, spec: RoleSpec, instances: list[Instance], overrides: Mapping[str, Any],
         errors: Collector) -> list[Instance]:
    """The role's instances with each host's replicas, numbered host after host in the group's order (the same
    instances when no host packs)."""
    out: list[Instance] = []
    for inst in instances:
        count = 1
        if inst.nnodes == 1:
            count = replicas(profile, role, spec, inst.rank0.name, inst.rank0.settings[VARIABLE], overrides,
                             errors)
        else:
            for host in inst.hosts:
                replicas(profile, role, spec, host.name, host.settings[VARIABLE], overrides, errors)
        for slot in range(count):
            out.append(dataclasses.replace(inst, index=len(out), slot=slot, slots=count))
    return out
