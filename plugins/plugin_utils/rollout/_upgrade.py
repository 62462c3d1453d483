# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The order of an upgrade (playbooks/upgrade.yml) and what a failed step puts back.

An upgrade restarts the instances whose files the new release (or image, or interpreter) changed, never all at
once: one canary instance of each role first, then the others in waves of at most ``sglang_restart_batch``
instances. The waves keep the roles in step: the instances are taken one at a time from the role that is least
far along (upgraded / its instances), so after every instance, and within every wave, the upgraded share of each
role is within one instance of every other role's and the P:D ratio of the instances in service stays within one
instance of the plan's (a wave may therefore hold prefill and decode instances; restart.yml's batches never do).

A failed wave (its health gate, or the canary's benchmark gate) puts its own instances and those of every later
wave back on their previous files: the later ones were never restarted and still run them, so nothing of theirs
restarts; only the failed wave's instances restart again, on the previous files. The waves before it stay
upgraded, healthy, and are named.

Private to the collection; pure, no Ansible import. Instances are the rows of ``_instances.instances()``.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping, Sequence

from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._instances import ROLE_ORDER


def _proportional(rest: Sequence[Mapping[str, Any]], first: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The instances in the order that keeps the roles in step: each next one from the role whose share done after
    it, (done + 1) / the role's instances to upgrade, is the smallest (ties: prefill, decode, mixed). first: the
    instances already done (the canaries)."""
    queues: dict[str, list[Mapping[str, Any]]] = {}
    for inst in rest:
        queues.setdefault(str(inst["role"]), []).append(inst)
    before = {role: sum(1 for i in first if i["role"] == role) for role in queues}
    taken = {role: 0 for role in queues}
    out: list[Mapping[str, Any]] = []
    while len(out) < len(rest):
        open_roles = [role for role in queues if taken[role] < len(queues[role])]
        role = min(open_roles, key=lambda r: ((before[r] + taken[r] + 1) / (before[r] + len(queues[r])),
                                              ROLE_ORDER.index(r)))
        out.append(queues[role][taken[role]])
        taken[role] += 1
    return out


def _wave(number: int, count: int, members: list[Mapping[str, Any]], canary: bool) -> dict[str, Any]:
    roles = list(dict.fromkeys(str(i["role"]) for i in members))
    counts = {role: sum(1 for i in members if i["role"] == role) for role in roles}
    total = {str(i["role"]): int(i["role_instances"]) for i in members}
    # Roles this wave takes wholly out of service (a role of one instance: its canary): upgrade.yml warns.
    whole = [role for role in roles if counts[role] == total[role]]
    label = ", ".join(str(i["label"]) for i in members)
    hosts = list(dict.fromkeys(h for i in members for h in i["hosts"]))
    return {"number": number, "count": count, "canary": canary, "role": roles[0] if len(roles) == 1 else "+".join(roles),
            "roles": roles, "instances": [dict(i) for i in members], "labels": [i["label"] for i in members],
            "instance_keys": [i["key"] for i in members], "label": ("canary " if canary else "") + label,
            "services": [svc for i in members for svc in i["services"]],
            "others": [svc for i in members for svc in i["services"][1:]],
            "hosts": hosts,
            "line": f"wave {number}: {'canary ' if canary else ''}{label} on {', '.join(hosts)}",
            "whole_roles": whole, "whole_role": bool(whole)}


def upgrade_waves(selected: Iterable[Mapping[str, Any]], size: int) -> list[dict[str, Any]]:
    """The waves of an upgrade. selected: the instances to upgrade (``instances()`` rows, rollout order); size: the
    instances a wave may take out of service at once (restart batch size, at least 1). Wave 1 holds the canaries,
    the first selected instance of each role; the others follow in the proportional order, ``size`` at a time.
    Each wave carries what a batch of playbooks/tasks/ops_restart_batch.yml carries (instances, services, hosts,
    label, labels, number, count) and ``canary``, ``instance_keys``, ``roles`` and ``whole_roles``."""
    if size < 1:
        raise ValueError(f"an upgrade wave holds at least one instance, got {size}")
    selected = list(selected)
    canaries: list[Mapping[str, Any]] = []
    for inst in selected:
        if inst["role"] not in [c["role"] for c in canaries]:
            canaries.append(inst)
    rest = _proportional([i for i in selected if i not in canaries], canaries)
    groups = ([canaries] if canaries else []) + [rest[i:i + size] for i in range(0, len(rest), size)]
    return [_wave(number, len(groups), members, canary=number == 1) for number, members in enumerate(groups, 1)]


def rollback(waves: Sequence[Mapping[str, Any]], failed: int) -> dict[str, Any]:
    """What a failed wave (its number) leaves: ``restore``, the instances put back on their previous files (the
    failed wave's and every later wave's, keys); ``restart``, those of them that restart again on those files
    (the failed wave's: the later ones never restarted, they run the previous files still); ``upgraded``, the
    earlier waves' instances, which stay on the new files; ``services`` (host -> the names of the restored
    services there) and ``hosts`` (where files are restored)."""
    if not any(int(w["number"]) == int(failed) for w in waves):
        raise ValueError(f"no upgrade wave {failed}; the waves are 1 to {len(waves)}")
    back = [w for w in waves if int(w["number"]) >= int(failed)]
    services: dict[str, list[str]] = {}
    for wave in back:
        for svc in wave["services"]:
            services.setdefault(str(svc["inventory_host"]), []).append(str(svc["name"]))
    return {"restore": [k for w in back for k in w["instance_keys"]],
            "restart": [k for w in back if int(w["number"]) == int(failed) for k in w["instance_keys"]],
            "upgraded": [k for w in waves if int(w["number"]) < int(failed) for k in w["instance_keys"]],
            "services": services, "hosts": list(services)}


def due_keys(instances_rows: Iterable[Mapping[str, Any]], decisions: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Keys of the instances (rollout order) the fleet's restart decision (the ``sglang_rollout`` filter: host ->
    {restart: [service names], ...}) restarts: those the new files change."""
    restart = {(str(host), str(name)) for host, d in (decisions or {}).items()
               for name in (d or {}).get("restart") or []}
    return [str(i["key"]) for i in instances_rows
            if any((str(svc["inventory_host"]), str(svc["name"])) in restart for svc in i["services"])]


def not_ready(instances_rows: Iterable[Mapping[str, Any]], status_by_host: Mapping[str, Any]) -> list[str]:
    """Why the deployment is not where an upgrade may start, one line per rank: a planned rank that does not run,
    or runs other files than its own (``sglang_service_status`` of each host). An upgrade starts from a deployment
    that runs the files it keeps as the previous generation."""
    out = []
    for inst in instances_rows:
        for svc in inst["services"]:
            host = str(svc["inventory_host"])
            got = (((status_by_host or {}).get(host) or {}).get("services") or {}).get(svc["name"])
            if not isinstance(got, Mapping) or got.get("state") != "active":
                state = got.get("state") if isinstance(got, Mapping) else "not reported"
                out.append(f"{svc['name']} on {host} ({inst['key']}) does not run ({state})")
            elif got.get("pending"):
                first = got["pending"][0] if isinstance(got["pending"], list) else {}
                why = first.get("reason") if isinstance(first, Mapping) else None
                out.append(f"{svc['name']} on {host} ({inst['key']}) runs other files than its own "
                           f"({why or 'restart pending'})")
            elif svc.get("health_url") and str(got.get("health")) != "200":
                out.append(f"{svc['name']} on {host} ({inst['key']}) is not healthy ({got.get('health')})")
    return out


# The record of what a host's servers run, in its sglang_generation_dir (deploy.yml and upgrade.yml write it,
# tasks/runtime_record.yml; preflight's call reads it, the action sglang_preflight).
RUNTIME_RECORD = "runtime.json"


def runtime_identity(plan: Any, host: str) -> dict[str, Any]:
    """What the servers of a host run, as far as an upgrade is concerned: the plan's SGLang release, the container
    image (None on the host runtime) and the interpreters of the host's servers (sglang_python; none in a container).
    deploy.yml records it on the host once its servers are healthy and tells an upgrade from it (runtime_change)."""
    host_plan = plan.hosts.get(str(host))
    servers = [svc for svc in (host_plan.services if host_plan else ()) if svc.role != "router"]
    image = plan.container.image if plan.container is not None and plan.runtime == "container" else None
    return {"sglang": str(plan.releases.get("sglang") or ""), "image": image,
            "python": sorted({str(svc.python) for svc in servers if svc.python})}


_WHAT = (("sglang", "SGLang release"), ("image", "container image"), ("python", "server interpreter"))


def record_due(recorded: str | None, planned: Mapping[str, Any]) -> bool:
    """Whether a host's record of what its servers run (recorded: the text of runtime.json as deploy.yml read it at
    the start of the run, None when it had none) must be written: it holds another runtime than the plan's
    (planned: runtime_identity()), or it cannot be read as one."""
    if recorded is None:
        return True
    try:
        return json.loads(recorded) != json.loads(json.dumps(dict(planned)))
    except ValueError:
        return True


def runtime_change(recorded: Any, planned: Mapping[str, Any]) -> list[str]:
    """How the plan's runtime differs from the one recorded on a host ("SGLang release 0.5.9 -> 0.5.10", ...); empty
    when nothing is recorded (a first deploy, or one before the record existed) or nothing differs. ``recorded``: the
    record, or its text as read on the host (text that is not JSON is no record, as record_due reads it)."""
    if isinstance(recorded, str):
        try:
            recorded = json.loads(recorded)
        except ValueError:
            return []
    if not isinstance(recorded, Mapping):
        return []
    out = []
    for key, what in _WHAT:
        before, after = recorded.get(key), planned.get(key)
        if key in recorded and before != after:
            shown = [", ".join(v) if isinstance(v, list) else (v or "none") for v in (before, after)]
            out.append(f"{what} {shown[0]} -> {shown[1]}")
    return out
