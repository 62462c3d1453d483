"""Reading the Kubernetes export's objects back, as the workload controllers read them (tests only).

The names and variables below are the upstream controllers' own, written here from their sources and not taken from
the export, so that a test compares the export with them rather than with itself:
- LeaderWorkerSet (kubernetes-sigs/lws): pods get LWS_LEADER_ADDRESS = <lws>-<group>.<subdomain>.<namespace> (the
  subdomain is the LWS's name with subdomainPolicy Shared) and LWS_WORKER_INDEX (0: the leader).
- RoleBasedGroup (sgl-project/rbg, pkg/discovery/env_builder.go BuildLwsEnv): RBG_LWP_LEADER_ADDRESS =
  $(RBG_ROLE_INSTANCE_NAME)-0.<svc>.<namespace>, the role instance being <rbg>-<role>-<i> and its headless Service
  s-<rbg>-<role>; RBG_LWP_WORKER_INDEX from the pod's component-index label (0: the leader).
"""

from __future__ import annotations

import copy
from typing import Any

LEADER_VAR = {"lws": "LWS_LEADER_ADDRESS", "rbg": "RBG_LWP_LEADER_ADDRESS"}
INDEX_VAR = {"lws": "LWS_WORKER_INDEX", "rbg": "RBG_LWP_WORKER_INDEX"}


def leader_dns(kind: str, name: str, namespace: str, role: str, index: int) -> str:
    if kind == "lws":
        return f"{name}-{role}-{index}.{name}-{role}.{namespace}"
    return f"{name}-{role}-{index}-0.s-{name}-{role}.{namespace}"


def strategic_merge(template: dict[str, Any], patch: dict[str, Any] | None) -> dict[str, Any]:
    """A PodTemplateSpec with a strategic merge patch applied (maps merge, containers merge by name, other lists
    are replaced): what RBG makes of leaderTemplatePatch."""
    out = copy.deepcopy(template)
    if not patch:
        return out

    def merge(base: Any, change: Any, key: str = "") -> Any:
        if isinstance(base, dict) and isinstance(change, dict):
            merged = dict(base)
            for k, v in change.items():
                merged[k] = merge(base.get(k), v, k) if k in base else copy.deepcopy(v)
            return merged
        if key == "containers" and isinstance(base, list):
            by_name = {c["name"]: c for c in base}
            merged_list = [merge(by_name[c["name"]], c) if c["name"] in by_name else c for c in change]
            names = {c["name"] for c in change}
            return merged_list + [c for c in base if c["name"] not in names]
        return copy.deepcopy(change)

    return merge(out, patch)


def pod_templates(objects: list[dict[str, Any]], kind: str, name: str, role: str
                  ) -> tuple[dict[str, Any], dict[str, Any] | None, int, int]:
    """(leader template, worker template or None, replicas, group size) of a role; the router: its only template."""
    if kind == "rbg":
        rbg = next(o for o in objects if o["kind"] == "RoleBasedGroup")
        entry = next(r for r in rbg["spec"]["roles"] if r["name"] == role)
        if "standalonePattern" in entry:
            return entry["standalonePattern"]["template"], None, entry["replicas"], 1
        pattern = entry["leaderWorkerPattern"]
        patch = pattern.get("leaderTemplatePatch")
        leader = strategic_merge(pattern["template"], patch)
        return leader, (pattern["template"] if patch else None), entry["replicas"], pattern["size"]
    if role == "router":
        deployment = next(o for o in objects if o["kind"] == "Deployment")
        return deployment["spec"]["template"], None, deployment["spec"]["replicas"], 1
    lws = next(o for o in objects if o["kind"] == "LeaderWorkerSet" and o["metadata"]["name"] == f"{name}-{role}")
    template = lws["spec"]["leaderWorkerTemplate"]
    leader = template.get("leaderTemplate") or template["workerTemplate"]
    worker = template["workerTemplate"] if "leaderTemplate" in template else None
    return leader, worker, lws["spec"]["replicas"], template["size"]
