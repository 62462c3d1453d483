"""Profiles from SGLang's nightly Ascend performance tests (test/registered/{npu,ascend}/performance/ of
sgl-project/sglang), read by the importer as it reads a page (plugin_utils/importer/_import_nightly.py: the files
are parsed, never run).  The test files stay out of the repository: DIR holds them under their repository paths.

  .venv/bin/python scripts/import_nightly.py DIR           # print what each test gives; write nothing
  .venv/bin/python scripts/import_nightly.py DIR --write   # also write profiles/<id>.yml for the uncovered ones
  .venv/bin/python scripts/import_nightly.py DIR --write --record   # and the record entries of the files read

--record rewrites, in tests/golden/upstream_nightly.yml, the entry of each file of DIR (read: imported and its
outcome: profile, covered_by with the differences, or reason); the entries of the files DIR does not hold stay
as they are, and so do each entry's constants and deviations.

tests/golden/upstream_nightly.yml records each test's commit and the model name the pages use for its folder (a
test names its model only by the harness's path constant).  For each test file:

- an accuracy variant (_gpqa, _aime*) or a configuration the importer refuses: the reason;
- a configuration a shipped profile of the pages covers (same model, hardware, mode, server devices, dataset and
  TPOT target): every difference in flags and environment between the page's profile and the test, role by role
  (the profile follows the page);
- a configuration another test already gives a profile (the same id: model, hardware, cards, mode, dataset and
  TPOT target): a duplicate of that test, with what differs between the two;
- any other: a profile of its own, its source the repository, the test's path and commit (kind: nightly), its
  published block the test's thresholds.

Then run scripts/profiles.py playbooks for the playbooks and tables.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any, Mapping

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import conftest  # noqa: E402,F401  (puts the collection on sys.path)  # pylint: disable=unused-import
from ansible_collections.ascend.sglang.plugins.plugin_utils.importer import (  # noqa: E402
    _import_nightly, _import_output, _import_profile)
from ansible_collections.ascend.sglang.plugins.plugin_utils.importer._import_doc import ImportRefusal  # noqa: E402

RECORD_PATH = ROOT / "tests" / "golden" / "upstream_nightly.yml"
GENERATION = "nightly"


def record() -> dict[str, Any]:
    return yaml.safe_load(RECORD_PATH.read_text(encoding="utf-8"))


def model_of(path: str, rec: Mapping[str, Any]) -> str:
    folder = path.rsplit("/", 2)[-2]
    models = rec.get("models") or {}
    if folder not in models:
        raise ImportRefusal(f"{path}: the record names no model for the folder '{folder}' (models: in "
                            f"{RECORD_PATH.name})")
    return str(models[folder])


def devices(data: Mapping[str, Any]) -> int:
    """NPU devices of the servers (instances x tp x pp): the test names and the pages count cards differently."""
    total = 0
    for role, spec in (data.get("roles") or {}).items():
        if role == "router":
            continue
        args = spec.get("args") or {}
        tp = args.get("--tp-size", args.get("--tp", 1))
        total += int(spec.get("documented_instances") or 1) * int(tp) * int(args.get("--pp-size", 1))
    return total


def coverage_key(data: Mapping[str, Any]) -> tuple:
    """What a page's profile and a test must share to be one configuration (the model and the TPOT target are
    matched apart)."""
    ds = data.get("dataset") or {}
    return (data.get("hardware"), data.get("deploy_mode"), devices(data), ds.get("input_len"),
            ds.get("output_len"), ds.get("shared_prefix_ratio"))


# The TPOT target a test's file name gives (..._50ms, ..._17_9ms, ..._50ms_a2).
NAME_TPOT = re.compile(r"_(\d+)(?:_(\d+))?ms(?:_a2)?\.py$")


def same_target(page: Mapping[str, Any], test: Mapping[str, Any], path: str) -> bool:
    """The page's TPOT target is the test's: its asserted threshold, or the target its file name gives (a test
    often asserts the figure it measured, 50.36 ms, under the page's target, _50ms)."""
    target = float(page.get("tpot_target_ms") or 0)
    if target == float(test.get("tpot_target_ms") or 0):
        return True
    named = NAME_TPOT.search(path)
    return bool(named) and target == float(named.group(1) + ("." + named.group(2) if named.group(2) else ""))


def target_difference(page: Mapping[str, Any], test: Mapping[str, Any]) -> list[str]:
    """The TPOT target where the test asserts another figure than the page's."""
    mine, theirs = page.get("tpot_target_ms"), test.get("tpot_target_ms")
    return [] if float(mine or 0) == float(theirs or 0) else [f"tpot_target_ms: {mine} -> {theirs}"]


def same_model(one: Any, other: Any) -> bool:
    """The pages write one model several ways (Qwen3-30B and Qwen3-30B-A3B, mimo_v2_flash and MiMo-V2-Flash):
    the same words, lower case, one name the start of the other (Qwen3-8B is not Qwen3-80B...)."""
    words = [re.split(r"[-_ ]+", str(name).strip().lower()) for name in (one, other)]
    shortest = min(len(w) for w in words)
    return shortest > 0 and words[0][:shortest] == words[1][:shortest]


def page_profiles() -> dict[str, dict[str, Any]]:
    """The shipped profiles that come from a page (not from a nightly test), resolved from their donor."""
    out = {}
    for pid, data in _import_profile.collection_profiles(str(ROOT / "profiles")).items():
        if (data.get("source") or {}).get("kind") == "nightly":
            continue
        donor = data.get("deployment_from")
        if donor:
            base = _import_profile.collection_profiles(str(ROOT / "profiles")).get(donor) or {}
            data = {**data, "roles": base.get("roles"), "host_tuning": base.get("host_tuning")}
        out[pid] = data
    return out


def constants_of(entry: Mapping[str, Any], rec: Mapping[str, Any]) -> dict[str, Any]:
    """Harness constants the test imports whose value the record gives (with the reason it is known): the
    record's own hold for every test (one harness), an entry's override them."""
    merged = {**(rec.get("constants") or {}), **(entry.get("constants") or {})}
    return {str(k): v["value"] for k, v in merged.items()}


def deviations_of(section: Any, entry: Mapping[str, Any], rec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The entry's deviations, and those of the record that hold for every test (the same abbreviated flag in
    many files) where the text the importer wrote for this test holds their seed."""
    own = [dict(d) for d in entry.get("deviations") or []]
    texts = {"deploy": section.deploy.text, "bench": section.bench}
    for dev in own:  # the entry's apply first: a shared seed they rewrite is no longer there
        part = str(dev.get("part"))
        texts[part] = texts.get(part, "").replace(str(dev["seed"]), str(dev["rendered"]))
    shared = [dict(d) for d in rec.get("deviations") or [] if str(d.get("seed")) in texts.get(str(d.get("part")), "")]
    return own + shared


def import_test(path: str, text: str, entry: Mapping[str, Any], rec: Mapping[str, Any]) -> _import_profile.Imported:
    """The test's profile. The record's deviations for the test (what it gets wrong, in the text of the deployment
    or benchmark the importer writes for it) apply as a page section's do, and the profile carries them."""
    constants = constants_of(entry, rec)
    doc = _import_nightly.read_nightly(text, path, model_of(path, rec), constants)
    test = _import_nightly.parse_test(text, path, constants)
    commit = str(entry["commit"])
    origin = _import_profile.Origin(generation=GENERATION, repository=rec["repository"], path=path, commit=commit,
                                    release=str(rec["release"]))
    curation = _import_profile.Curation(deviations=deviations_of(doc.sections[0], entry, rec))
    item = _import_profile.import_section(doc, doc.sections[0], {doc.sections[0].title: curation}, origin=origin)
    data = dict(item.data)
    data["title"] = doc.id
    data["source"] = {"kind": "nightly", "generation": GENERATION, "repository": rec["repository"], "path": path,
                      "commit": commit, "test": test.test_class}
    data["published"] = {"nightly": _import_nightly.thresholds_of(test)}
    return _import_profile.Imported(id=item.id, section=item.section, data=data)


def role_differences(page: Mapping[str, Any], test: Mapping[str, Any]) -> list[str]:
    """Flags and environment, role by role: the page's value -> the test's."""
    out = []
    for role in dict.fromkeys([*(page.get("roles") or {}), *(test.get("roles") or {})]):
        mine, theirs = (test.get("roles") or {}).get(role) or {}, (page.get("roles") or {}).get(role) or {}
        for part in ("args", "env"):
            out += [f"{role} {line}" for line in _import_output._map_diff(part, mine.get(part) or {},
                                                                          theirs.get(part) or {})]
    return out


class Run:
    """One pass over a folder: the shipped profiles to compare with, and each file's outcome as the record
    writes it (path -> {profile | covered_by and differences | reason})."""

    def __init__(self, rec: Mapping[str, Any], write: bool) -> None:
        self.rec, self.write = rec, write
        self.entries = {str(t["path"]): t for t in rec.get("tests") or []}
        self.pages = page_profiles()
        self.by_key: dict[tuple, list[str]] = {}
        for pid, data in self.pages.items():
            self.by_key.setdefault(coverage_key(data), []).append(pid)
        # A profile id belongs to the test the record gives it to, else to the first file of the run giving it.
        self.claims = {str(t["profile"]): str(t["path"]) for t in rec.get("tests") or [] if t.get("profile")}
        self.made: dict[str, dict[str, Any]] = {}
        self.outcomes: dict[str, dict[str, Any]] = {}
        self.counts = {"seen": 0, "covered": 0, "new": 0, "duplicate": 0, "refused": 0}

    def read(self, path: str, text: str) -> None:
        self.counts["seen"] += 1
        try:
            if path not in self.entries:
                raise ImportRefusal(f"{path}: not in {RECORD_PATH.name} (its commit is recorded there)")
            item = import_test(path, text, self.entries[path], self.rec)
        except ImportRefusal as exc:
            message = str(exc).replace(path + " ", "").replace(path + ": ", "")
            self.counts["refused"] += 1
            print(f"REFUSED {path}: {message}")
            if path in self.entries:
                self.outcomes[path] = {"reason": f"refused by the importer: {message}"}
            return
        # A page profile of the same id covers the test too (same model, hardware, cards, mode, dataset label and
        # target: the page writes 64K as 65535 tokens, the test 65536); a page's profile is never overwritten.
        covering = [pid for pid in self.by_key.get(coverage_key(item.data), [])
                    if same_model(self.pages[pid].get("model"), item.data.get("model"))
                    and same_target(self.pages[pid], item.data, path)]
        covering += [item.id] if item.id in self.pages and item.id not in covering else []
        if covering:
            self.covered(path, item, covering)
        elif self.claims.setdefault(item.id, path) != path:
            self.duplicate(path, item)
        else:
            self.new(path, item)

    def covered(self, path: str, item: _import_profile.Imported, covering: list[str]) -> None:
        self.counts["covered"] += 1
        print(f"COVERED {path} by {', '.join(covering)} (the profile follows the page):")
        differences = {}
        for pid in covering:
            # Each covering profile (a January document's and the current page's may both have the section).
            differences[pid] = target_difference(self.pages[pid], item.data) + role_differences(self.pages[pid], item.data)
            print(f"  against {pid}:")
            for line in differences[pid] or ["no difference in flags or environment"]:
                print(f"    {line}")
        self.outcomes[path] = {"covered_by": covering, **({"differences": {k: v for k, v in differences.items() if v}}
                                                          if any(differences.values()) else {})}

    def duplicate(self, path: str, item: _import_profile.Imported) -> None:
        self.counts["duplicate"] += 1
        other = self.claims[item.id]
        shipped = self.made.get(item.id) or _import_profile.collection_profiles(str(ROOT / "profiles")).get(item.id)
        differences = role_differences(shipped or {}, item.data) if shipped else []
        what = "; it differs in " + ", ".join(differences) if differences else "; no difference in flags or environment"
        print(f"DUPLICATE {path} of {other} (profile {item.id}){what}")
        self.outcomes[path] = {"reason": f"duplicate of {other}: the same model, hardware, cards, mode, dataset and "
                                         f"TPOT target (profile {item.id}){what}"}

    def new(self, path: str, item: _import_profile.Imported) -> None:
        self.counts["new"] += 1
        self.made[item.id] = item.data
        print(f"NEW {path} -> {item.id}")
        self.outcomes[path] = {"profile": item.id}
        if self.write:
            commit = str(self.entries[path]["commit"])
            text = _import_output.render(item, f"{self.rec['repository']}/{path}@{commit[:12]}")
            (ROOT / "profiles" / f"{item.id}.yml").write_text(text, encoding="utf-8")


class _Indented(yaml.SafeDumper):
    """Sequences indented under their key, as the rest of the collection's YAML (yamllint)."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def write_record(outcomes: Mapping[str, Mapping[str, Any]]) -> None:
    """The entries of the files read get ``read: imported`` and their outcome; the others stay as they are."""
    text = RECORD_PATH.read_text(encoding="utf-8")
    rec = yaml.safe_load(text)
    tests = []
    for entry in rec["tests"]:
        if entry["path"] in outcomes:
            outcome_keys = ("path", "commit", "read", "profile", "covered_by", "reason", "differences")
            kept = {k: v for k, v in entry.items() if k not in outcome_keys}
            entry = {"path": entry["path"], "commit": entry["commit"], "read": "imported",
                     **outcomes[entry["path"]], **kept}
        tests.append(entry)
    head = text[:text.index("\ntests:\n") + 1]
    # 122: the width the record was first written at (its lines stay where they were).
    body = yaml.dump({"tests": tests}, Dumper=_Indented, sort_keys=False, width=122, allow_unicode=True)
    RECORD_PATH.write_text(head + body, encoding="utf-8")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--write", action="store_true", help="write the profiles of the uncovered configurations")
    parser.add_argument("--record", action="store_true",
                        help=f"rewrite the entries of the files read in {RECORD_PATH.name}")
    opts = parser.parse_args(argv[1:])
    run = Run(record(), opts.write)
    for file in sorted(opts.folder.rglob("*.py")):
        run.read(file.relative_to(opts.folder).as_posix(), file.read_text(encoding="utf-8"))
    if opts.record:
        write_record(run.outcomes)
    print(", ".join(f"{k}: {v}" for k, v in run.counts.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
