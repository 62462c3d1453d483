"""Changelog fragments are what antsibull-changelog and ansible-test's yamllint read: each one parses as YAML
(a ': ' inside a plain scalar does not), uses only the sections changelogs/config.yaml defines, and holds
non-empty strings (a list for every section but the release summary)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CONFIG = yaml.safe_load((ROOT / "changelogs" / "config.yaml").read_text(encoding="utf-8"))
SECTIONS = {pair[0] for pair in CONFIG["sections"]} | {CONFIG["prelude_section_name"], CONFIG["trivial_section_name"]}
FRAGMENTS = sorted((ROOT / "changelogs" / "fragments").glob("*.y*ml"))


def test_there_are_fragments() -> None:
    assert FRAGMENTS


@pytest.mark.parametrize("path", FRAGMENTS, ids=lambda p: p.name)
def test_fragment(path: Path) -> None:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))  # raises on a syntax error, naming line and column
    assert isinstance(data, dict) and data, f"{path.name}: a mapping of sections"
    assert set(data) <= SECTIONS, f"{path.name}: unknown section(s) {sorted(set(data) - SECTIONS)}"
    for section, entries in data.items():
        if section == CONFIG["prelude_section_name"]:
            assert isinstance(entries, str) and entries.strip(), f"{path.name}: {section} is one string"
            continue
        assert isinstance(entries, list) and entries, f"{path.name}: {section} is a list"
        for entry in entries:
            assert isinstance(entry, str) and entry.strip(), f"{path.name}: {section} has a non-string {entry!r}"
