"""Profiles from SGLang's nightly Ascend performance tests (test/registered/{npu,ascend}/performance/ of
sgl-project/sglang), read by the importer as it reads a page (plugin_utils/importer/_import_nightly.py: the files
are parsed, never run).  The test files stay out of the repository: DIR holds them under their repository paths.

  .venv/bin/python scripts/import_nightly.py DIR           # print what each test gives; write nothing
  .venv/bin/python scripts/import_nightly.py DIR --write   # also write profiles/<id>.yml for the uncovered ones

tests/golden/upstream_nightly.yml records each test's commit and the model name the pages use for its folder (a
test names its model only by the harness's path constant).  For each test file:

- an accuracy variant (_gpqa, _aime*) or a configuration the importer refuses: the reason;
- a configuration a shipped profile of the pages covers (same model, hardware, mode, server devices, dataset and
  TPOT target): every difference in flags and environment between the page's profile and the test, role by role
  (the profile follows the page);
- any other: a profile of its own, its source the repository, the test's path and commit (kind: nightly), its
  published block the test's thresholds.

Then run scripts/profiles.py playbooks for the playbooks and tables.
"""

from __future__ import annotations

import argparse
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
    ds = data.get("dataset") or {}
    model = str(data.get("model", "")).lower()
    return (model, data.get("hardware"), data.get("deploy_mode"), devices(data), ds.get("input_len"),
            ds.get("output_len"), ds.get("shared_prefix_ratio"), float(data.get("tpot_target_ms") or 0))


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


def import_test(path: str, text: str, entry: Mapping[str, Any], rec: Mapping[str, Any]) -> _import_profile.Imported:
    """The test's profile. The record's deviations for the test (what it gets wrong, in the text of the deployment
    or benchmark the importer writes for it) apply as a page section's do, and the profile carries them."""
    # Harness constants the test imports whose value the record gives (with the reason it is known).
    constants = {str(k): v["value"] for k, v in (entry.get("constants") or {}).items()}
    doc = _import_nightly.read_nightly(text, path, model_of(path, rec), constants)
    test = _import_nightly.parse_test(text, path, constants)
    commit = str(entry["commit"])
    origin = _import_profile.Origin(generation=GENERATION, repository=rec["repository"], path=path, commit=commit,
                                    release=str(rec["release"]))
    curation = _import_profile.Curation(deviations=[dict(d) for d in entry.get("deviations") or []])
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


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--write", action="store_true", help="write the profiles of the uncovered configurations")
    opts = parser.parse_args(argv[1:])
    rec = record()
    entries = {str(t["path"]): t for t in rec.get("tests") or []}
    pages = page_profiles()
    by_key: dict[tuple, list[str]] = {}
    for pid, data in pages.items():
        by_key.setdefault(coverage_key(data), []).append(pid)
    counts = {"seen": 0, "covered": 0, "new": 0, "refused": 0}
    for file in sorted(opts.folder.rglob("*.py")):
        path = file.relative_to(opts.folder).as_posix()
        counts["seen"] += 1
        try:
            if path not in entries:
                raise ImportRefusal(f"{path}: not in {RECORD_PATH.name} (its commit is recorded there)")
            item = import_test(path, file.read_text(encoding="utf-8"), entries[path], rec)
        except ImportRefusal as exc:
            counts["refused"] += 1
            print(f"REFUSED {path}: {str(exc).replace(path + ' ', '').replace(path + ': ', '')}")
            continue
        covering = by_key.get(coverage_key(item.data), [])
        if covering:
            counts["covered"] += 1
            print(f"COVERED {path} by {', '.join(covering)} (the profile follows the page):")
            for pid in covering:
                # Each covering profile (a January document's and the current page's may both have the section).
                print(f"  against {pid}:")
                for line in role_differences(pages[pid], item.data) or ["no difference in flags or environment"]:
                    print(f"    {line}")
            continue
        counts["new"] += 1
        print(f"NEW {path} -> {item.id}")
        if opts.write:
            text = _import_output.render(item, f"{rec['repository']}/{path}@{str(entries[path]['commit'])[:12]}")
            (ROOT / "profiles" / f"{item.id}.yml").write_text(text, encoding="utf-8")
    print(", ".join(f"{k}: {v}" for k, v in counts.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
