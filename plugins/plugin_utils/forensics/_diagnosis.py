# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Names the known cause of a failure from the logs of a bundle: the table of failure signatures
(profiles/_failure_signatures.yml, data) matched line by line against each unit's journal, the NPU driver's
kernel lines and npu-smi's health, worst first.

Private to the collection. Controller only, pure: texts in, findings out."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

import yaml

SIGNATURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "profiles",
                          "_failure_signatures.yml")
SEVERITIES = ("critical", "error", "warning")
_FIELDS = {"id", "severity", "patterns", "cause", "fix", "source"}
# A matched line is shown cut to this many characters.
LINE_CHARS = 240


@dataclass(frozen=True)
class Signature:
    id: str
    severity: str
    pattern: re.Pattern
    cause: str
    fix: str
    source: str
    order: int


@dataclass
class Finding:
    host: str
    unit: str
    signature: Signature
    line: str
    count: int = 1

    def as_dict(self) -> dict[str, Any]:
        return {"host": self.host, "unit": self.unit, "id": self.signature.id, "severity": self.signature.severity,
                "cause": self.signature.cause, "fix": self.signature.fix, "source": self.signature.source,
                "line": self.line, "count": self.count}


@dataclass
class Diagnosis:
    findings: list[Finding] = field(default_factory=list)
    unexplained: list[tuple[str, str]] = field(default_factory=list)  # (host, unit) in trouble, no signature

    def as_dict(self) -> dict[str, Any]:
        return {"findings": [f.as_dict() for f in self.findings],
                "unexplained": [{"host": h, "unit": u} for h, u in self.unexplained]}


def load(path: str = SIGNATURES) -> list[Signature]:
    """The signature table; a malformed row is an error naming it (the table ships with the collection)."""
    with open(path, encoding="utf-8") as handle:
        rows = (yaml.safe_load(handle) or {}).get("signatures") or []
    table, seen = [], set()
    for order, row in enumerate(rows):
        where = f"{os.path.basename(path)} row {order + 1}"
        if not isinstance(row, dict) or set(row) != _FIELDS:
            raise ValueError(f"{where}: needs exactly the fields {', '.join(sorted(_FIELDS))}")
        if row["severity"] not in SEVERITIES or row["id"] in seen:
            raise ValueError(f"{where} ({row['id']}): severity must be one of {SEVERITIES} and ids unique")
        seen.add(row["id"])
        alternatives = row["patterns"] if isinstance(row["patterns"], list) else []
        try:
            if not alternatives:
                raise re.error("a list of at least one regular expression")
            # Each alternative is compiled alone first, so an error names it.
            for alternative in alternatives:
                re.compile(str(alternative))
            pattern = re.compile("|".join(f"(?:{alternative})" for alternative in alternatives))
        except re.error as exc:
            raise ValueError(f"{where} ({row['id']}): patterns: {exc}") from None
        table.append(Signature(str(row["id"]), row["severity"], pattern, str(row["cause"]).strip(),
                               str(row["fix"]).strip(), str(row["source"]).strip(), order))
    return table


def match(text: str, table: Iterable[Signature]) -> list[tuple[Signature, str, int]]:
    """Each signature found in text: (signature, its first matching line, how many lines match)."""
    found: dict[str, list] = {}
    rows = list(table)
    for line in text.splitlines():
        for sig in rows:
            if sig.pattern.search(line):
                if sig.id in found:
                    found[sig.id][2] += 1
                else:
                    found[sig.id] = [sig, line.strip()[:LINE_CHARS], 1]
    return [tuple(entry) for entry in found.values()]


def _rank(finding: Finding) -> tuple:
    return SEVERITIES.index(finding.signature.severity), finding.signature.order, finding.host, finding.unit


def diagnose(texts: Mapping[tuple[str, str], str], table: list[Signature],
             troubled: Iterable[tuple[str, str]] = ()) -> Diagnosis:
    """texts: (host, unit or source) -> log text. troubled: (host, unit) that failed, restarted or were named by
    the failure; those without any finding are listed as unexplained. Findings worst first."""
    result = Diagnosis()
    for (host, unit), text in texts.items():
        for sig, line, count in match(text, table):
            result.findings.append(Finding(host, unit, sig, line, count))
    result.findings.sort(key=_rank)
    explained = {(f.host, f.unit) for f in result.findings}
    result.unexplained = sorted({t for t in troubled if t not in explained})
    return result


def render(diagnosis: Diagnosis, archive: str) -> list[str]:
    """The diagnosis as the operator reads it, worst first; unknown failures point to the archive."""
    lines = []
    for f in diagnosis.findings:
        times = f" (x{f.count})" if f.count > 1 else ""
        lines.append(f"[{f.signature.severity}] {f.host} {f.unit}: {f.signature.cause}{times}")
        lines.append(f"    log: {f.line}")
        lines.append(f"    fix: {f.signature.fix}  [{f.signature.id}; {f.signature.source}]")
    for host, unit in diagnosis.unexplained:
        lines.append(f"[unknown] {host} {unit}: no known signature; read {archive} ({host}/journal/{unit}.log)")
    if not lines:
        lines.append(f"no known signature in any collected log; read {archive}")
    return lines
