# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Release-aware rendering: which SGLang / sglang-router releases a launch command supports, and
how a documented flag is spelled in each (profiles/_releases.yml, checked against the real parsers)."""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Mapping

from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import Collector
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import _read_yaml, profiles_dir


@dataclasses.dataclass(frozen=True)
class FlagChange:
    flag: str
    since: str
    to: dict[str, Any]
    reason: str


UNKNOWN = "unknown"


@dataclasses.dataclass(frozen=True)
class ReferenceStack:
    """The packages (distribution name -> version, or "unknown") and the CANN release one SGLang release
    runs with on Atlas hosts, and where that is documented."""

    release: str
    cann: str
    source: str
    packages: dict[str, str]
    wheelhouse: tuple[str, ...]
    # The SGLang Ascend container image of this release per hardware (A3, A2), where one is documented.
    images: dict[str, str] = dataclasses.field(default_factory=dict)
    # The NPU driver and firmware (Ascend HDK) its CANN release needs, where documented: preflight holds the
    # host's driver against it (sglang_min_driver_version overrides), since an older driver fails minutes into
    # the model load rather than at start.
    driver: str = UNKNOWN

    def known(self) -> dict[str, str]:
        """The pinned packages only (an unknown one is neither compared nor installed)."""
        return {name: version for name, version in self.packages.items() if version != UNKNOWN}

    def as_dict(self) -> dict[str, Any]:
        return {"release": self.release, "cann": self.cann, "driver": self.driver, "source": self.source,
                "packages": dict(self.packages), "wheelhouse": list(self.wheelhouse)}


@dataclasses.dataclass(frozen=True)
class ReleaseTable:
    package: str
    reference: str
    releases: tuple[str, ...]
    added: dict[str, str]
    changes: tuple[FlagChange, ...]
    stacks: dict[str, ReferenceStack] = dataclasses.field(default_factory=dict)
    # Requirements of the PyPI wheel that belong to its CUDA build (not installed on Atlas hosts).
    accelerator_requirements: tuple[str, ...] = ()
    # flag -> (the first release without it, why): a profile using it cannot target that release or a later one.
    removed: dict[str, tuple[str, str]] = dataclasses.field(default_factory=dict)

    def stack(self, release: str) -> ReferenceStack | None:
        return self.stacks.get(release)

    def flags(self, release: str) -> frozenset[str]:
        """The long options the release's parser accepts (profiles/_flags/, generated from the parsers)."""
        path = os.path.join(profiles_dir(), "_flags", f"{self.package.replace('-', '_')}-{release}.txt")
        with open(path, encoding="utf-8") as handle:
            return frozenset(line.strip() for line in handle if line.startswith("--"))

    def bench_flags(self, release: str) -> frozenset[str]:
        """The long options ``release``'s sglang.bench_serving accepts (profiles/_flags/bench_serving-<release>.txt,
        generated from its parser; an SGLang release only)."""
        path = os.path.join(profiles_dir(), "_flags", f"bench_serving-{release}.txt")
        with open(path, encoding="utf-8") as handle:
            return frozenset(line.strip() for line in handle if line.startswith("--"))

    def known(self, release: str) -> bool:
        return release in self.releases

    def at_least(self, release: str, other: str) -> bool:
        return self.releases.index(release) >= self.releases.index(other)

    def supported(self, flags: set[str]) -> list[str]:
        """Releases that accept every flag of ``flags`` (after this table's changes). ``flags`` may hold a flag
        with its value (``tokens``): an ``added`` entry ``"--flag value"`` is a choice a later release added."""
        return [r for r in self.releases
                if all(self.at_least(r, self.added[f]) for f in flags if f in self.added)
                and not any(self.at_least(r, self.removed[f][0]) for f in flags if f in self.removed)]

    def takes(self, release: str, flags: set[str]) -> bool:
        """The release's parser takes every flag: its catalog (profiles/_flags) has it, or a flag change of this
        table renders it as that release's flag."""
        catalog = self.flags(release)
        changed = {c.flag for c in self.changes if self.at_least(release, c.since)}
        return all((self.at_least(release, self.added[flag]) if flag in self.added else True) if " " in flag
                   else flag in catalog or flag in changed for flag in flags)

    def apply(self, role: str, args: Mapping[str, Any], release: str, variable: str,
              errors: Collector) -> tuple[dict[str, Any], list[dict[str, str]]]:
        """Documented flags -> the flags of ``release``; each change is returned as a record."""
        for flag in tokens(args):
            if flag in self.added and not self.at_least(release, self.added[flag]):
                errors.add(f"{flag} needs {self.package} >= {self.added[flag]}, but the chosen release is {release}; "
                           f"pick one of: {', '.join(self.supported(set(args)))}", group=role, variable=variable)
            if flag in self.removed and self.at_least(release, self.removed[flag][0]):
                since, why = self.removed[flag]
                errors.add(f"{flag} is gone from {self.package} {since} on ({why}), but the chosen release is "
                           f"{release}; pick one of: {', '.join(self.supported(set(args)))}", group=role,
                           variable=variable)
        out: dict[str, Any] = {}
        notes: list[dict[str, str]] = []
        active = {c.flag: c for c in self.changes if self.at_least(release, c.since)}
        for flag, value in args.items():
            change = active.get(flag)
            if change is None:
                out[flag] = value
                continue
            for new_flag, new_value in change.to.items():
                if new_value == "{value}":
                    new_value = value
                elif new_value == "{tp_size}":
                    new_value = args.get("--tp-size")
                out[new_flag] = new_value
            notes.append({"role": role, "release": release, "flag": flag,
                          "rendered": " ".join(change.to) or "(dropped)", "reason": change.reason})
        return out, notes


def tokens(args: Mapping[str, Any]) -> set[str]:
    """The flags of ``args`` and, for each with one value, ``"--flag value"``: what ``supported`` and ``takes`` check
    (a choice such as ``--attention-backend dsv4`` arrives in a later release than its flag)."""
    out = set(args)
    out.update(f"{flag} {value}" for flag, value in args.items()
               if isinstance(value, (str, int)) and not isinstance(value, bool))
    return out


def load_release_tables(directory: str | None = None) -> dict[str, ReleaseTable]:
    data = _read_yaml(os.path.join(directory or profiles_dir(), "_releases.yml"))
    tables = {}
    for package, raw in data.items():
        tables[package] = ReleaseTable(
            package=package.replace("_", "-"),
            reference=str(raw["reference"]),
            releases=tuple(str(r) for r in raw["releases"]),
            added={str(k): str(v) for k, v in (raw.get("added") or {}).items()},
            changes=tuple(FlagChange(flag=c["flag"], since=str(c["since"]), to=dict(c.get("to") or {}),
                                     reason=" ".join(str(c["reason"]).split())) for c in raw.get("changes") or []),
            stacks={str(release): ReferenceStack(
                release=str(release), cann=str(stack.get("cann") or UNKNOWN),
                source=" ".join(str(stack.get("source") or "").split()),
                packages={str(k): str(v) for k, v in (stack.get("packages") or {}).items()},
                wheelhouse=tuple(str(w) for w in stack.get("wheelhouse") or ()),
                images={str(k): str(v) for k, v in (stack.get("images") or {}).items()},
                driver=str(stack.get("driver") or UNKNOWN))
                for release, stack in (raw.get("stacks") or {}).items()},
            accelerator_requirements=tuple(str(r) for r in raw.get("accelerator_requirements") or ()),
            removed={str(r["flag"]): (str(r["since"]), " ".join(str(r["reason"]).split()))
                     for r in raw.get("removed") or []},
        )
    return tables
