"""``scripts/import_pages.py behind NEWER --record`` on synthetic pages (the unit tests' Demo pages, never SGLang's
own text): the record gets each changed page's new path, commit and size, its sections' ids, a retitled section's
previous title, the refusals, a new page and the retired profiles, and keeps what a maintainer wrote by hand."""

from __future__ import annotations

from pathlib import Path

import yaml

from pages_script import import_pages
from ansible_collections.ascend.sglang.tests.unit.import_pages import MDX, MDX_PIPES

PD = "Demo-R1 W4A8 1P1D 16P IN3K5 OUT1K5 50ms"
RECORD = f"""# A maintainer's comment at the top.
repository: sgl-project/sglang
generation: 2026-11
release: 0.5.16
pages:
  - path: docs/old/demo_r1.mdx
    commit: {"a" * 40}
    characters: 10
    deviations:
      {PD}:
        - part: bench
          seed: --port 6688
          rendered: --port 6688
          reason: written by hand
    # A maintainer's comment inside a page.
    imported:
      {PD.lower()}: demo_r1_pd_shipped
      Demo-R1 W4A8 8P IN32K OUT1K 50ms: demo_r1_gone
    refused: {{}}
retired:
  demo_r1_older:
    reason: retired by hand
gone:
  docs/old/demo_tutorial.mdx: a page that left the set
"""


def test_behind_record_writes_what_it_found(tmp_path: Path) -> None:
    pages = import_pages()
    # One section of the page now gives its benchmark an argument no bench_serving takes: it is refused.
    prefix = MDX_PIPES.index("### Demo-R1 W4A8 8P IN64K OUT1K PREFIX90")
    bench = MDX_PIPES.index("--random-input-len 65536", prefix)
    changed = MDX_PIPES[:bench] + "--max-attempts 5 " + MDX_PIPES[bench:]
    (tmp_path / "demo_r1.mdx").write_text(changed, encoding="utf-8")
    (tmp_path / "demo_32b.mdx").write_text(MDX, encoding="utf-8")
    # A reference page beside the best practices is refused as a whole: printed, not recorded.
    (tmp_path / "glossary.mdx").write_text("---\ntitle: Glossary\n---\n\n## Terms\n", encoding="utf-8")
    (tmp_path / "MANIFEST.yml").write_text(yaml.safe_dump({"files": [
        {"file": "demo_r1.mdx", "path": "docs/new/demo_r1.mdx", "commit": "b" * 40},
        {"file": "demo_32b.mdx", "path": "docs/new/demo_32b.mdx", "commit": "c" * 40}]}), encoding="utf-8")
    found = pages.findings(tmp_path, yaml.safe_load(RECORD))
    text = pages.record_text(RECORD, found)
    record = yaml.safe_load(text)
    assert next(f for f in found if f.file == "glossary.mdx").status == "refused"
    r1, new = record["pages"]
    assert r1["path"] == "docs/new/demo_r1.mdx" and r1["follows"] == "docs/old/demo_r1.mdx"
    assert r1["commit"] == "b" * 40 and r1["characters"] == len(changed)
    # The section retitled upstream (same anchor) keeps its id and records the title it was read under.
    assert r1["kept"] == {PD: PD.lower()}
    assert r1["imported"] == {PD: "demo_r1_pd_shipped", "Demo-R1 W4A8 8P IN64K OUT1K 50ms":
                              "demo_r1_a3_8c_mixed_64k_1k_50ms"}
    [(title, reason)] = r1["refused"].items()
    assert title.startswith("Demo-R1 W4A8 8P IN64K OUT1K PREFIX90")
    assert reason.startswith("--max-attempts is not an argument of sglang.bench_serving"), reason
    assert new["path"] == "docs/new/demo_32b.mdx" and new["commit"] == "c" * 40 and new["characters"] == len(MDX)
    assert new["imported"] == {"demo 32b w8a8 2p in3k5 out1k5 50ms": "demo_32b_a3_2c_mixed_3k6_1k5_50ms"}
    assert new["refused"] == {}
    assert record["retired"] == {"demo_r1_older": {"reason": "retired by hand"}, "demo_r1_gone": {
        "reason": f"gone from the page (demo_r1.mdx at {'b' * 12} no longer documents "
                  "'Demo-R1 W4A8 8P IN32K OUT1K 50ms')"}}
    # What was written by hand stays: comments, deviations, the pages gone.
    assert "# A maintainer's comment at the top." in text and "    # A maintainer's comment inside a page." in text
    assert r1["deviations"] == yaml.safe_load(RECORD)["pages"][0]["deviations"]
    assert record["gone"] == {"docs/old/demo_tutorial.mdx": "a page that left the set"}
    # Recording again what is now recorded changes nothing.
    assert pages.record_text(text, pages.findings(tmp_path, record)) == text
