# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Checkers of the Kubernetes export's variables (the settings table's sglang_k8s_* rows).

Pure; no Ansible import.  Each value ends up in a manifest field the API server validates by its own rules
(names are DNS labels, a resource name is a qualified name): refused here, before anything is written, with the
variable's name, rather than by ``kubectl apply`` after the files are out.
"""

from __future__ import annotations

import re
from typing import Any

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _contract as c
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import Collector

KINDS = ("rbg", "lws")
# RFC 1035 label (a Service or workload name; Kubernetes' IsDNS1035Label).
DNS1035_RE = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
# RFC 1123 label (a namespace; IsDNS1123Label) and subdomain (a Secret or claim name; IsDNS1123Subdomain).
DNS1123_LABEL_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
DNS1123_SUBDOMAIN_RE = re.compile(rf"{DNS1123_LABEL_RE.pattern}(\.{DNS1123_LABEL_RE.pattern})*")
# An extended resource name: a qualified name with a domain prefix (huawei.com/Ascend910), as the device plugins
# register theirs (IsQualifiedName; the prefix a DNS subdomain, the name [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?).
RESOURCE_RE = re.compile(rf"{DNS1123_SUBDOMAIN_RE.pattern}/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
# The export's name prefixes pod names such as <name>-decode-0-1 and the headless Services' DNS labels: kept short
# enough that every derived name stays a 63-character label.
NAME_MAX = 40
# Instances of one role: the router lists each instance by name, and each one takes nodes of its own.
MAX_INSTANCES = 64


def _matching(value: Any, errors: Collector, where: c.Where, pattern: re.Pattern[str], what: str,
              longest: int) -> str | None:
    checked = c.text(value, errors, where, what=f"{what} (a string)")
    if checked is None:
        return None
    if len(checked) > longest or not pattern.fullmatch(checked):
        where.add(errors, f"must be {what} of at most {longest} characters, got {c.shown(checked)}")
        return None
    return checked


def name(value: Any, errors: Collector, where: c.Where) -> str | None:
    return _matching(value, errors, where, DNS1035_RE, "a lower-case DNS label (a-z, 0-9 and '-', starting with "
                                                       "a letter)", NAME_MAX)


def namespace(value: Any, errors: Collector, where: c.Where) -> str | None:
    return _matching(value, errors, where, DNS1123_LABEL_RE, "a namespace name (a lower-case DNS label)", 63)


def object_name(value: Any, errors: Collector, where: c.Where) -> str | None:
    return _matching(value, errors, where, DNS1123_SUBDOMAIN_RE, "an object name (a lower-case DNS subdomain)", 253)


def resource(value: Any, errors: Collector, where: c.Where) -> str | None:
    return _matching(value, errors, where, RESOURCE_RE, "an extended resource name like huawei.com/Ascend910 "
                                                        "(domain/name, no blanks)", 253)


def instances(value: Any, errors: Collector, where: c.Where) -> dict[str, int] | None:
    """role -> instance count; the roles themselves are checked against the profile by the export."""
    # The counts that passed (a refused one is a finding that stops the export): the export names unknown roles.
    return _per_role(value, errors, where, "instance count", 1)


def partition(value: Any, errors: Collector, where: c.Where) -> dict[str, int] | None:
    """role -> the workload's rollout partition (instances below it are not updated); the roles are checked against
    the profile by the export."""
    return _per_role(value, errors, where, "instance index", 0)


def _per_role(value: Any, errors: Collector, where: c.Where, what: str, lowest: int) -> dict[str, int] | None:
    """role -> an integer from ``lowest`` to MAX_INSTANCES, each checked under <variable>.<role>."""
    if not isinstance(value, dict):
        where.add(errors, f"must be a mapping of role -> {what}, got {c.type_name(value)} {c.shown(value)}")
        return None
    out: dict[str, int] = {}
    for role, item in value.items():
        number = c.integer(item, errors, c.Where(f"{where.variable}.{role}", str(role)), lowest, MAX_INSTANCES)
        if number is not None:
            out[str(role)] = number
    return out


def secret_flags(value: Any, errors: Collector, where: c.Where) -> dict[str, list[str]] | None:
    """role -> the --flags whose values come from the Kubernetes Secret (key: the flag without its dashes)."""
    if not isinstance(value, dict):
        where.add(errors, f"must be a mapping of role -> list of --flags, got {c.type_name(value)} {c.shown(value)}")
        return None
    out: dict[str, list[str]] = {}
    for role, flags in value.items():
        here = c.Where(f"{where.variable}.{role}", str(role))
        if not isinstance(flags, list) or not all(isinstance(f, str) and re.fullmatch(r"--[a-z0-9][a-z0-9-]*", f)
                                                  for f in flags):
            here.add(errors, f"must be a list of full --flag names, got {c.shown(flags)}")
            continue
        out[str(role)] = list(dict.fromkeys(flags))
    return out if len(out) == len(value) else None
