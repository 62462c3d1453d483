# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The preflight checks that compare hosts, decided on the controller from every host's observations
(module_utils/npu/_fabric.py, _weights.py): the TLS switch of the NPUs, the model files of the hosts that load the same
model, and the ping plan (which NPUs must reach which) whose pings the hosts then run.

Private to the collection; pure, no Ansible import.

The ping plan grows linearly with the fleet, never with its square. HCCL links fail per NIC (a link down, an IP
missing, a switch port or VLAN), so every NIC that carries traffic must ping and be pinged once, not every pair:
- the ranks of a multi-node instance ping around a ring (rank i pings rank i+1; two ranks: one pair);
- for the KV transfer, decode host k pings prefill host k (round robin over the longer list): every prefill and every
  decode host takes part, max(prefill hosts, decode hosts) pairs;
- device i of a host pings device i of its peer (the devices both use).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Mapping

from ansible_collections.ascend.sglang.plugins.module_utils.checks._checks import level
from ansible_collections.ascend.sglang.plugins.module_utils.checks._fabric_checks import span
from ansible_collections.ascend.sglang.plugins.module_utils.checks._findings import OK, Finding
from ansible_collections.ascend.sglang.plugins.module_utils.checks._preflight_inputs import fabric_devices, weight_dirs
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import HostPlan, Plan


def _instances(plan: Plan) -> list[tuple[str, int, list[str]]]:
    """(role, instance, hosts in node-rank order) of every server instance, in plan order (the plan's
    ``instances``: each lists its inventory hosts by node rank)."""
    return [(inst.role, inst.instance, list(inst.hosts)) for inst in plan.instances if inst.role != "router"]


def _host_side(host_plan: HostPlan) -> dict[str, Any]:
    """A host's plan entry in the form the host-side readers take (module_utils/checks/_preflight_inputs.py reads
    the plan's dict form, as the preflight module on the host gets it): the controller reads the same plan the
    same way."""
    return {"services": [svc.as_dict() for svc in host_plan.services]}


def links(plan: Plan) -> list[tuple[str, str, str]]:
    """(pinging host, pinged host, why) of every pair of hosts whose NPUs must reach each other."""
    pairs: list[tuple[str, str, str]] = []
    seen: set[frozenset[str]] = set()

    def add(source: str, target: str, why: str) -> None:
        key = frozenset((source, target))
        if source != target and key not in seen:
            seen.add(key)
            pairs.append((source, target, why))

    instances = _instances(plan)
    for role, index, hosts in instances:
        why = f"ranks of {role} instance {index}"
        if len(hosts) == 2:
            add(hosts[1], hosts[0], why)
        elif len(hosts) > 2:
            for rank, host in enumerate(hosts):
                add(host, hosts[(rank + 1) % len(hosts)], why)
    prefill = [h for role, _unused, hosts in instances if role == "prefill" for h in hosts]
    decode = [h for role, _unused, hosts in instances if role == "decode" for h in hosts]
    if prefill and decode:
        for k in range(max(len(prefill), len(decode))):
            add(decode[k % len(decode)], prefill[k % len(prefill)], "KV transfer, prefill and decode")
    return pairs


def device_ips(observed: Mapping[str, Any] | None) -> dict[int, str]:
    """Device -> the IP hccn_tool reported on that host (devices without one are left out)."""
    devices = ((observed or {}).get("fabric") or {}).get("devices") or {}
    out = {}
    for key, got in devices.items():
        address = (((got or {}).get("ip") or {}).get("value") or {}).get("address")
        if address:
            out[int(key)] = str(address)
    return out


def ping_plan(plan: Plan, observed: Mapping[str, Mapping[str, Any] | None]) -> dict[str, list[dict]]:
    """Host -> its pings ({device, address, peer, peer_device, why}); observed: host -> its preflight observations.
    A device without an IP on either end is not pinged: the npu_ip check reports it."""
    out: dict[str, list[dict[str, Any]]] = {host: [] for host in plan.hosts}
    if level(plan.preflight, "npu_ping") == "off":
        return out
    used = {host: fabric_devices(_host_side(host_plan)) for host, host_plan in plan.hosts.items()}
    ips = {host: device_ips(got) for host, got in observed.items()}
    for source, target, why in links(plan):
        for device in sorted(set(used.get(source) or {}) & set(used.get(target) or {})):
            address = (ips.get(target) or {}).get(device)
            if address and device in (ips.get(source) or {}):
                out[source].append({"device": device, "address": address, "peer": target, "peer_device": device,
                                    "why": why})
    return out


def tls_findings(plan: Plan, observed: Mapping[str, Mapping[str, Any] | None]) -> list[Finding]:
    """One TLS switch on every planned NPU of every host: devices with TLS on cannot connect to devices with it
    off. The most common value is the reference; each host with other values gets a finding."""
    severity = level(plan.preflight, "npu_tls")
    if severity == "off":
        return []
    switches: dict[str, dict[int, int | None]] = {}
    users: dict[str, dict[int, list[str]]] = {}
    for host, host_plan in plan.hosts.items():
        devices = ((observed.get(host) or {}).get("fabric") or {}).get("devices") or {}
        users[host] = fabric_devices(_host_side(host_plan))
        for device in users[host]:
            got = (devices.get(str(device)) or {}).get("tls")
            if got is not None:
                switches.setdefault(host, {})[device] = ((got.get("value") or {}).get("switch"))
    counts = Counter(v for per_host in switches.values() for v in per_host.values() if v is not None)
    if not counts:
        return []
    reference = counts.most_common(1)[0][0]
    on_reference = sorted(h for h, vals in switches.items() if reference in vals.values())
    findings = []
    for host, per_host in switches.items():
        services = ", ".join(sorted({n for d in per_host for n in users[host].get(d, [])})) or None
        unread = [d for d, v in per_host.items() if v is None]
        other = {d: v for d, v in per_host.items() if v is not None and v != reference}
        if unread:
            findings.append(Finding(host, "npu_tls", "warn", f"{span(unread)}: tls switch not readable",
                                    f"tls switch {reference} as on the other NPUs", "run hccn_tool -i N -tls -g by hand",
                                    services))
        for value in sorted(set(other.values())):
            devices = [d for d, v in other.items() if v == value]
            elsewhere = [h for h in on_reference if h != host]
            findings.append(Finding(
                host, "npu_tls", severity, f"{span(devices)}: tls switch {value}",
                f"tls switch {reference}, as on {_named(elsewhere) or 'the other devices'}",
                f"NPUs with TLS {'on' if value else 'off'} cannot connect to NPUs with it {'off' if value else 'on'}: "
                f"set one switch everywhere (hccn_tool -i N -tls -s enable {reference}) and rerun", services))
        if not other and not unread:
            findings.append(Finding(host, "npu_tls", OK, f"{span(per_host)}: tls switch {reference}",
                                    "one switch everywhere", "", services))
    return findings


def _named(items: list[str], limit: int = 3, sep: str = ", ") -> str:
    """The first ``limit`` items and how many more: a cell names a few hosts of a large fleet, not thousands."""
    return sep.join(items[:limit]) + (f"{sep}and {len(items) - limit} more" if len(items) > limit else "")


def _differences(mine: Mapping[str, Any], ref: Mapping[str, Any]) -> list[str]:
    files, ref_files = mine.get("files") or {}, ref.get("files") or {}
    digests, ref_digests = mine.get("digests") or {}, ref.get("digests") or {}
    out = [f"{rel} missing" for rel in sorted(set(ref_files) - set(files))]
    out += [f"{rel} not in the others" for rel in sorted(set(files) - set(ref_files))]
    out += [f"{rel} {files[rel]} bytes (others {ref_files[rel]})" for rel in sorted(set(files) & set(ref_files))
            if files[rel] != ref_files[rel]]
    out += [f"{rel} sha256 {digests[rel][:12]} (others {ref_digests[rel][:12]})"
            for rel in sorted(set(digests) & set(ref_digests))
            if digests[rel] != ref_digests[rel] and files.get(rel) == ref_files.get(rel)]
    return out


def _signature(got: Mapping[str, Any]) -> tuple:
    return (tuple(sorted((got.get("files") or {}).items())), tuple(sorted((got.get("digests") or {}).items())))


def weights_findings(plan: Plan, observed: Mapping[str, Mapping[str, Any] | None]) -> list[Finding]:
    """The same files, sizes and digests on every host that loads one model directory: the ranks of an instance, and
    the prefill and decode servers of a PD deployment (their KV caches must match). The most common copy is the
    reference; without one (two hosts, two copies) every host is named."""
    severity = level(plan.preflight, "weights")
    if severity == "off":
        return []
    by_path: dict[str, dict[str, Mapping[str, Any]]] = {}
    users: dict[tuple[str, str], list[str]] = {}
    for host, host_plan in plan.hosts.items():
        for path, names in weight_dirs(_host_side(host_plan)).items():
            got = (((observed.get(host) or {}).get("weights") or {}).get(path))
            if got and got.get("exists") and not got.get("error"):
                by_path.setdefault(path, {})[host] = got
                users[(host, path)] = names
    findings = []
    for path, copies in by_path.items():
        if len(copies) < 2:
            continue
        # Each copy's signature once: comparing them pair by pair grew with the square of the hosts.
        sig = {host: _signature(got) for host, got in copies.items()}
        counts = Counter(sig.values())
        ref_sig, ref_count = counts.most_common(1)[0]
        tie = list(counts.values()).count(ref_count) > 1
        for host, got in copies.items():
            services = ", ".join(users.get((host, path), [])) or None
            if sig[host] == ref_sig and not tie:
                findings.append(Finding(host, "weights", OK, f"{path}: as on {len(copies) - 1} other host(s)",
                                        "the same files on every host loading it", "", services))
                continue
            others = sorted(h for h in copies if sig[h] != sig[host])
            # The copy to take: the reference one; on a tie any copy other than this host's own.
            ref_host = next(h for h in copies if sig[h] != sig[host] and (tie or sig[h] == ref_sig))
            diffs = _differences(got, copies[ref_host])
            findings.append(Finding(
                host, "weights", severity, f"{path} differs from {_named(others)}: {_named(diffs, 4, '; ')}",
                f"the same files, sizes and digests on every host loading {path}",
                "a partial copy or another quantisation: copy the model again from one complete copy "
                f"(e.g. rsync -a --checksum --delete {ref_host}:{path}/ {path}/), then rerun", services))
    return findings


def cross_host_findings(plan: Plan, observed: Mapping[str, Mapping[str, Any] | None]) -> list[Finding]:
    """Every finding that compares hosts (the pings are the hosts' own: they ran them)."""
    return tls_findings(plan, observed) + weights_findings(plan, observed)
