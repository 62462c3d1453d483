# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The router finding its workers on Kubernetes: sglang-router's service discovery and what it needs.

Pure; no Ansible import.  sglang-router 0.3.x (sgl-router/src/service_discovery.rs) watches the pods of one namespace
(a kube-rs watcher: list, then watch, of every pod there; the selectors are applied by the router, not the API
server) and adds a pod as a worker once it is Running and Ready, at ``http://<pod IP>:<--service-discovery-port>``:
a prefill pod (``--prefill-selector``) with the bootstrap port its ``sglang.ai/bootstrap-port`` annotation gives (the
name is fixed in 0.3.x: router_args.py sets it, no flag changes it), a decode pod (``--decode-selector``), or, outside
PD mode, a regular worker (``--selector``).  A pod is removed once its deletion starts (its deletionTimestamp set).
It needs a ServiceAccount allowed to list and watch pods in its namespace, and nothing more.

The selectors are the labels the export sets on a role's pods, with the leader label: the other ranks of a multi-node
instance serve no HTTP and must never become workers.  The worker flags of the planned launch (``Service.
boot_workers``: --prefill/--decode/--worker-urls) are replaced by the discovery flags, the rest of the argv is kept.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

# sgl-router's ServiceDiscoveryConfig default, which 0.3.x's launcher passes unchanged.
BOOTSTRAP_PORT_ANNOTATION = "sglang.ai/bootstrap-port"
# The flag of each role's selector in PD mode; outside it (PD-mixed) one --selector.
PD_SELECTOR_FLAGS = {"prefill": "--prefill-selector", "decode": "--decode-selector"}


@dataclasses.dataclass(frozen=True)
class Discovery:
    """How the router discovers its workers: the namespace it watches, the port it dials and each role's labels."""

    namespace: str
    port: int
    selectors: Mapping[str, Mapping[str, str]]  # role -> the labels of its leader pods
    service_account: str

    def flags(self, pd: bool) -> list[str]:
        """The router's discovery flags (selectors as key=value words, as its launcher parses them)."""
        out = ["--service-discovery"]
        for role, labels in self.selectors.items():
            out.append(PD_SELECTOR_FLAGS[role] if pd else "--selector")
            out += [f"{key}={value}" for key, value in labels.items()]
        return out + ["--service-discovery-port", str(self.port), "--service-discovery-namespace", self.namespace]


def router_args(argv: list[str], span: list[int], discovery: Discovery) -> list[str]:
    """The router's argv with its worker flags (``span``: [start, end) of them, from the plan) replaced by the
    discovery flags."""
    start, end = span
    return argv[:start] + discovery.flags("--pd-disaggregation" in argv) + argv[end:]


def rbac(discovery: Discovery, metadata: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The router's ServiceAccount, a Role that lists and watches the namespace's pods (the watcher's two verbs;
    'get' is not used), and their RoleBinding. ``metadata``: name, namespace and labels of the three."""
    name = discovery.service_account
    meta = dict(metadata, name=name)
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": meta,
         "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["list", "watch"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": meta,
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
         "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": discovery.namespace}]},
    ]
