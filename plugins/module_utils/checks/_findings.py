# Copyright: ascend.sglang contributors
# Apache License 2.0
"""What the host checks report: the severities, the Finding record, the Context the checks compare against,
the collector each check family adds its findings to, and the worst severity of a list.

Private to the collection; pure, no Ansible import. Runs on the managed host (module sglang_preflight); the
controller reads the same records back (plugins/plugin_utils/report/_preflight_report.py, _fleet_checks.py).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable, Mapping

from ansible_collections.ascend.sglang.plugins.module_utils.checks import _checks

OK, WARN, FAIL = "ok", "warn", "fail"
SEVERITY_ORDER = {OK: 0, WARN: 1, FAIL: 2}
STATUS_WORDS = {OK: "ok", WARN: "warnings", FAIL: "failures"}
MODES = ("preflight", "doctor", "stack")


@dataclasses.dataclass(frozen=True)
class Finding:
    host: str
    check: str
    severity: str
    found: str
    expected: str
    fix: str
    service: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class Context:
    """What the checks compare against, besides the host plan."""

    mode: str = "preflight"
    hardware: str | None = None          # the profile's hardware (A2 / A3): the plan's ``hardware``
    releases: Mapping[str, str] = dataclasses.field(default_factory=dict)
    min_driver_version: str | None = None
    min_cann_version: str | None = None
    min_hbm_free_ratio: float | None = None  # None: the service's --mem-fraction-static, else 0.8
    profile: str | None = None
    # Packages the roles install before start (sglang_server_install / sglang_router_install).
    installed_by_roles: frozenset[str] = frozenset()
    # The planned release's reference environment (the plan's ``reference_stack``) and how a difference counts.
    stack_reference: Mapping[str, Any] | None = None
    stack_policy: str = "warn"
    # The plan's preflight settings (module_utils/checks/_checks.py): each check's level, the weights mode.
    preflight: Mapping[str, Any] = dataclasses.field(default_factory=_checks.settings)

    def level(self, check: str) -> str:
        return _checks.level(self.preflight, check)


class Findings:
    """One host's findings, in the order the checks add them; an ok finding carries no fix."""

    def __init__(self, host: str) -> None:
        self.host = host
        self.items: list[Finding] = []

    def add(self, check: str, severity: str, found: str, expected: str, fix: str = "",
            service: str | None = None) -> None:
        self.items.append(Finding(self.host, check, severity, found, expected, fix if severity != OK else "", service))


def worst(findings: Iterable[Finding | Mapping[str, Any]]) -> str:
    """The highest severity of the findings (records or their dicts); an unknown severity counts as a failure."""
    level = OK
    for f in findings:
        sev = f.severity if isinstance(f, Finding) else str(f.get("severity"))
        if SEVERITY_ORDER.get(sev, 2) > SEVERITY_ORDER[level]:
            level = sev if sev in SEVERITY_ORDER else FAIL
    return level
