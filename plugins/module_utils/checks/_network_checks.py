# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The host checks of the host network the services use: the NIC of HCCL/GLOO (sglang_nic) carrying the host's
address, the planned ports free (or held by the deployment itself), and the endpoints of other hosts a service
dials at start reachable and routed from the planned address.

Private to the collection; pure, no Ansible import. Runs on the managed host (module sglang_preflight, through
``_preflight.check_host``); the NPUs' own NICs are module_utils/checks/_fabric_checks.py's.
"""

from __future__ import annotations

from typing import Any, Mapping

from ansible_collections.ascend.sglang.plugins.module_utils.checks._findings import FAIL, OK, WARN, Context, Findings
from ansible_collections.ascend.sglang.plugins.module_utils.checks._preflight_inputs import (
    socket_nics, owner_is_ours, peer_targets, services, unit_state,
)


def check_nics(out: Findings, host_plan: Mapping[str, Any], observed: Mapping[str, Any]) -> None:
    nics = observed.get("nics")
    for svc in services(host_plan):
        pairs = socket_nics(svc)
        if not pairs:
            continue
        name = str(svc.get("name"))
        address = str(svc.get("host") or "")
        # A name counts as carried when one of the addresses it resolves to on this host is.
        candidates = [address] + list((observed.get("resolved") or {}).get(address) or [])
        for nic in sorted({n for _unused, n in pairs}):
            variables = "/".join(v for v, n in pairs if n == nic)
            if nics is None:
                out.add("nic", WARN, "interfaces not readable", f"{nic} carrying {address}",
                        "check `ip -br addr` by hand", service=name)
            elif nic not in nics:
                out.add("nic", FAIL, f"no interface {nic} (have {', '.join(sorted(nics)) or 'none'})",
                        f"{nic} ({variables}) carrying {address}",
                        f"set sglang_nic of this host to the NIC that carries {address} (`ip -br addr`)", service=name)
            elif not set(candidates) & set(nics.get(nic) or []):
                carried = ", ".join(nics.get(nic) or []) or "no address"
                owner = [n for n, addrs in nics.items() if address in (addrs or [])]
                hint = f" ({address} is on {owner[0]})" if owner else f" ({address} is on no interface of this host)"
                out.add("nic", FAIL, f"{nic} has {carried}{hint}", f"{nic} ({variables}) carrying {address}",
                        "set sglang_nic to the NIC carrying sglang_host_ip, or sglang_host_ip to the address of "
                        f"{nic}", service=name)
            else:
                carried = sorted(set(candidates) & set(nics.get(nic) or []))
                out.add("nic", OK, f"{nic} has {', '.join(carried)}", f"{nic} carrying {address}", service=name)


def _conflicts(bind: str, listen_addr: str) -> bool:
    wildcard = ("0.0.0.0", "::", "*", "")
    return bind in wildcard or listen_addr in wildcard or listen_addr == bind or \
        (listen_addr.startswith("::ffff:") and listen_addr[7:] == bind)


def check_ports(out: Findings, host_plan: Mapping[str, Any], observed: Mapping[str, Any], ctx: Context) -> None:
    listeners = observed.get("listeners")
    names = {str(s.get("name")) for s in services(host_plan)}
    for svc in services(host_plan):
        name = str(svc.get("name"))
        state = unit_state(observed, name)
        bind = str(svc.get("host") or "")
        for what, port in (svc.get("listens") or {}).items():
            expected = f"TCP {port} free for {what} on {bind or '*'}"
            if listeners is None:
                out.add("port", WARN, "listening sockets not readable", expected, "check `ss -ltnp` by hand", service=name)
                continue
            holders = [entry for entry in listeners if int(entry.get("port", -1)) == int(port)
                       and _conflicts(bind, str(entry.get("address") or ""))]
            if not holders:
                if ctx.mode == "doctor" and state == "running" and what == "http":
                    out.add("port", WARN, f"nothing listens on {port} yet", f"{name} listening on {port}",
                            f"the service is running but not serving yet (loading?): `journalctl -u {name}`",
                            service=name)
                else:
                    out.add("port", OK, f"{port} free", expected, service=name)
                continue
            pids = sorted({int(p) for entry in holders for p in entry.get("pids") or []})
            ours = [p for p in pids if owner_is_ours(p, observed, names)]
            if pids and len(ours) == len(pids):
                out.add("port", OK, f"{port} held by this deployment ({name})", expected, service=name)
            elif not pids and state == "running":
                out.add("port", OK, f"{port} in use while {name} runs (holder not visible)", expected, service=name)
            else:
                who = ", ".join(f"pid {p}" + (f" ({(observed.get('owners') or {}).get(str(p))})"
                                              if (observed.get("owners") or {}).get(str(p)) else "") for p in pids)
                addr = ", ".join(sorted({str(e.get("address")) for e in holders}))
                out.add("port", FAIL, f"{port} already in use on {addr}" + (f" by {who}" if who else ""), expected,
                        f"stop what holds it (`ss -ltnp 'sport = :{port}'`) or "
                        + ("set sglang_router_metrics_port" if what == "metrics" else
                           "change the port in the profile / sglang_overrides"), service=name)


def check_peers(out: Findings, host_plan: Mapping[str, Any], observed: Mapping[str, Any], ctx: Context) -> None:
    probes = observed.get("probes") or {}
    routes = observed.get("routes") or {}
    for svc in services(host_plan):
        name = str(svc.get("name"))
        own = str(svc.get("host") or "")
        for address, port, what in peer_targets(svc):
            key = f"{address}:{port}"
            probe = probes.get(key) or {}
            result = probe.get("result") or "not probed"
            expected = f"{key} reachable ({what})"
            route = routes.get(address) or {}
            if route.get("error"):
                out.add("peer", FAIL, f"no route to {address}: {route['error']}", expected,
                        f"add a route to {address} on the data-plane network, or fix sglang_host_ip of rank 0",
                        service=name)
                continue
            source = route.get("source")
            if source and own and source != own and int(svc.get("nnodes") or 1) > 1:
                out.add("peer_route", WARN, f"traffic to {address} leaves from {source}", f"from {own} (sglang_host_ip)",
                        "the kernel routes rank-0 traffic over another interface than the data-plane address: "
                        "check the routing table / sglang_nic", service=name)
            if result == "open":
                out.add("peer", OK, f"{key} accepts connections", expected, service=name)
            elif result == "refused":
                if ctx.mode == "doctor":
                    out.add("peer", WARN, f"{key} reachable but refuses connections", f"{key} listening ({what})",
                            f"rank 0 is not listening: check its service on {address} (`journalctl -u` there)",
                            service=name)
                else:
                    # Before start nothing listens; a refusal (TCP RST) proves the host answers on that port path.
                    out.add("peer", OK, f"{key} reachable (refused: rank 0 not started yet)", expected, service=name)
            elif result == "timeout":
                out.add("peer", FAIL, f"{key}: no answer within the probe timeout (dropped)", expected,
                        f"open TCP {port} from {own or 'this host'} to {address} in the firewall / security group, "
                        "and check that the address is right", service=name)
            else:
                out.add("peer", FAIL, f"{key}: {result} {probe.get('detail') or ''}".strip(), expected,
                        f"check that {address} is up and routable from this host", service=name)
