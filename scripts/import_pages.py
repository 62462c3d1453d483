"""The shipped profiles of SGLang's current Ascend pages, written by the importer from the pages read at the commits
tests/golden/upstream_pages.yml records (the pages stay out of the repository: SGLANG_UPSTREAM_PAGES names a
directory holding each under its base name).

  SGLANG_UPSTREAM_PAGES=DIR .venv/bin/python scripts/import_pages.py write   # (re)write profiles/<id>.yml
  SGLANG_UPSTREAM_PAGES=DIR .venv/bin/python scripts/import_pages.py check   # exit 1 if a shipped one differs

The record also holds the deviations of the pages' sections (what a page gets wrong and what is rendered instead,
with the reason): a section that needs one cannot import before it has a profile to carry it, so the record is
where they are written first; each profile then carries its own, where an operator's import finds them.

Each configuration that imports becomes profiles/<id>.yml with its source (repository, path, commit, section and
anchor) and the pages' release; an id a January profile already has gets the generation as a suffix
(deepseek_r1_a3_16c_pd_3k5_1k5_50ms_2026_11).  Then run scripts/profiles.py playbooks for the playbooks and tables.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import conftest  # noqa: E402,F401  (puts the collection on sys.path)  # pylint: disable=unused-import
from ansible_collections.ascend.sglang.plugins.plugin_utils.importer import _import_output, _import_profile  # noqa: E402
from ansible_collections.ascend.sglang.plugins.plugin_utils.importer._import_doc import read_document  # noqa: E402

RECORD = yaml.safe_load((ROOT / "tests" / "golden" / "upstream_pages.yml").read_text(encoding="utf-8"))


def shipped_id(pid: str, january: set[str]) -> str:
    return f"{pid}_{RECORD['generation'].replace('-', '_')}" if pid in january else pid


def recorded_curations(shipped: dict[str, _import_profile.Curation]) -> dict[str, _import_profile.Curation]:
    """The curations by section title, with the record's deviations in place of a shipped profile's."""
    out = dict(shipped)
    for page in RECORD["pages"]:
        for title, deviations in (page.get("deviations") or {}).items():
            out[title] = dataclasses.replace(out.get(title) or _import_profile.Curation(),
                                             deviations=[dict(d) for d in deviations])
    return out


def profiles(pages_dir: Path) -> dict[str, str]:
    """Profile id -> the file text the importer writes for it."""
    collection = _import_profile.collection_profiles(str(ROOT / "profiles"))
    january = {pid for pid, data in collection.items() if not (data.get("source") or {}).get("generation")}
    curations = recorded_curations(_import_profile.curations_by_section(collection))
    out = {}
    for page in RECORD["pages"]:
        name = os.path.basename(page["path"])
        text = (pages_dir / name).read_text(encoding="utf-8")
        if len(text) != page["characters"]:
            raise SystemExit(f"{pages_dir / name} is not {page['path']} at {page['commit']}")
        doc = read_document(text, name)
        origin = _import_profile.Origin(generation=RECORD["generation"], repository=RECORD["repository"],
                                        path=page["path"], commit=page["commit"], release=RECORD["release"])
        wanted = page.get("imported") or {}
        items: dict[str, _import_profile.Imported] = {}
        for section in doc.sections:
            if section.title not in wanted:
                continue
            item = _import_profile.import_section(doc, section, curations, strict=False, origin=origin)
            pid = shipped_id(item.id, january)
            data = dict(item.data, id=pid)
            if data.get("deployment_from"):
                data["deployment_from"] = shipped_id(data["deployment_from"], january)
            _import_profile.fold(items, dataclasses.replace(item, id=pid, data=data), name)
        for pid, item in items.items():
            out[pid] = _import_output.render(item, f"{RECORD['repository']}/{page['path']}@{page['commit'][:12]}")
    return out


def main(argv: list[str]) -> int:
    pages = os.environ.get("SGLANG_UPSTREAM_PAGES")
    if not pages or len(argv) != 2 or argv[1] not in ("write", "check"):
        print(__doc__)
        return 2
    stale = []
    for pid, text in profiles(Path(pages)).items():
        path = ROOT / "profiles" / f"{pid}.yml"
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            stale.append(pid)
            if argv[1] == "write":
                path.write_text(text, encoding="utf-8")
    print(f"{len(stale)} profile(s) {'written' if argv[1] == 'write' else 'differ'}: {', '.join(stale) or 'none'}")
    return 1 if stale and argv[1] == "check" else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
