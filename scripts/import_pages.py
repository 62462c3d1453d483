"""The shipped profiles of SGLang's current Ascend pages, written by the importer from the pages read at the commits
tests/golden/upstream_pages.yml records (the pages stay out of the repository: SGLANG_UPSTREAM_PAGES names a
directory holding each under its base name).

  SGLANG_UPSTREAM_PAGES=DIR .venv/bin/python scripts/import_pages.py write   # (re)write profiles/<id>.yml
  SGLANG_UPSTREAM_PAGES=DIR .venv/bin/python scripts/import_pages.py check   # exit 1 if a shipped one differs
  .venv/bin/python scripts/import_pages.py behind NEWER                       # which shipped profiles are behind
  .venv/bin/python scripts/import_pages.py behind NEWER --record              # ... and record what it found

``behind NEWER`` reads a folder of pages (each under its base name, as found upstream; a MANIFEST.yml there, with
``file``, ``path`` and ``commit`` per page, names where and at which commit) and prints, page by page and section
by section, which shipped profiles are behind and how (flags and environment per role, benchmark, dataset,
release), which sections are new (the id the importer gives them) or refused (why), and which shipped profiles
no section of the page holds any more.  With ``--record`` it also writes what it found into
tests/golden/upstream_pages.yml: each changed page's new path (``follows`` its old one), commit and characters,
``kept`` for the sections whose title changed, the new sections' ids, the refusals, a new page appended, and
``retired`` for the profiles of sections gone; the deviations, ``ids``, comments and everything else written by
hand stay as they are.  So ``behind NEWER --record`` then ``SGLANG_UPSTREAM_PAGES=NEWER ... write`` is the whole
update (read the printed differences first: a deviation a page fixed is reported, not removed).

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
import re
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


@dataclasses.dataclass
class Found:
    """One section of a newer page: ``kind`` is current (a shipped profile holds it), new or refused."""

    title: str
    kind: str
    pid: str = ""
    previous: str = ""  # the title the shipped profile was read under, when the page retitled the section
    diff: list[str] = dataclasses.field(default_factory=list)
    stale: list[Any] = dataclasses.field(default_factory=list)
    reason: str = ""


@dataclasses.dataclass
class FoundPage:
    file: str
    page: dict[str, Any] | None  # the record's entry (None: a new page)
    path: str
    commit: str
    characters: int
    status: str  # as recorded, refused, new page, changed
    refusal: str = ""
    sections: list[Found] = dataclasses.field(default_factory=list)
    gone: list[str] = dataclasses.field(default_factory=list)  # shipped ids no section holds any more


def without_line(refusal: str) -> str:
    """A refusal without its '<page> line N (<text>): ' reference, as the record keeps it."""
    return re.sub(r"^[^:]*?line \d+(?: \([^)]*\))?: ", "", refusal)


def findings(newer: Path, record: Mapping[str, Any] | None = None) -> list[FoundPage]:
    """Page by page, section by section: what a folder of newer pages changes in the shipped profiles."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.importer._import_doc import ImportRefusal, anchor_of

    record = record or RECORD
    collection = _import_profile.collection_profiles(str(ROOT / "profiles"))
    january = {pid for pid, data in collection.items() if not (data.get("source") or {}).get("generation")}
    curations = recorded_curations(_import_profile.curations_by_section(collection))
    manifest = _manifest(newer)
    by_name = {os.path.basename(p["path"]): p for p in record["pages"]}
    out: list[FoundPage] = []
    for file in sorted(f.name for f in newer.glob("*.mdx")):
        text = (newer / file).read_text(encoding="utf-8")
        page = by_name.get(file)
        where = manifest.get(file, {})
        found = FoundPage(file, page, str(where.get("path") or (page or {}).get("path") or file),
                          str(where.get("commit") or "unknown"), len(text), "changed" if page else "new page")
        out.append(found)
        if page is not None and len(text) == page["characters"] and where.get("commit") in (None, page["commit"]):
            found.status = "as recorded"
            continue
        try:
            doc = read_document(text, file)
        except ImportRefusal as exc:
            found.status, found.refusal = "refused", str(exc)
            continue
        shipped = dict((page or {}).get("imported") or {})
        anchors = {anchor_of(title): pid for title, pid in shipped.items()}
        anchors.update({anchor_of(prev): shipped[title] for title, prev in ((page or {}).get("kept") or {}).items()
                        if title in shipped})
        seen = set()
        origin = _import_profile.Origin(generation=record["generation"], repository=record["repository"],
                                        path=found.path, commit=found.commit, release=record["release"])
        for section in doc.sections:
            try:
                item = _import_profile.import_section(doc, section, curations, strict=False, origin=origin)
            except ImportRefusal as exc:
                found.sections.append(Found(section.title, "refused", reason=without_line(str(exc))))
                continue
            pid = shipped.get(section.title) or anchors.get(anchor_of(section.title))
            if pid is None:
                found.sections.append(Found(section.title, "new", shipped_id(item.id, january)))
                continue
            seen.add(pid)
            before = next(t for t, i in shipped.items() if i == pid)
            previous = "" if section.title in shipped else str(
                ((collection.get(pid) or {}).get("source") or {}).get("section") or before)
            found.sections.append(Found(section.title, "current", pid, previous,
                                        changes(item.data, collection.get(pid) or {}), item.stale))
        found.gone = sorted(set(shipped.values()) - seen)
    return out


def behind(newer: Path, found_pages: list[FoundPage] | None = None) -> list[str]:
    """What ``findings`` found, as the maintainer reads it."""
    lines: list[str] = []
    for found in found_pages if found_pages is not None else findings(newer):
        head = found.file + (f" at {found.commit[:12]}" if found.commit != "unknown" else "")
        if found.status == "as recorded":
            lines.append(f"{head}: as recorded ({found.page['commit'][:12]})")
            continue
        if found.status == "refused":
            lines.append(f"{head}: refused: {found.refusal}")
            continue
        lines.append(f"{head}: " + ("new page" if found.page is None else
                                    f"changed since {found.page['commit'][:12]}"))
        for sec in found.sections:
            if sec.kind == "refused":
                lines.append(f"  {sec.title}: refused: {sec.reason}")
            elif sec.kind == "new":
                lines.append(f"  {sec.title}: new section ({sec.pid})")
            else:
                lines.append(f"  {sec.title}: {sec.pid} " + ("up to date" if not sec.diff else "is behind:"))
                lines += [f"    {line}" for line in sec.diff]
                lines += [f"    recorded deviation no longer applies: {d.get('seed')!r}" for d in sec.stale]
        lines += [f"  {pid}: no section of the page holds it any more (retire it, or record its new title)"
                  for pid in found.gone]
    return lines


# ------------------------------------------------------------------ the record, updated in place (``--record``)
# The record is edited as text, key by key, so that what a maintainer wrote by hand (comments, deviations, ``ids``,
# ``follows``) stays as written: only the keys the pages decide are rewritten.


def _page_blocks(lines: list[str]) -> dict[str, tuple[int, int]]:
    """Base name of each recorded page -> its lines [start, end) in the record."""
    starts = [i for i, line in enumerate(lines) if line.startswith("  - path: ")]
    top = [i for i, line in enumerate(lines) if re.match(r"^[a-z_]+:", line)]
    out = {}
    for n, at in enumerate(starts):
        end = min([i for i in starts[n + 1:] + top if i > at] or [len(lines)])
        while end > at and lines[end - 1].startswith("#"):
            end -= 1  # a comment before the next top-level key is that key's
        out[os.path.basename(lines[at].split(": ", 1)[1].strip())] = (at, end)
    return out


def _key_span(block: list[str], key: str, indent: int) -> tuple[int, int] | None:
    """Where ``key`` (at ``indent``) and its value are in ``block``: its line and the more indented ones after."""
    pad = " " * indent
    at = next((i for i, line in enumerate(block) if line.startswith(f"{pad}{key}:")
               or (indent == 4 and line.startswith(f"  - {key}:"))), None)
    if at is None:
        return None
    end = at + 1
    while end < len(block) and (block[end].startswith(" " * (indent + 2)) or not block[end].strip()):
        end += 1
    return at, end


def _dumped(key: str, value: Any, indent: int) -> list[str]:
    text = yaml_text({key: value}, width=116) if value != {} else f"{key}: {{}}\n"
    return [" " * indent + line for line in text.splitlines()]


def _set_key(block: list[str], key: str, value: Any, before: tuple[str, ...] = ()) -> list[str]:
    """``block`` with ``key`` (a page's key, at indent 4) set to ``value`` (None: removed); a new key goes before the
    first of ``before`` the block has, else at its end."""
    span = _key_span(block, key, 4)
    new = [] if value is None else _dumped(key, value, 4)
    if span is not None:
        if block[span[0]].startswith("  - "):
            new[0] = "  - " + new[0][4:]
        return block[:span[0]] + new + block[span[1]:]
    at = next((s[0] for s in (_key_span(block, k, 4) for k in before) if s is not None), len(block))
    return block[:at] + new + block[at:]


def _updated_page(block: list[str], found: FoundPage) -> list[str]:
    page = found.page or {}
    if found.path != page.get("path"):
        block = _set_key(block, "path", found.path)
        if page.get("path") and not page.get("follows"):
            block = _set_key(block, "follows", page["path"], ("deviations", "kept", "ids", "imported", "refused"))
    block = _set_key(block, "commit", found.commit)
    block = _set_key(block, "characters", found.characters)
    if found.status == "refused":
        block = _set_key(block, "refused_page", found.refusal.split(": ", 1)[-1])
        for key in ("kept", "imported", "refused"):
            block = _set_key(block, key, None)
        return block
    block = _set_key(block, "refused_page", None)
    kept = dict(page.get("kept") or {})
    kept.update({sec.title: sec.previous for sec in found.sections if sec.kind == "current" and sec.previous})
    titles = {sec.title for sec in found.sections}
    kept = {title: previous for title, previous in kept.items() if title in titles}
    block = _set_key(block, "kept", kept or None, ("ids", "imported", "refused"))
    imported = {sec.title: sec.pid for sec in found.sections if sec.kind != "refused"}
    block = _set_key(block, "imported", imported, ("refused",))
    return _set_key(block, "refused", {sec.title: sec.reason for sec in found.sections if sec.kind == "refused"})


def _retired(found: FoundPage) -> dict[str, dict[str, str]]:
    """The record's ``retired`` entries of the shipped profiles no section of the page holds any more."""
    titles = {pid: title for title, pid in ((found.page or {}).get("imported") or {}).items()}
    refused = {sec.title: sec.reason for sec in found.sections if sec.kind == "refused"}
    at = f"{found.file} at {found.commit[:12]}"
    return {pid: {"reason": f"the page's section no longer imports ({at}: {refused[titles[pid]]})"
                  if titles.get(pid) in refused else f"gone from the page ({at} no longer documents "
                  f"'{titles.get(pid, pid)}')"} for pid in found.gone}


def recorded(found: FoundPage) -> bool:
    """Whether ``--record`` writes a page: one the record holds that changed, or a new page that imports (a new
    page refused as a whole, such as the installation guide beside the best practices, is only printed)."""
    return found.status != "as recorded" and (found.page is not None or found.status != "refused")


def record_text(text: str, found_pages: list[FoundPage]) -> str:
    """The record with what ``findings`` found: each changed page's path, commit and characters, its sections'
    ids (new sections under the importer's id), the titles a retitled section keeps, its refusals; a new page
    appended; the profiles of sections gone under ``retired``."""
    lines = text.splitlines()
    retired: dict[str, dict[str, str]] = {}
    appended: list[str] = []
    for found in filter(recorded, found_pages):
        if found.page is None:
            entry = {"path": found.path, "commit": found.commit, "characters": found.characters}
            appended += _updated_page(["  " + line for line in yaml_text([entry]).splitlines()], found)
            continue
        start, end = _page_blocks(lines)[found.file]
        lines[start:end] = _updated_page(lines[start:end], found)
        retired.update(_retired(found))
    top = [i for i, line in enumerate(lines) if re.match(r"^[a-z_]+:", line)]
    pages_end = next((i for i in top if i > lines.index("pages:")), len(lines))
    while appended and lines[pages_end - 1].startswith("#"):
        pages_end -= 1
    lines[pages_end:pages_end] = appended
    if retired:
        span = _key_span(lines, "retired", 0)
        known = yaml.safe_load("\n".join(lines)).get("retired") or {}
        add = [line for pid, entry in retired.items() if pid not in known for line in _dumped(pid, entry, 2)]
        if span is None:
            gone = next((i for i, line in enumerate(lines) if line.startswith("gone:")), len(lines))
            lines[gone:gone] = ["retired:"] + add
        else:
            lines[span[1]:span[1]] = add
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    pages = os.environ.get("SGLANG_UPSTREAM_PAGES")
    args = [a for a in argv[1:] if not a.startswith("--fragment") and a != "--record"]
    if len(args) == 2 and args[0] == "behind" and Path(args[1]).is_dir():
        found = findings(Path(args[1]))
        print("\n".join(behind(Path(args[1]), found)))
        if "--record" in argv:
            path = ROOT / "tests" / "golden" / "upstream_pages.yml"
            path.write_text(record_text(path.read_text(encoding="utf-8"), found), encoding="utf-8")
            changed = [f.file for f in found if recorded(f)]
            print(f"recorded {len(changed)} page(s) in {path.relative_to(ROOT)}: {', '.join(changed) or 'none'}; "
                  f"now run: SGLANG_UPSTREAM_PAGES={args[1]} {Path(argv[0]).name} write")
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
