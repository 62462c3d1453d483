# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Imported profiles against the real parsers the operator installed (sglang_import_parser_python,
sglang_import_router_python).

The flag catalogs (profiles/_flags/) say which options a release has; only the release's own parser says whether a
value is one it takes (a choice, a number, a list).  Each imported profile is planned on stand-in hosts of its
documented shape (as the Kubernetes export does) for every release it supports, and the launch commands of the
release the interpreter has installed go through that release's parser (plugin_utils/importer/_parser_probe.py, one process
per interpreter: importing SGLang takes most of the time).  The interpreter is run by path with a JSON request on
stdin: no value of a profile reaches a shell.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from typing import Any, Callable, Mapping, Sequence

from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import Collector, PlanError
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._planner import plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import Plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import FROM_INVENTORY, Profile, parse_profile
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._topology import build_inventory, stand_in_fleet

PROBE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_parser_probe.py")
# A model load is not involved: importing a release's SGLang and parsing takes seconds to a minute.
PROBE_TIMEOUT = 600
# What the plan takes from the inventory, as stand-ins (never written anywhere).
STAND_IN_VALUES = {variable: f"/models/{name}" for name, variable in FROM_INVENTORY.items()}
# kind -> (package as the release tables and plans name it, its release variable, the run variable of the
# interpreter, the name an operator reads)
KINDS = {
    "server": ("sglang", "sglang_release", "sglang_import_parser_python", "SGLang"),
    "router": ("sglang_router", "sglang_router_release", "sglang_import_router_python", "sglang-router"),
}


class ParserUnusable(Exception):
    """The operator's interpreter could not run the probe (no such file, no SGLang, a crash)."""


@dataclasses.dataclass(frozen=True)
class Command:
    profile: str
    service: str
    argv: tuple[str, ...]


def imported_profiles(items: Sequence[Any], collection: Mapping[str, Mapping[str, Any]]
                      ) -> tuple[list[Profile], list[str]]:
    """The imported profiles (``Imported`` items) as the planner reads them, a reused deployment taken from the
    same import or the collection -> (profiles, refusals)."""
    by_id = {item.id: item.data for item in items}
    out, refusals = [], []
    for item in items:
        deployment = item.data
        if item.deployment_from:
            deployment = by_id.get(item.deployment_from) or collection.get(item.deployment_from)
            if deployment is None:
                refusals.append(f"{item.id}: its deployment_from '{item.deployment_from}' is neither imported nor "
                                "a profile of the collection")
                continue
        errors = Collector()
        profile = parse_profile(item.id, item.data, deployment, errors)
        if errors.findings:
            refusals.append(f"{item.id}: not a valid profile: {_one_line(errors.findings)}")
            continue
        out.append(profile)
    return out, refusals


def _one_line(findings: Sequence[Any]) -> str:
    return "; ".join(str(finding) for finding in findings)


def _stand_in_plan(profile: Profile, variables: Mapping[str, Any]) -> Plan:
    counts = {role: profile.roles[role].documented_instances for role in profile.server_roles}
    groups, hostvars = stand_in_fleet(profile, counts, "eth0")
    return plan(profile, build_inventory(groups, hostvars, {**STAND_IN_VALUES, **variables}))


def _argvs(placed: Plan, kind: str) -> list[tuple[str, list[str]]]:
    # argv[:3] is the interpreter, -m and the module; the parser reads the rest.
    return [(svc.name, list(svc.argv[3:])) for host in placed.hosts.values() for svc in host.services
            if (svc.role == "router") == (kind == "router")]


def commands_by_release(profile: Profile, kind: str) -> dict[str, list[Command]]:
    """Release -> the launch commands of ``kind`` a deployment of ``profile`` runs with it, for every release of
    the package the profile supports.  Raises PlanError when the profile does not plan."""
    package, variable = KINDS[kind][:2]
    first = _stand_in_plan(profile, {})
    out: dict[str, list[Command]] = {}
    for release in first.supported_releases[package]:
        # The profile's own release is the plan already made.
        placed = first if release == first.releases[package] else _stand_in_plan(profile, {variable: release})
        out[release] = [Command(profile.id, name, tuple(argv)) for name, argv in _argvs(placed, kind)]
    return out


def run_probe(python: str, request: Mapping[str, Any]) -> dict[str, Any]:
    """The probe's answer from ``python`` (an interpreter path, run without a shell); ParserUnusable otherwise."""
    try:
        proc = subprocess.run([python, PROBE], input=json.dumps(request), capture_output=True, text=True,
                              timeout=PROBE_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ParserUnusable(str(exc)) from None
    if proc.returncode != 0:
        tail = [line for line in proc.stderr.splitlines() if line.strip()][-1:] or [f"exit status {proc.returncode}"]
        raise ParserUnusable(tail[0])
    try:
        return json.loads(proc.stdout)
    except ValueError:
        raise ParserUnusable("it printed no parser answer") from None


@dataclasses.dataclass
class Verdict:
    report: list[str] = dataclasses.field(default_factory=list)
    refusals: list[str] = dataclasses.field(default_factory=list)


def validate(profiles: Sequence[Profile], interpreters: Mapping[str, str | None],
             probe: Callable[[str, Mapping[str, Any]], dict[str, Any]] = run_probe) -> Verdict:
    """Every profile's commands through the parser of each interpreter given (``interpreters``: kind -> path or
    None).  The report says per profile what was validated with which release; a rejected command, a profile that
    does not plan and an interpreter that cannot run the probe are refusals."""
    verdict = Verdict()
    wanted: dict[str, dict[str, dict[str, list[Command]]]] = {}  # kind -> profile -> release -> commands
    for profile in profiles:
        for kind in KINDS:
            if not interpreters.get(kind):
                continue
            try:
                wanted.setdefault(kind, {})[profile.id] = commands_by_release(profile, kind)
            except PlanError as exc:
                verdict.refusals.append(f"{profile.id}: does not plan on hosts of its documented shape: "
                                        f"{_one_line(exc.findings)}")
                break
    unset = [KINDS[kind][2] for kind in KINDS if not interpreters.get(kind)]
    if unset:
        verdict.report.append(f"not validated with a real parser ({' / '.join(unset)} unset: an interpreter on the "
                              "controller with that release installed)")
    for kind, per_profile in wanted.items():
        if per_profile:
            _one_parser(kind, str(interpreters[kind]), per_profile, verdict, probe)
    return verdict


def _one_parser(kind: str, python: str, per_profile: Mapping[str, Mapping[str, list[Command]]], verdict: Verdict,
                probe: Callable[[str, Mapping[str, Any]], dict[str, Any]]) -> None:
    variable, name = KINDS[kind][2:]
    by_release: dict[str, list[Command]] = {}
    for releases in per_profile.values():
        for release, cmds in releases.items():
            by_release.setdefault(release, []).extend(cmds)
    try:
        answer = probe(python, {"kind": kind, "by_release": {r: [list(c.argv) for c in cmds]
                                                             for r, cmds in by_release.items()}})
    except ParserUnusable as exc:
        verdict.refusals.append(f"variable '{variable}': {python} cannot run the {name} parser: {exc}")
        return
    version = answer.get("version")
    if not version:
        verdict.refusals.append(f"variable '{variable}': {python} has no {name} installed")
        return
    cmds = by_release.get(version, [])
    results = answer.get("results") or []
    if len(results) != len(cmds):
        verdict.refusals.append(f"variable '{variable}': the {name} {version} parser answered {len(results)} "
                                f"results for {len(cmds)} commands")
        return
    rejected: dict[str, list[str]] = {}
    for cmd, result in zip(cmds, results):
        if not result.get("ok"):
            rejected.setdefault(cmd.profile, []).append(f"{cmd.service}: {result.get('error') or 'rejected'}")
    for pid, releases in per_profile.items():
        if version not in releases:
            verdict.report.append(f"{pid}: not validated with {name} {version}'s parser (the profile supports "
                                  f"{', '.join(releases) or 'no release of it'})")
        elif pid in rejected:
            verdict.refusals += [f"{pid}: {name} {version}'s parser rejects {line}" for line in rejected[pid]]
        else:
            verdict.report.append(f"{pid}: {len(releases[version])} {kind} command(s) parse with {name} {version}'s "
                                  "parser")


__all__ = ["Command", "ParserUnusable", "Verdict", "commands_by_release", "imported_profiles", "run_probe",
           "validate"]
