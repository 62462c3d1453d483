# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Every host's preflight / doctor / stack findings -> one table and a JSON report with a status an automation
can use (0 ok, 1 warnings, 2 failures) (action ascend.sglang.sglang_preflight_report).

Private to the collection; pure, no Ansible import. The findings are the hosts' own (module sglang_preflight,
module_utils/checks/_preflight.py) plus the controller's that compare hosts (_fleet_checks.py); a host without a
usable result is a failure of that host, never a clean table.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from ansible_collections.ascend.sglang.plugins.module_utils.checks._findings import (
    FAIL, OK, SEVERITY_ORDER, STATUS_WORDS, WARN, Finding, worst,
)
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._table import render

EXIT_CODES = {OK: 0, WARN: 1, FAIL: 2}
# Shown even when ok: the table lists every server host's stack.
ALWAYS_SHOWN = ("stack",)
COLUMNS = (("status", "status"), ("host", "host"), ("check", "check"), ("found", "found"),
           ("expected", "expected"), ("fix", "how to fix"))


def finding_from(data: Mapping[str, Any]) -> Finding:
    return Finding(host=str(data.get("host")), check=str(data.get("check")), severity=str(data.get("severity")),
                   found=str(data.get("found", "")), expected=str(data.get("expected", "")),
                   fix=str(data.get("fix", "")), service=data.get("service"))


def host_result_findings(host: str, result: Mapping[str, Any] | None) -> list[Finding]:
    """A registered per-host task result -> findings; an unreachable or failed host is a failure."""
    if not result:
        return [Finding(host, "reachable", FAIL, "no result (host unreachable or skipped)", "host checked",
                        "check SSH access to the host (`ansible -m ansible.builtin.ping`) and rerun")]
    if result.get("unreachable"):
        return [Finding(host, "reachable", FAIL, str(result.get("msg") or "unreachable"), "host reachable over SSH",
                        "check SSH access to the host (`ansible -m ansible.builtin.ping`) and rerun")]
    if result.get("failed") and not result.get("findings"):
        return [Finding(host, "preflight", FAIL, str(result.get("msg") or "the check module failed"), "checks ran",
                        "fix the error shown (python3 on the host, privileges: npu-smi and /proc need root)")]
    if result.get("skipped"):
        return [Finding(host, "preflight", WARN, "checks skipped", "checks ran", "")]
    return [finding_from(f) for f in result.get("findings") or []]


def aggregate(results: Mapping[str, Mapping[str, Any] | None]) -> list[Finding]:
    findings: list[Finding] = []
    for host in results:
        findings.extend(host_result_findings(host, results[host]))
    return findings


def render_table(findings: Iterable[Finding], include_ok: bool = False,
                 widths: tuple[int, ...] = (6, 24, 30, 44, 36, 52)) -> list[str]:
    """Text table (plugin_utils/core/_table.py): status, host, check [service], found, expected, how to fix.

    Long cells wrap onto continuation lines (nothing is cut off); rows are sorted failures first.
    """
    rows = []
    ordered = sorted(findings, key=lambda f: (-SEVERITY_ORDER.get(f.severity, 2), f.host, f.check, f.service or ""))
    for f in ordered:
        if f.severity == OK and not include_ok and f.check not in ALWAYS_SHOWN:
            continue
        check = f"{f.check} [{f.service}]" if f.service else f.check
        rows.append([f.severity.upper(), f.host, check, f.found, f.expected, f.fix])
    if not rows:
        return ["(no findings)"]
    return render([title for _unused, title in COLUMNS], rows, widths)


def report(results: Mapping[str, Mapping[str, Any] | None], mode: str = "preflight",
           profile: str | None = None, extra: Iterable[Finding] = ()) -> dict[str, Any]:
    """The JSON document: overall status + exit code, per-host status, every finding (``extra``: the controller's
    findings that compare hosts, each filed under its host)."""
    findings = aggregate(results) + list(extra)
    level = worst(findings)
    hosts: dict[str, Any] = {}
    for host in results:
        mine = [f for f in findings if f.host == host]
        result = results[host] or {}
        hosts[host] = {"status": STATUS_WORDS[worst(mine)], "findings": [f.as_dict() for f in mine],
                       "observed": result.get("observed")}
    counts = {sev: sum(1 for f in findings if f.severity == sev) for sev in (OK, WARN, FAIL)}
    return {
        "mode": mode,
        "profile": profile,
        "status": STATUS_WORDS[level],
        "exit_code": EXIT_CODES[level],
        "counts": counts,
        "problems": [f.as_dict() for f in findings if f.severity != OK],
        "hosts": hosts,
    }
