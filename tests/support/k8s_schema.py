"""Kubernetes manifests against the real schemas (tests only).

- Core objects (Service, Deployment, and every pod template as a Pod): ``kubernetes-validate``'s strict schemas of
  one pinned Kubernetes release (additionalProperties false: an unknown field fails).
- Custom resources (RoleBasedGroup, LeaderWorkerSet, PodMonitor, PrometheusRule): the ``openAPIV3Schema`` of the CRD vendored under
  tests/fixtures/k8s/crds (SOURCES.md names the repository and commit), with jsonschema, plus the API server's
  rule that jsonschema does not know: a structural schema lists an object's fields, and a field it does not list is
  unknown (pruned, or refused with strict field validation) unless the schema preserves unknown fields.
"""

from __future__ import annotations

import copy
import functools
import re
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import yaml
from kubernetes_validate.utils import schema_contents
from referencing import Registry, Resource

KUBERNETES = "1.34.0"
CRDS = Path(__file__).resolve().parents[1] / "fixtures" / "k8s" / "crds"
CRD_FILES = {("workloads.x-k8s.io", "RoleBasedGroup"): "workloads.x-k8s.io_rolebasedgroups.yaml",
             ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): "leaderworkerset.x-k8s.io_leaderworkersets.yaml",
             ("monitoring.coreos.com", "PodMonitor"): "monitoring.coreos.com_podmonitors.yaml",
             ("monitoring.coreos.com", "PrometheusRule"): "monitoring.coreos.com_prometheusrules.yaml"}
# The kinds custom_problems validates (the others are core objects).
CUSTOM_KINDS = frozenset(kind for unused, kind in CRD_FILES)


def _load_crds() -> dict[tuple[str, str], dict[str, Any]]:
    """The CRDs, parsed when this module is imported: ansible-test units runs each test in a process forked after
    collection, where a lazily parsed 4 MB of YAML would be parsed again for every test."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return {key: yaml.load((CRDS / name).read_text(), Loader=loader) for key, name in CRD_FILES.items()}


CRD_DOCUMENTS = _load_crds()


def crd_schema(group: str, kind: str, version: str) -> dict[str, Any]:
    for served in CRD_DOCUMENTS[(group, kind)]["spec"]["versions"]:
        if served["name"] == version and served.get("served"):
            return served["schema"]["openAPIV3Schema"]
    raise KeyError(f"{group}/{version} {kind} is not served by the vendored CRD")


# ObjectMeta's fields a manifest may set: an object's own metadata is ObjectMeta whatever its CRD's schema says.
OBJECT_META = frozenset({"annotations", "finalizers", "generateName", "labels", "name", "namespace",
                         "ownerReferences"})


def unknown_fields(instance: Any, schema: dict[str, Any], path: str = "") -> list[str]:
    """The fields of ``instance`` the structural schema does not list (JSON paths), as the API server's pruning
    finds them: x-kubernetes-preserve-unknown-fields keeps an object's unlisted fields (its listed ones are still
    checked; on an array it changes nothing: the items have their own schema), additionalProperties gives the schema
    of a map's values, an embedded resource may carry apiVersion, kind and metadata, and an object whose schema lists
    no field and keeps none loses every field."""
    out: list[str] = []
    if isinstance(instance, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for key, value in instance.items():
            here = f"{path}.{key}"
            if key in props:
                out += unknown_fields(value, props[key], here)
            elif isinstance(extra, dict):
                out += unknown_fields(value, extra, here)
            elif (schema.get("x-kubernetes-preserve-unknown-fields") or extra is True
                  or (schema.get("x-kubernetes-embedded-resource") and key in ("apiVersion", "kind", "metadata"))):
                continue
            else:
                out.append(here)
    elif isinstance(instance, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(instance):
            out += unknown_fields(item, schema["items"], f"{path}[{index}]")
    return out


def _openapi(schema: Any) -> Any:
    """OpenAPI v3 -> JSON Schema draft 4: an int-or-string field without a type takes an integer or a string (the
    CRDs use neither ``nullable`` nor a boolean ``exclusiveMinimum``; draft 4 reads the latter as OpenAPI does)."""
    if isinstance(schema, list):
        return [_openapi(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: _openapi(value) for key, value in schema.items()}
    if schema.get("x-kubernetes-int-or-string") and "type" not in schema:
        out["type"] = ["integer", "string"]
    return out


# Made at import, for the same reason as CRD_DOCUMENTS: one per served version of each CRD.
CRD_VALIDATORS = {(group, kind, served["name"]): jsonschema.Draft4Validator(_openapi(served["schema"]["openAPIV3Schema"]))
                  for (group, kind), document in CRD_DOCUMENTS.items() for served in document["spec"]["versions"]
                  if served.get("served")}


def _validator(group: str, kind: str, version: str) -> jsonschema.Draft4Validator:
    return CRD_VALIDATORS[(group, kind, version)]


def custom_problems(obj: dict[str, Any]) -> list[str]:
    group, version = obj["apiVersion"].split("/")
    schema = crd_schema(group, obj["kind"], version)
    problems = [f"{'.'.join(str(p) for p in error.absolute_path)}: {error.message}"
                for error in _validator(group, obj["kind"], version).iter_errors(obj)]
    problems += [f".metadata.{key}: unknown field" for key in obj.get("metadata", {}) if key not in OBJECT_META]
    body = {key: value for key, value in obj.items() if key not in ("apiVersion", "kind", "metadata")}
    return problems + [f"{field}: unknown field" for field in unknown_fields(body, schema)]


@functools.lru_cache(maxsize=None)
def _core_validator(kind: str, api_version: str) -> jsonschema.protocols.Validator:
    """kubernetes_validate.validate()'s validator for one kind, made once: the library builds it, with its 1.8 MB
    definitions, on every call (about 400 times here, minutes under ansible-test units)."""
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    directory = f"kubernetes-json-schema/v{KUBERNETES}-local-strict"
    try:
        schema = schema_contents(f"{directory}/{kind.lower()}-{group_version}.json", KUBERNETES)
    except FileNotFoundError:
        raise kubernetes_validate.SchemaNotFoundError(version=KUBERNETES, kind=kind, api_version=api_version) from None
    definitions = schema_contents(f"{directory}/_definitions.json", KUBERNETES)
    registry = Resource.from_contents(definitions) @ (Resource.from_contents(schema) @ Registry())
    return jsonschema.Draft202012Validator(schema, registry=registry)


def core_problems(obj: dict[str, Any]) -> list[str]:
    """Every error of a core object against the strict schema of KUBERNETES (what kubernetes_validate.validate(obj,
    KUBERNETES, strict=True) checks, all errors rather than the first)."""
    validator = _core_validator(obj["kind"], obj["apiVersion"])
    return [f"{obj['kind']} {obj['metadata'].get('name')}: {'.'.join(str(p) for p in error.absolute_path)}: "
            f"{error.message}" for error in validator.iter_errors(obj)]


def as_pod(template: dict[str, Any], name: str, namespace: str) -> dict[str, Any]:
    """A pod template as the Pod the workload makes of it (validated with the core schema)."""
    metadata = dict(copy.deepcopy(template.get("metadata") or {}), name=name, namespace=namespace)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": copy.deepcopy(template["spec"])}
