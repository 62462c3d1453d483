"""Published figures: every profile carries its own documented section's figures, nobody else's.

``bench.yml`` judges a deployment against its profile's ``published.figures`` and the profile table (docs/docsite/rst/profiles.rst)
shows them, so each figure must come from the run of the profile's own section:

- ``published.result`` is the section's result block, line by line; a value that differs from the
  document (a misprint) needs a note ``<label>: <document value> -> <value>: <reason>``;
- ``published.figures`` are what the benchmark's own parser (``_bench``, which reads the measured
  run in ``bench.yml``) reads from that block; a figure the block gets wrong is a
  ``published.corrections`` entry that quotes the document's line, gives the corrected value and says
  why.  Output tok/s per card is the summary row's figure as printed (the block has none);
- ``published.recomputed`` holds, beside it, a figure the profile computes where the document prints
  another or none: ``value``, ``formula`` (``<figure> / <cards the servers occupy>``, applied to the
  block's figures) and a ``note`` quoting the document's figure.  A recomputed value never replaces
  the document's in ``figures``;
- ``published.summary`` is the row of the documents' summary tables that belongs to the section:
  same model, hardware, cards and deploy mode, and a TPOT that is the section's mean TPOT or mean
  ITL (the tables use either); its dataset is the profile's unless ``dataset_mismatch`` records
  otherwise; a summary TPOT other than the section's needs a note naming it.
  The quantization is the row's.  Each summary row belongs to exactly one profile.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

import seeddoc as sd
from ansible_collections.ascend.sglang.plugins.module_utils.bench import _bench
from ansible_collections.ascend.sglang.plugins.plugin_utils.report import _bench_verdict
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _profile

ALIASES = {"deepseek_r1_pd32"}
# The January documents publish figures; the current pages publish none (their profiles have a summary row only).
PIDS = [p for p in _profile.available_profiles()
        if p not in ALIASES and _profile.load_profile(p).generation == _profile.FIRST_GENERATION]
SECTIONS = {s.title: s for s in sd.load_sections()}
# Figure in published.figures -> key of _bench's metrics.
METRIC_OF = {"mean_ttft_ms": "mean_ttft_ms", "mean_tpot_ms": "mean_tpot_ms", "mean_itl_ms": "mean_itl_ms",
             "output_throughput_tok_s": "output_throughput"}
# The tables round TPOT to two decimals and some print the mean ITL instead of the mean TPOT.
TPOT_MATCH_MS = 0.05
# A recomputed figure's formula: "<figure read from the result block> / <cards>".
_FORMULA = re.compile(r"^(?P<figure>[a-z_]+) / (?P<cards>\d+)$")
FIGURE_KEYS = {key for key, *_unused in _bench_verdict.FIGURES}
_LINE = re.compile(r"^([A-Za-z][A-Za-z0-9 ()./\-]*?)(?::\s*|\s{2,})(\S+)$")
_ROW_001 = re.compile(r"^(?P<model>Qwen3\.5-\S+?)Atlas 800I (?P<hw>A\d)(?P<cards>\d+)(?P<mode>PD Mixed|PD Separation)"
                      r"(?P<dataset>.+?)(?P<tpot>\d+)ms(?P<quant>.+?)Optimal Configuration$")


def as_printed(text: str) -> int | float:
    """A table figure as the document prints it: ``296`` is an int, ``311.750`` the float 311.75."""
    return int(text) if re.fullmatch(r"\d+", text) else float(text)


def _documents() -> dict[str, str]:
    return {p.name.split("_")[0]: p.read_text(encoding="utf-8") for p in sorted(sd.SEEDS_DIR.glob("00[01]_*.txt"))}


def summary_rows() -> list[dict[str, Any]]:
    """Every row of the documents' summary tables (what precedes the first "Optimal Configuration")."""
    rows: list[dict[str, Any]] = []
    for doc, text in _documents().items():
        table = None
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        for i, line in enumerate(lines):
            if line.rstrip("#") == "Optimal Configuration" and i > 10 and (line.endswith("#") or doc == "001"):
                break
            if line.rstrip("#") in ("Low Latency", "High Throughput"):
                table = line.rstrip("#").lower().replace(" ", "_")
            if doc == "000" and i + 8 < len(lines) and lines[i + 1].startswith("Atlas 800I ") \
                    and lines[i + 8] == "Optimal Configuration":
                model, hw, cards, mode, dataset, quant, tpot, tps = lines[i:i + 8]
                rows.append({"doc": doc, "text": " / ".join(lines[i:i + 8]), "tpot_text": tpot, "tps_text": tps,
                             "summary": {"table": table, "model": model, "hardware": hw.split()[-1],
                                         "cards": int(cards), "mode": mode, "dataset": dataset,
                                         "quantization": quant, "tpot_ms": float(tpot),
                                         "output_tps_per_card": as_printed(tps)}})
            match = _ROW_001.match(line) if doc == "001" else None
            if match:
                rows.append({"doc": doc, "text": line, "tpot_text": match["tpot"], "tps_text": None,
                             "summary": {"table": table, "model": match["model"], "hardware": match["hw"],
                                         "cards": int(match["cards"]), "mode": match["mode"],
                                         "dataset": match["dataset"], "quantization": match["quant"],
                                         "tpot_ms": float(match["tpot"]), "tpot_is_target": True}})
    return rows


ROWS = summary_rows()


def result_lines(block: str) -> dict[str, str]:
    """``label -> value`` of every line of a result block (the first of two equal labels)."""
    out: dict[str, str] = {}
    for line in block.splitlines():
        line = line.strip()
        match = _LINE.match(line)
        if match and not line.startswith(("=", "-")):
            out.setdefault(match.group(1).strip().rstrip(":"), match.group(2))
    return out


def bench_reading(block: str) -> dict[str, Any]:
    """What bench.yml's parser reads from the block (some published blocks lack the header line)."""
    text = block if re.search(r"serving benchmark result", block, re.IGNORECASE) else \
        "====== Serving Benchmark Result ======\n" + block
    return _bench.parse_result(text)["metrics"]


def published(pid: str) -> tuple[_profile.Profile, sd.Section, dict[str, Any]]:
    profile = _profile.load_profile(pid)
    return profile, SECTIONS[profile.source["section"]], dict(profile.published or {})


def notes_of(pub: dict[str, Any]) -> list[str]:
    return [str(n) for n in pub.get("notes") or []]


def expected_figures(profile: _profile.Profile, section: sd.Section, pub: dict[str, Any]) -> dict[str, float]:
    metrics = dict(bench_reading(section.result))
    block = " ".join(section.result.split())
    for fix in pub.get("corrections") or []:
        where = f"{profile.id}: correction {fix!r}"
        assert set(fix) == {"figure", "line", "value", "reason"}, where
        assert fix["figure"] in METRIC_OF, f"{where}: output tok/s per card follows from output tok/s"
        assert " ".join(str(fix["line"]).split()) in block, f"{where}: the line is not in the section's result block"
        assert len(str(fix["reason"]).split()) >= 4, f"{where}: give a real reason"
        metrics[METRIC_OF[fix["figure"]]] = fix["value"]
    return {k: v for k, v in _bench_verdict.figures(metrics, profile.cards_used()).items() if v is not None}


def section_tpots(profile: _profile.Profile, section: sd.Section, pub: dict[str, Any]) -> list[float]:
    if not section.result.strip():
        return []
    figs = expected_figures(profile, section, pub)
    return [figs[k] for k in ("mean_tpot_ms", "mean_itl_ms") if k in figs]


def rows_of(profile: _profile.Profile, section: sd.Section, pub: dict[str, Any]) -> list[dict[str, Any]]:
    """The summary rows with the profile's key whose TPOT is the section's (doc 001: its target and dataset)."""
    found = []
    for row in ROWS:
        s = row["summary"]
        if (s["model"], s["hardware"], s["cards"], s["mode"]) != (profile.model, profile.hardware, profile.cards,
                                                                  _mode(profile)):
            continue
        if row["doc"] == "001":
            if s["dataset"] == profile.dataset.get("name") and s["tpot_ms"] == profile.tpot_target_ms:
                found.append(row)
        elif any(abs(s["tpot_ms"] - t) <= TPOT_MATCH_MS for t in section_tpots(profile, section, pub)):
            found.append(row)
    # Rows of neighbouring runs can lie within the tolerance: the one naming the section's dataset wins.
    same_dataset = [row for row in found if row["summary"]["dataset"] == profile.dataset.get("name")]
    return same_dataset or found


def _mode(profile: _profile.Profile) -> str:
    return "PD Separation" if profile.deploy_mode == "pd_separation" else "PD Mixed"


@pytest.mark.parametrize("pid", PIDS)
def test_result_is_the_sections_result_block(pid: str) -> None:
    profile, section, pub = published(pid)
    document = result_lines(section.result)
    mine = {str(k): str(v) for k, v in (pub.get("result") or {}).items()}
    assert sorted(mine) == sorted(document), f"{pid}: result lines differ from the section's block"
    for label, value in mine.items():
        if value != document[label]:
            wanted = f"{label}: {document[label]} -> {value}:"
            assert any(n.startswith(wanted) for n in notes_of(pub)), \
                f"{pid}: {label!r} is {value!r}, the document says {document[label]!r}; no note {wanted!r}"


@pytest.mark.parametrize("pid", PIDS)
def test_figures_are_the_sections_own(pid: str) -> None:
    profile, section, pub = published(pid)
    if not section.result.strip():
        assert not pub.get("figures") and not pub.get("result"), f"{pid}: the section publishes no result"
        return
    block = {k: v for k, v in expected_figures(profile, section, pub).items() if k != "output_tps_per_card"}
    mine = {k: v for k, v in (pub.get("figures") or {}).items() if k != "output_tps_per_card"}
    assert mine == block, f"{pid}: published figures are not its own section's result block"


@pytest.mark.parametrize("pid", PIDS)
def test_per_card_figure_is_the_documents(pid: str) -> None:
    """The document's per-card figure verbatim; where output tok/s / cards differs, that goes to recomputed."""
    profile, section, pub = published(pid)
    figs, recomputed = dict(pub.get("figures") or {}), dict(pub.get("recomputed") or {})
    if not section.result.strip():
        assert not recomputed, f"{pid}: the section publishes no result to recompute from"
        return
    rows = rows_of(profile, section, pub)
    printed = rows[0]["tps_text"] if rows else None
    derived = expected_figures(profile, section, pub)["output_tps_per_card"]
    value = figs.get("output_tps_per_card")
    if printed is None:
        assert value is None, f"{pid}: the document prints no per-card figure for it, yet figures hold {value!r}"
    else:
        document = as_printed(printed)
        hint = " (the recomputed figure: it belongs in published.recomputed)" if value == derived != document else ""
        for where, mine in (("figures", value), ("summary", (pub.get("summary") or {}).get("output_tps_per_card"))):
            assert mine == document and type(mine) is type(document), \
                f"{pid}: {where}.output_tps_per_card is {mine!r}, the document prints {printed}{hint}"
    entry = recomputed.get("output_tps_per_card")
    if printed is not None and as_printed(printed) == derived:
        assert entry is None, f"{pid}: output tok/s / cards is the document's {printed}; nothing to recompute"
        return
    assert entry is not None, \
        f"{pid}: output tok/s / cards = {derived}, the document prints {printed or 'none'}: record it in recomputed"
    assert entry.get("value") == derived, f"{pid}: recomputed per-card figure {entry.get('value')!r}, not {derived}"
    if printed is not None:
        assert printed in str(entry.get("note")), f"{pid}: the recomputed note must quote the document's {printed}"


@pytest.mark.parametrize("pid", PIDS)
def test_recomputed_figures_follow_their_formula(pid: str) -> None:
    profile, section, pub = published(pid)
    figs = dict(pub.get("figures") or {})
    block = expected_figures(profile, section, pub) if section.result.strip() else {}
    for key, entry in dict(pub.get("recomputed") or {}).items():
        where = f"{pid}: recomputed {key}"
        assert key in FIGURE_KEYS, f"{where}: not a figure bench.yml compares"
        assert isinstance(entry, dict) and set(entry) == {"value", "formula", "note"}, f"{where}: value, formula, note"
        match = _FORMULA.match(str(entry["formula"]))
        assert match and match["figure"] in block and match["figure"] != key, \
            f"{where}: formula {entry['formula']!r} is not '<figure of the result block> / <cards>'"
        assert int(match["cards"]) == profile.cards_used(), \
            f"{where}: divides by {match['cards']}, the servers occupy {profile.cards_used():g} cards"
        assert entry["value"] == round(block[match["figure"]] / int(match["cards"]), 3), \
            f"{where}: {entry['value']!r} is not {entry['formula']} of the result block"
        assert figs.get(key) != entry["value"], f"{where}: the published figure is the recomputed one"
        assert len(str(entry["note"]).split()) >= 4, f"{where}: give a real note"


@pytest.mark.parametrize("pid", PIDS)
def test_summary_is_the_row_that_belongs_to_the_section(pid: str) -> None:
    profile, section, pub = published(pid)
    rows = rows_of(profile, section, pub)
    assert len(rows) <= 1, f"{pid}: several summary rows match: {[r['text'] for r in rows]}"
    summary = dict(pub.get("summary") or {})
    if not rows:
        assert not summary, f"{pid}: no summary row belongs to this section, yet the profile carries one"
        assert profile.quantization, f"{pid}: no quantization (the summary has none; read it from the command)"
        return
    row = rows[0]
    mismatch = summary.pop("dataset_mismatch", False)
    expected = dict(row["summary"])
    if mismatch:
        assert expected["dataset"] != profile.dataset.get("name"), f"{pid}: dataset_mismatch, but the datasets agree"
        expected["dataset"] = summary.get("dataset")
    assert summary == expected, f"{pid}: summary is not the row {row['text']!r}"
    assert summary["dataset"] == row["summary"]["dataset"]
    assert mismatch or row["summary"]["dataset"] == profile.dataset.get("name"), \
        f"{pid}: the row's dataset {row['summary']['dataset']!r} is not the profile's"
    assert profile.quantization == row["summary"]["quantization"], f"{pid}: quantization is not the row's"
    figs = pub.get("figures") or {}
    notes = [n.lower() for n in notes_of(pub)]
    if "mean_tpot_ms" in figs and abs(figs["mean_tpot_ms"] - row["summary"]["tpot_ms"]) > 0.005:
        assert any("summary" in n and row["tpot_text"] in n for n in notes), \
            f"{pid}: the summary row's TPOT {row['tpot_text']} differs from the section's; no note names it"


def test_every_summary_row_belongs_to_exactly_one_profile() -> None:
    owners: dict[str, list[str]] = {row["text"]: [] for row in ROWS}
    for pid in PIDS:
        profile, section, pub = published(pid)
        for row in rows_of(profile, section, pub):
            owners[row["text"]].append(pid)
    # 29 rows in the first document's tables (none for Qwen3-235B 8-card 2K-2K 50ms), 10 in the second's.
    assert len(ROWS) == 39, "the summary tables were not read completely"
    assert {text: pids for text, pids in owners.items() if len(pids) != 1} == {}
