"""The record of SGLang's nightly Ascend performance tests (tests/golden/upstream_nightly.yml) against the shipped
profiles: every test file found has an entry (its path and commit) with the profile that comes from it, the page
profile that covers it, or the reason it has none; every profile named exists; every profile of a nightly test
names its test's path and commit as the record does, and the record names it back."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import available_profiles, load_profile

ROOT = Path(__file__).resolve().parents[2]
RECORD = yaml.safe_load((ROOT / "tests" / "golden" / "upstream_nightly.yml").read_text(encoding="utf-8"))
TESTS = RECORD["tests"]
OUTCOMES = ("profile", "covered_by", "reason")
FOLDERS = ("test/registered/npu/performance/", "test/registered/ascend/performance/")
NIGHTLY_ALL = {pid: load_profile(pid) for pid in available_profiles()
               if load_profile(pid).id == pid and load_profile(pid).source.get("kind") == "nightly"}
# A nightly profile stays selectable, retired, once a page documents its configuration: its test is then covered by
# the page's profile, the one that supersedes it.
NIGHTLY = {pid: p for pid, p in NIGHTLY_ALL.items() if not p.retired}
RETIRED = {pid: p for pid, p in NIGHTLY_ALL.items() if p.retired}


def test_every_entry_is_one_test_file_with_its_commit_and_one_outcome():
    paths = [t["path"] for t in TESTS]
    assert len(paths) == len(set(paths)), "a test file is recorded once"
    for entry in TESTS:
        assert entry["path"].startswith(FOLDERS) and entry["path"].endswith(".py"), entry
        assert re.fullmatch(r"[0-9a-f]{40}", str(entry["commit"])), entry
        assert [k for k in OUTCOMES if k in entry] and len([k for k in OUTCOMES if k in entry]) == 1, (
            f"{entry['path']}: one of {OUTCOMES}")
        assert entry.get("read") in ("imported", "name"), f"{entry['path']}: read: imported (the importer ran on it) " \
                                                          "or name (matched by its file name only)"


def test_every_test_file_was_read_by_the_importer_or_is_an_accuracy_variant():
    # A reason is the importer's refusal, a duplicate or an accuracy variant: "not imported yet" is no outcome.
    for entry in TESTS:
        assert "not imported yet" not in entry.get("reason", ""), (
            f"{entry['path']}: import it (scripts/import_nightly.py --record)")
        if "reason" in entry and not entry["reason"].startswith("accuracy variant"):
            assert entry.get("read") == "imported", f"{entry['path']}: a reason the importer gave"


def test_accuracy_variants_are_skipped_with_that_reason():
    for entry in TESTS:
        if re.search(r"_(gpqa|aime\d*)\.py$", entry["path"]):
            assert entry.get("reason", "").startswith("accuracy variant"), entry["path"]


@pytest.mark.parametrize("entry", [t for t in TESTS if "profile" in t or "covered_by" in t],
                         ids=lambda t: t["path"].rsplit("/", 1)[-1])
def test_every_profile_named_exists(entry):
    for pid in [entry.get("profile"), *(entry.get("covered_by") or [])]:
        if pid:
            assert pid in available_profiles(), f"{entry['path']}: no profile {pid}"
    if "covered_by" in entry:
        assert all(pid not in NIGHTLY for pid in entry["covered_by"]), "a covering profile is a page's"
    # What scripts/import_nightly.py printed for an imported test a page covers: page -> test, per covering profile.
    assert set(entry.get("differences") or {}) <= set(entry.get("covered_by") or [])


def test_every_nightly_profile_names_its_test_and_commit():
    by_path = {t["path"]: t for t in TESTS}
    for pid, profile in NIGHTLY.items():
        src = profile.source
        assert src.get("repository") == RECORD["repository"] and src.get("test"), pid
        entry = by_path.get(src.get("path"))
        assert entry is not None, f"{pid}: its test {src.get('path')} is not in the record"
        assert entry.get("profile") == pid and entry.get("read") == "imported", f"{pid}: the record names it"
        assert src.get("commit") == entry["commit"], f"{pid}: read at {src.get('commit')}, recorded {entry['commit']}"
        assert profile.published.get("nightly", {}), f"{pid}: the test's thresholds"
    assert {t["profile"] for t in TESTS if "profile" in t} == set(NIGHTLY)


def test_a_retired_nightly_profile_names_the_page_profile_that_covers_its_test():
    by_path = {t["path"]: t for t in TESTS}
    for pid, profile in RETIRED.items():
        entry = by_path.get(profile.source.get("path"))
        assert entry is not None, f"{pid}: its test {profile.source.get('path')} is not in the record"
        assert profile.retired.get("superseded_by") in (entry.get("covered_by") or []), (
            f"{pid}: retired for {profile.retired.get('superseded_by')}, which the record does not name as covering "
            "its test")
