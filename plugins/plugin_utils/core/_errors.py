# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Errors of the planner: every finding names the group, host and variable at fault."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Finding:
    message: str
    group: str | None = None
    host: str | None = None
    variable: str | None = None

    def __str__(self) -> str:
        where = []
        if self.group:
            where.append(f"group '{self.group}'")
        if self.host:
            where.append(f"host '{self.host}'")
        if self.variable:
            where.append(f"variable '{self.variable}'")
        return (", ".join(where) + ": " if where else "") + self.message


class PlanError(Exception):
    """One or more findings that make the plan impossible; nothing is written."""

    def __init__(self, findings: list[Finding]):
        self.findings = list(findings)
        super().__init__(self.render())

    def render(self, subject: str = "sglang plan") -> str:
        """Every finding, one per line, under '<subject> rejected'."""
        if len(self.findings) == 1:
            return f"{subject} rejected: {self.findings[0]}"
        lines = [f"{subject} rejected ({len(self.findings)} problems):"]
        lines += [f"  - {f}" for f in self.findings]
        return "\n".join(lines)

    def as_dicts(self) -> list[dict[str, str | None]]:
        """The findings as a task result returns them: message, group, host, variable."""
        return [dataclasses.asdict(finding) for finding in self.findings]


class Collector:
    """Gathers findings so that one run reports every problem, not just the first."""

    def __init__(self) -> None:
        self.findings: list[Finding] = []

    def add(self, message: str, group: str | None = None, host: str | None = None,
            variable: str | None = None) -> None:
        self.findings.append(Finding(message, group, host, variable))

    def raise_if_any(self) -> None:
        if self.findings:
            raise PlanError(self.findings)
