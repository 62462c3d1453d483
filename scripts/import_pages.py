"""The shipped profiles of SGLang's current Ascend pages, written by the importer from the pages read at the commits
tests/golden/upstream_pages.yml records (the pages stay out of the repository: SGLANG_UPSTREAM_PAGES names a
directory holding each under its base name).

  SGLANG_UPSTREAM_PAGES=DIR .venv/bin/python scripts/import_pages.py write   # (re)write profiles/<id>.yml
  SGLANG_UPSTREAM_PAGES=DIR .venv/bin/python scripts/import_pages.py check   # exit 1 if a shipped one differs
  .venv/bin/python scripts/import_pages.py behind NEWER                       # which shipped profiles are behind

``behind NEWER`` reads a folder of pages (each under its base name, as found upstream; a MANIFEST.yml there, with
``file``, ``path`` and ``commit`` per page, names where and at which commit) and prints, page by page and section
by section, which shipped profiles are behind and how (flags and environment per role, benchmark, dataset,
release), which sections are new (the id the importer gives them) or refused (why), and which shipped profiles
no section of the page holds any more. It writes nothing: record what it found in tests/golden/upstream_pages.yml
(the page's new path, commit and characters, ``kept`` for the sections whose title changed, the new sections'
ids, the refusals, ``retired`` for the sections gone) and run ``write``.

The record also holds the deviations of the pages' sections (what a page gets wrong and what is rendered instead,
with the reason): a section that needs one cannot import before it has a profile to carry it, so the record is
where they are written first; each profile then carries its own, where an operator's import finds them.

Each configuration that imports becomes profiles/<id>.yml with its source (repository, path, commit, section and
anchor) and the pages' release, under the id the record gives it (``imported``): the importer's own id (an id a
January profile already has gets the generation as a suffix, deepseek_r1_a3_16c_pd_3k5_1k5_50ms_2026_11), or, for
a section of a page read before, the id its previous version shipped as (``kept``: the section -> its previous
title), so that an inventory naming the id follows the page.

``write`` keeps what it replaces: when the page changed a kept profile's configuration (flags, environment, roles,
benchmark, dataset, targets or release), the configuration shipped until then stays selectable as
``<id>_at_<commit>`` (the first 7 hex digits of the page commit it was read at), marked retired and superseded by
``<id>``, and the per-role differences go into the changelog fragment ``changelogs/fragments/<fragment>.yml``
(``--fragment NAME``, default ``upstream-pages``).  The profiles of sections gone upstream (``retired`` in the
record) stay, marked retired with the record's reason.  Then run scripts/profiles.py playbooks for the playbooks
and tables.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import Any, Mapping

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import conftest  # noqa: E402,F401  (puts the collection on sys.path)  # pylint: disable=unused-import
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._serialize import yaml_text  # noqa: E402
from ansible_collections.ascend.sglang.plugins.plugin_utils.importer import _import_output, _import_profile  # noqa: E402
from ansible_collections.ascend.sglang.plugins.plugin_utils.importer._import_doc import read_document  # noqa: E402

RECORD = yaml.safe_load((ROOT / "tests" / "golden" / "upstream_pages.yml").read_text(encoding="utf-8"))
# What a profile's configuration is: everything the planner renders from, not where it was read (title, source),
# what the page printed (published) or what the page got wrong (deviations: a page that fixes its own mistake
# changes nothing that runs).
NOT_CONFIGURATION = ("id", "title", "source", "published", "deviations", "retired")


def january_ids(directory: Path | None = None) -> set[str]:
    """The ids of the January documents' profiles (no generation in their source)."""
    collection = _import_profile.collection_profiles(str(directory or ROOT / "profiles"))
    return {pid for pid, data in collection.items() if not (data.get("source") or {}).get("generation")}


def shipped_id(pid: str, january: set[str]) -> str:
    return f"{pid}_{RECORD['generation'].replace('-', '_')}" if pid in january else pid


def recorded_curations(shipped: dict[str, _import_profile.Curation]) -> dict[str, _import_profile.Curation]:
    """The curations by section title, with the record's deviations in place of a shipped profile's; a section
    whose title changed (``kept``) gets the notes and corrections of its previous title, and the deviations the
    record gives it (none: what the previous version of the page got wrong may be fixed)."""
    out = dict(shipped)
    for page in RECORD["pages"]:
        for title, previous in (page.get("kept") or {}).items():
            if previous in shipped and title != previous:
                out[title] = dataclasses.replace(shipped[previous], deviations=[])
        for title, deviations in (page.get("deviations") or {}).items():
            out[title] = dataclasses.replace(out.get(title) or _import_profile.Curation(),
                                             deviations=[dict(d) for d in deviations])
    return out


def page_text(pages_dir: Path, page: Mapping[str, Any]) -> str:
    name = os.path.basename(page["path"])
    text = (pages_dir / name).read_text(encoding="utf-8")
    if len(text) != page["characters"]:
        raise SystemExit(f"{pages_dir / name} is not {page['path']} at {page['commit']}")
    return text


def profiles(pages_dir: Path) -> dict[str, str]:
    """Profile id -> the file text the importer writes for it."""
    collection = _import_profile.collection_profiles(str(ROOT / "profiles"))
    curations = recorded_curations(_import_profile.curations_by_section(collection))
    out = {}
    for page in RECORD["pages"]:
        wanted = page.get("imported") or {}
        if not wanted:
            continue
        doc = read_document(page_text(pages_dir, page), os.path.basename(page["path"]))
        origin = _import_profile.Origin(generation=RECORD["generation"], repository=RECORD["repository"],
                                        path=page["path"], commit=page["commit"], release=RECORD["release"])
        items: dict[str, _import_profile.Imported] = {}
        for section in doc.sections:
            if section.title not in wanted:
                continue
            item = _import_profile.import_section(doc, section, curations, strict=False, origin=origin)
            pid = wanted[section.title]
            _import_profile.fold(items, dataclasses.replace(item, id=pid, data=dict(item.data, id=pid)),
                                 os.path.basename(page["path"]))
        for pid, item in items.items():
            out[pid] = _import_output.render(item, f"{RECORD['repository']}/{page['path']}@{page['commit'][:12]}")
    return out


def configuration(data: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in NOT_CONFIGURATION}


def changes(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[str]:
    """What the page changed in a profile's configuration, one line each (flags and environment per role first)."""
    return _import_output.differences(configuration(new), configuration(old))


def dated_id(pid: str, old: Mapping[str, Any]) -> str:
    """The id the configuration shipped until now keeps: ``<id>_at_<first 7 hex digits of its page commit>``."""
    return f"{pid}_at_{str((old.get('source') or {}).get('commit', 'unknown'))[:7]}"


def retire(text: str, data: dict[str, Any], reason: str, superseded_by: str | None = None,
           pid: str | None = None) -> str:
    """A profile file marked retired (its header comment kept): still selectable, with why it is no longer the
    page's."""
    head = "".join(line for line in text.splitlines(keepends=True) if line.startswith("#"))
    data = dict(data, id=pid or data["id"])
    data["retired"] = {"reason": reason, **({"superseded_by": superseded_by} if superseded_by else {})}
    return head + yaml_text(data, width=120)


def write(pages_dir: Path, fragment: str) -> list[str]:
    """Write the shipped profiles, the dated copies of changed configurations, the retired marks and the changelog
    fragment; the ids written."""
    directory = ROOT / "profiles"
    written, notes = [], []
    for pid, text in profiles(pages_dir).items():
        path = directory / f"{pid}.yml"
        old_text = path.read_text(encoding="utf-8") if path.exists() else None
        if old_text == text:
            continue
        new = yaml.safe_load(text)
        if old_text is None:
            notes.append(f"{pid} - new: {new['title']} ({new['source']['path'].rsplit('/', 1)[-1]})")
        else:
            old = yaml.safe_load(old_text)
            diff = changes(new, old)
            # Only a new version of the page makes a dated copy: a change of the record (a deviation, an id) at the
            # same commit rewrites the profile in place.
            if diff and (old.get("source") or {}).get("commit") != new["source"]["commit"]:
                dated = dated_id(pid, old)
                if not (directory / f"{dated}.yml").exists():
                    (directory / f"{dated}.yml").write_text(retire(
                        old_text, old, f"the configuration of '{old.get('title')}' as "
                        f"{old['source']['path'].rsplit('/', 1)[-1]} gave it at {old['source']['commit'][:12]}; the page "
                        f"changed it at {new['source']['commit'][:12]}", pid, dated), encoding="utf-8")
                    written.append(dated)
                notes.append(f"{pid} - the page changed it (the previous configuration stays as {dated}): "
                             + "; ".join(diff))
        path.write_text(text, encoding="utf-8")
        written.append(pid)
    for pid, entry in (RECORD.get("retired") or {}).items():
        path = directory / f"{pid}.yml"
        old_text = path.read_text(encoding="utf-8")
        old = yaml.safe_load(old_text)
        marked = retire(old_text, {k: v for k, v in old.items() if k != "retired"}, entry["reason"],
                        entry.get("superseded_by"))
        if marked != old_text:
            path.write_text(marked, encoding="utf-8")
            written.append(pid)
            notes.append(f"{pid} - retired: {entry['reason']}")
    if notes:
        frag = ROOT / "changelogs" / "fragments" / f"{fragment}.yml"
        entries = [f"profiles - {n}" for n in notes]
        # A second run adds to the fragment: an entry of a profile written again replaces its earlier one.
        if frag.exists():
            mine = {e.split(" - ", 2)[1] for e in entries}
            entries = [e for e in (yaml.safe_load(frag.read_text(encoding="utf-8")) or {}).get("minor_changes") or []
                       if e.split(" - ", 2)[1] not in mine] + entries
        frag.write_text(yaml.safe_dump({"minor_changes": entries}, width=116, sort_keys=False, allow_unicode=True),
                        encoding="utf-8")
    return written


def _manifest(newer: Path) -> dict[str, dict[str, Any]]:
    path = newer / "MANIFEST.yml"
    if not path.is_file():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return {str(f.get("file")): dict(f) for f in data.get("files") or [] if isinstance(f, dict)}


def behind(newer: Path) -> list[str]:
    """Page by page, section by section: what a folder of newer pages changes in the shipped profiles."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.importer._import_doc import ImportRefusal, anchor_of

    collection = _import_profile.collection_profiles(str(ROOT / "profiles"))
    january = {pid for pid, data in collection.items() if not (data.get("source") or {}).get("generation")}
    curations = recorded_curations(_import_profile.curations_by_section(collection))
    manifest = _manifest(newer)
    by_name = {os.path.basename(p["path"]): p for p in RECORD["pages"]}
    # A page that moved upstream keeps its base name or is found by the path it used to have (``follows``).
    lines: list[str] = []
    for file in sorted(f.name for f in newer.glob("*.mdx")):
        text = (newer / file).read_text(encoding="utf-8")
        page = by_name.get(file)
        where = manifest.get(file, {})
        head = f"{file}" + (f" at {str(where['commit'])[:12]}" if where.get("commit") else "")
        if page is not None and len(text) == page["characters"] and where.get("commit") in (None, page["commit"]):
            lines.append(f"{head}: as recorded ({page['commit'][:12]})")
            continue
        try:
            doc = read_document(text, file)
        except ImportRefusal as exc:
            lines.append(f"{head}: refused: {exc}")
            continue
        lines.append(f"{head}: " + ("new page" if page is None else f"changed since {page['commit'][:12]}"))
        shipped = dict((page or {}).get("imported") or {})
        anchors = {anchor_of(title): pid for title, pid in shipped.items()}
        anchors.update({anchor_of(prev): shipped[title] for title, prev in ((page or {}).get("kept") or {}).items()
                        if title in shipped})
        seen = set()
        origin = _import_profile.Origin(
            generation=RECORD["generation"], repository=RECORD["repository"],
            path=str(where.get("path") or (page or {}).get("path") or file), commit=str(where.get("commit") or "unknown"),
            release=RECORD["release"])
        for section in doc.sections:
            try:
                item = _import_profile.import_section(doc, section, curations, strict=False, origin=origin)
            except ImportRefusal as exc:
                lines.append(f"  {section.title}: refused: {exc}")
                continue
            pid = shipped.get(section.title) or anchors.get(anchor_of(section.title))
            if pid is None:
                lines.append(f"  {section.title}: new section ({shipped_id(item.id, january)})")
                continue
            seen.add(pid)
            diff = changes(item.data, collection.get(pid) or {})
            lines.append(f"  {section.title}: {pid} " + ("up to date" if not diff else "is behind:"))
            lines += [f"    {line}" for line in diff]
            lines += [f"    recorded deviation no longer applies: {d.get('seed')!r}" for d in item.stale]
        for pid in sorted(set(shipped.values()) - seen):
            lines.append(f"  {pid}: no section of the page holds it any more (retire it, or record its new title)")
    return lines


def main(argv: list[str]) -> int:
    pages = os.environ.get("SGLANG_UPSTREAM_PAGES")
    args = [a for a in argv[1:] if not a.startswith("--fragment")]
    if len(args) == 2 and args[0] == "behind" and Path(args[1]).is_dir():
        print("\n".join(behind(Path(args[1]))))
        return 0
    fragment = next((a.split("=", 1)[1] for a in argv[1:] if a.startswith("--fragment=")), "upstream-pages")
    if not pages or len(args) != 1 or args[0] not in ("write", "check"):
        print(__doc__)
        return 2
    if args[0] == "write":
        written = write(Path(pages), fragment)
        print(f"{len(written)} profile(s) written: {', '.join(written) or 'none'}")
        return 0
    stale = [pid for pid, text in profiles(Path(pages)).items()
             if not (ROOT / "profiles" / f"{pid}.yml").exists()
             or (ROOT / "profiles" / f"{pid}.yml").read_text(encoding="utf-8") != text]
    print(f"{len(stale)} profile(s) differ: {', '.join(stale) or 'none'}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
