# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Imported profiles -> the files of an operator's profiles directory, and what each differs in.

Pure; no Ansible import.  Every file written starts with ``HEADER``: a file at the same path without it is
the operator's own and is never overwritten (the import is refused naming it).  Other files of the directory
are left alone, so that the directory may hold the operator's own profiles beside the imported ones.
The differences are given against the collection's profile of the same id: flags and environment per role,
published figures and every other field, one line each.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Mapping

from ansible_collections.ascend.sglang.plugins.plugin_utils.importer._import_profile import Imported
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._serialize import yaml_text

HEADER = "# Imported by ascend.sglang.import_profiles"


class NotOurs(ValueError):
    """The destination holds a file this importer did not write (the message names it and the variable)."""


def render(item: Imported, document_name: str) -> str:
    """The profile file: the header line, the section it comes from, then the data the planner reads."""
    head = (f"{HEADER} from {os.path.basename(document_name)},\n"
            f"# section '{item.section.title}' (document line {item.section.line}).\n"
            "# Re-import rather than edit: the importer overwrites the files it wrote and no others.\n")
    # Lists indented under their key, as the collection's own profiles are written (and yamllint wants them).
    return head + yaml_text(item.data, width=120)


def written_by_us(path: str) -> bool:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.readline().startswith(HEADER)
    except (OSError, UnicodeDecodeError):
        return False


def check_directory(dest: str, variable: str) -> None:
    """Refuse a destination that is not a directory and cannot be made one (before anything in it is read)."""
    if os.path.lexists(dest) and (not os.path.isdir(dest) or os.path.islink(dest)):
        raise NotOurs(f"{variable} '{dest}' exists and is not a directory: pass a new or existing directory")
    # A new directory is made with its parents: the nearest one that exists must be a directory.
    parent = os.path.dirname(os.path.abspath(dest))
    while not os.path.lexists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise NotOurs(f"{variable} '{dest}' cannot be made: '{parent}' is a file, not a directory")


def check_destination(dest: str, names: list[str], variable: str) -> None:
    """Refuse a destination that is not a directory, or a file the importer would replace but did not write."""
    check_directory(dest, variable)
    foreign = [name for name in names
               if os.path.lexists(os.path.join(dest, name)) and not written_by_us(os.path.join(dest, name))]
    if foreign:
        raise NotOurs(f"{variable} '{dest}' holds {', '.join(sorted(foreign))}, which the importer did not write "
                      f"(no '{HEADER}' first line): move them away or import into another directory")


# --------------------------------------------------------------------------- differences


def _fmt(value: Any) -> str:
    if value is True:
        return "(set)"
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return str(value)


def _map_diff(what: str, mine: Mapping[str, Any], theirs: Mapping[str, Any]) -> list[str]:
    out = []
    for key in list(dict.fromkeys([*theirs, *mine])):
        if key not in mine:
            out.append(f"{what}: {key} removed (was {_fmt(theirs[key])})")
        elif key not in theirs:
            out.append(f"{what}: {key} added ({_fmt(mine[key])})")
        elif mine[key] != theirs[key] or type(mine[key]) is not type(theirs[key]):
            out.append(f"{what}: {key} {_fmt(theirs[key])} -> {_fmt(mine[key])}")
    if not out and list(mine) != list(theirs):
        out.append(f"{what}: same values in another order")
    return out


def differences(new: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[str]:
    """One line per difference of ``new`` from ``old`` (flags, env, figures first; then everything else)."""
    if old is None:
        return ["no collection profile of this id"]
    out: list[str] = []
    roles_new, roles_old = dict(new.get("roles") or {}), dict(old.get("roles") or {})
    for role in list(dict.fromkeys([*roles_old, *roles_new])):
        mine, theirs = roles_new.get(role), roles_old.get(role)
        if mine is None or theirs is None:
            out.append(f"roles.{role}: {'removed' if mine is None else 'added'}")
            continue
        out += _map_diff(f"{role} flags", mine.get("args") or {}, theirs.get("args") or {})
        out += _map_diff(f"{role} env", mine.get("env") or {}, theirs.get("env") or {})
        rest_new = {k: v for k, v in mine.items() if k not in ("args", "env")}
        rest_old = {k: v for k, v in theirs.items() if k not in ("args", "env")}
        out += _map_diff(f"roles.{role}", rest_new, rest_old)
    pub_new, pub_old = dict(new.get("published") or {}), dict(old.get("published") or {})
    out += _map_diff("figures", pub_new.get("figures") or {}, pub_old.get("figures") or {})
    out += _map_diff("bench flags", (new.get("bench") or {}).get("args") or {},
                     (old.get("bench") or {}).get("args") or {})
    out += _map_diff("published", {k: v for k, v in pub_new.items() if k != "figures"},
                     {k: v for k, v in pub_old.items() if k != "figures"})
    skip = {"roles", "published", "bench"}
    out += _map_diff("profile", {k: v for k, v in new.items() if k not in skip},
                     {k: v for k, v in old.items() if k not in skip})
    return out


@dataclasses.dataclass
class Planned:
    id: str
    path: str
    content: str
    status: str  # new | changed | unchanged (against the file in the destination)
    differences: list[str]  # against the collection's profile of the same id

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def plan_files(items: list[Imported], document_name: str, dest: str,
               collection: Mapping[str, Mapping[str, Any]]) -> list[Planned]:
    """What the import writes into ``dest``; ``collection``: the collection's profiles by id."""
    out = []
    for item in items:
        path = os.path.join(dest, f"{item.id}.yml")
        content = render(item, document_name)
        try:
            with open(path, encoding="utf-8") as handle:
                status = "unchanged" if handle.read() == content else "changed"
        except FileNotFoundError:
            status = "new"
        out.append(Planned(id=item.id, path=path, content=content, status=status,
                           differences=differences(item.data, collection.get(item.id))))
    return out


def report(planned: list[Planned]) -> list[str]:
    """The lines an operator reads: per new or changed profile, what it differs in from the collection's."""
    lines = []
    for entry in planned:
        if entry.status == "unchanged":
            continue
        diff = entry.differences or ["same as the collection's profile"]
        lines.append(f"{entry.id} ({entry.status}):")
        lines += [f"  {line}" for line in diff]
    kept = sum(1 for entry in planned if entry.status == "unchanged")
    lines.append(f"{len(planned)} profiles: {sum(1 for e in planned if e.status == 'new')} new, "
                 f"{sum(1 for e in planned if e.status == 'changed')} changed, {kept} unchanged")
    return lines
