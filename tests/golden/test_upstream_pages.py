"""The importer on SGLang's current Ascend pages, page by page, against what tests/golden/upstream_pages.yml records:
the profile id of every configuration that imports and the reason of every refusal.  A change of the importer that
changes what a page imports shows here; so does a new version of a page (its size differs from the record: read it
again and regenerate the record).  The pages stay out of the repository, like the January documents: set
SGLANG_UPSTREAM_PAGES to a directory holding each page under its base name, read at the recorded commit."""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

import pytest
import yaml

from pages_script import import_pages
from ansible_collections.ascend.sglang.plugins.plugin_utils.importer import _import_profile
from ansible_collections.ascend.sglang.plugins.plugin_utils.importer._import_doc import ImportRefusal, read_document

RECORD = yaml.safe_load((Path(__file__).with_name("upstream_pages.yml")).read_text(encoding="utf-8"))
PAGES = os.environ.get("SGLANG_UPSTREAM_PAGES")
# CI sets SGLANG_UPSTREAM_PAGES_REQUIRED=1 (.ci/run, which points SGLANG_UPSTREAM_PAGES at the copies kept beside
# the checkout): there the pages' absence fails instead of skipping.
REQUIRED = os.environ.get("SGLANG_UPSTREAM_PAGES_REQUIRED") == "1"


def missing_reason() -> str | None:
    """Why the pages cannot be read (None when SGLANG_UPSTREAM_PAGES names a directory)."""
    if not PAGES:
        return ("SGLANG_UPSTREAM_PAGES is not set (a directory with the pages tests/golden/upstream_pages.yml names, "
                "read from sgl-project/sglang at the recorded commits)")
    if not Path(PAGES).is_dir():
        return f"SGLANG_UPSTREAM_PAGES={PAGES} is not a directory"
    return None


if missing_reason() and REQUIRED:
    raise pytest.UsageError(f"SGLANG_UPSTREAM_PAGES_REQUIRED=1 but {missing_reason()}")
pytestmark = pytest.mark.skipif(missing_reason() is not None, reason=str(missing_reason()))


@functools.lru_cache(maxsize=None)
def recorded_curations():
    """The deviations the record holds for sections that have no profile yet, with the shipped profiles' own (read
    once for every page)."""
    return import_pages().recorded_curations(
        _import_profile.curations_by_section(_import_profile.collection_profiles()))


def reason(refusal: str) -> str:
    """A refusal without its '<page> line N (<text>): ' reference."""
    return re.sub(r"^[^:]*?line \d+(?: \([^)]*\))?: ", "", refusal)


@pytest.mark.parametrize("page", RECORD["pages"], ids=lambda p: os.path.basename(p["path"]))
def test_each_page_imports_as_recorded(page) -> None:
    """Every section imports under the recorded id or is refused with the recorded reason. The id is the importer's
    own (with the generation suffix where a January profile has it), unless the section keeps the id of its
    previous version's profile (``kept``: its previous title, recorded)."""
    name = os.path.basename(page["path"])
    path = Path(str(PAGES)) / name
    if not path.is_file():
        pytest.fail(f"{path} is missing: read {page['path']} at {page['commit']}")
    text = path.read_text(encoding="utf-8")
    assert len(text) == page["characters"], f"{name} is not the version read at {page['commit']}"
    if page.get("refused_page"):
        with pytest.raises(ImportRefusal) as refused:
            read_document(text, name)
        assert page["refused_page"].startswith(str(refused.value).split(": ", 1)[1])
        assert not page.get("imported") and not page.get("refused")
        return
    doc = read_document(text, name)
    curations = recorded_curations()
    january = import_pages().january_ids()
    kept = {**(page.get("kept") or {}), **(page.get("ids") or {})}
    imported, refused = {}, {}
    for section in doc.sections:
        try:
            own = _import_profile.import_section(doc, section, curations, strict=False).id
        except ImportRefusal as exc:
            refused[section.title] = reason(str(exc))
            continue
        recorded = (page.get("imported") or {}).get(section.title)
        imported[section.title] = recorded if section.title in kept else import_pages().shipped_id(own, january)
    assert imported == (page.get("imported") or {})
    assert refused == (page.get("refused") or {})


def test_every_retired_profile_is_marked_and_selectable() -> None:
    """A section gone from its page keeps its profile, marked retired with the record's reason; a configuration a
    page changed stays as ``<id>_at_<commit>``, retired and superseded by ``<id>``."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import load_profile

    shipped = {pid for p in RECORD["pages"] for pid in (p.get("imported") or {}).values()}
    for pid, entry in (RECORD.get("retired") or {}).items():
        profile = load_profile(pid)
        assert profile.retired == dict(entry), pid
        assert pid not in shipped
        assert entry.get("superseded_by") in (None, *shipped)
    for pid in _import_profile.collection_profiles():
        if "_at_" in pid:
            profile = load_profile(pid)
            current = pid.rsplit("_at_", 1)[0]
            assert profile.retired["superseded_by"] == current, pid
            assert current in shipped, pid
            assert profile.source["commit"].startswith(pid.rsplit("_at_", 1)[1]), pid


def test_the_shipped_profiles_are_the_importers_output() -> None:
    """profiles/<id>.yml of every imported configuration is, byte for byte, what scripts/import_pages.py writes."""
    written = import_pages().profiles(Path(str(PAGES)))
    # A configuration a page repeats under another title is one profile.
    assert len(written) == len({pid for p in RECORD["pages"] for pid in (p.get("imported") or {}).values()})
    profiles = Path(__file__).parents[2] / "profiles"
    stale = [pid for pid, text in written.items()
             if not (profiles / f"{pid}.yml").is_file() or (profiles / f"{pid}.yml").read_text(encoding="utf-8") != text]
    assert not stale, f"run SGLANG_UPSTREAM_PAGES=... scripts/import_pages.py write: {stale}"


def test_behind_names_the_profiles_a_newer_page_changes(tmp_path) -> None:
    """``scripts/import_pages.py behind``: the recorded pages are as recorded; a page changed upstream (one flag
    value, one new environment variable) names its profile and the change per role, and nothing else."""
    lines = import_pages().behind(Path(str(PAGES)))
    for page in RECORD["pages"]:
        name = os.path.basename(page["path"])
        assert any(line.startswith(name) and line.endswith(f": as recorded ({page['commit'][:12]})") for line in lines)
    page = next(p for p in RECORD["pages"] if p["path"].endswith("/qwen3_8b.mdx"))
    text = (Path(str(PAGES)) / "qwen3_8b.mdx").read_text(encoding="utf-8")
    title = "Qwen3-8B W8A8 1P IN3K5 OUT1K5 5ms"
    start = text.index(f"### {title}")
    end = text.index("\n### ", start + 1)
    section = text[start:end]
    changed = section.replace("--mem-fraction-static 0.", "--mem-fraction-static 0.5", 1).replace(
        "export HCCL_OP_EXPANSION_MODE=AIV\n", "export HCCL_OP_EXPANSION_MODE=AIV\nexport STREAMS_PER_DEVICE=32\n", 1)
    assert changed != section
    (tmp_path / "qwen3_8b.mdx").write_text(text[:start] + changed + text[end:], encoding="utf-8")
    lines = import_pages().behind(tmp_path)
    assert lines[0] == f"qwen3_8b.mdx: changed since {page['commit'][:12]}"
    pid = page["imported"][title]
    at = lines.index(f"  {title}: {pid} is behind:")
    diff = [line.strip() for line in lines[at + 1:] if line.startswith("    ")]
    assert any(line.startswith("mixed flags: --mem-fraction-static ") for line in diff)
    assert "mixed env: STREAMS_PER_DEVICE added (32)" in diff
    assert all(line.endswith("up to date") for line in lines[1:] if line.startswith("  ") and title not in line
               and not line.startswith("    "))
