"""The importer regenerates the 40 shipped profiles from the seed documents, field by field.

The importer (plugins/plugin_utils/_import_*.py) reads the documents; the only fixes it applies are those each
shipped profile records as data (its ``deviations``, its figure ``corrections`` and result notes), exactly as
the golden tests apply them.  Every field must then be equal: flags (and their order), environment, CANN
lines, host tuning, router, benchmark, dataset, releases, published summary, result and figures.  The
regenerated files must also load through the planner's own profile loader into the same profiles.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

import seeddoc as sd
from ansible_collections.ascend.sglang.plugins.plugin_utils import _import_output, _import_profile, _profile
from ansible_collections.ascend.sglang.plugins.plugin_utils._import_doc import read_document

pytestmark = pytest.mark.skipif(sd.missing_reason() is not None, reason=str(sd.missing_reason()))

SHIPPED = _import_profile.collection_profiles()
PIDS = sorted(SHIPPED)


def _imported() -> dict[str, tuple[_import_profile.Imported, str]]:
    curations = _import_profile.curations_by_section(SHIPPED)
    out = {}
    for path in sorted(sd.SEEDS_DIR.glob("00[01]_*.txt")):
        document = read_document(path.read_text(encoding="utf-8"), path.name)
        for item in _import_profile.import_document(document, curations):
            out[item.id] = (item, path.name)
    return out


@pytest.fixture(scope="module")
def imported() -> dict[str, tuple[_import_profile.Imported, str]]:
    return _imported()


def field_differences(mine: Any, theirs: Any, path: str = "") -> list[str]:
    """Every field that differs (value, type or, for flag maps, order), by its dotted path."""
    if isinstance(mine, dict) and isinstance(theirs, dict):
        out = []
        for key in dict.fromkeys([*theirs, *mine]):
            where = f"{path}.{key}" if path else str(key)
            if key not in mine:
                out.append(f"{where}: missing")
            elif key not in theirs:
                out.append(f"{where}: not in the shipped profile")
            else:
                out += field_differences(mine[key], theirs[key], where)
        if not out and path.endswith("args") and list(mine) != list(theirs):
            out.append(f"{path}: flag order")
        return out
    if mine != theirs or type(mine) is not type(theirs):
        return [f"{path}: {mine!r} (shipped {theirs!r})"]
    return []


def test_every_shipped_profile_is_regenerated(imported) -> None:
    assert len(PIDS) == 40
    assert sorted(imported) == PIDS


@pytest.mark.parametrize("pid", PIDS)
def test_regenerated_profile_equals_the_shipped_one(pid: str, imported) -> None:
    item, _document = imported[pid]
    assert field_differences(item.data, SHIPPED[pid]) == [], f"{pid}: fields that differ"


@pytest.mark.parametrize("pid", PIDS)
def test_written_file_loads_into_the_same_profile(pid: str, imported, tmp_path: Path) -> None:
    """Through the file the playbook writes and the planner's loader: the same typed profile."""
    for other, (item, document) in imported.items():
        if other == pid or other == item.deployment_from or other == imported[pid][0].deployment_from:
            (tmp_path / f"{other}.yml").write_text(_import_output.render(item, document), encoding="utf-8")
    text = (tmp_path / f"{pid}.yml").read_text(encoding="utf-8")
    assert text.startswith(_import_output.HEADER)
    assert yaml.safe_load(text) == imported[pid][0].data
    assert _profile.load_profile(pid, str(tmp_path)) == _profile.load_profile(pid)


def test_without_the_recorded_fixes_the_documents_are_refused_naming_lines() -> None:
    """The documents' mistakes are not guessed: with no curation, the sections that need one are refused, each
    naming its document line."""
    path = next(iter(sorted(sd.SEEDS_DIR.glob("000_*.txt"))))
    document = read_document(path.read_text(encoding="utf-8"), path.name)
    with pytest.raises(_import_profile.ImportRefusal) as refused:
        _import_profile.import_document(document, {})
    lines = str(refused.value).splitlines()
    assert len(lines) >= 10
    assert all(f"{path.name} line " in line for line in lines), lines
    joined = "\n".join(lines)
    assert "--moe-dense-tp is not a flag" in joined and "--dist-init-addr xxx:5000" in joined
