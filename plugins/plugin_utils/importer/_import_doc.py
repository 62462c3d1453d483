# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Read a "Best Practice on Ascend NPU" document: its summary tables and its configuration sections.

Pure; no Ansible import.  One reader per form of the document, each returning the same ``Document``:

- ``seed``: the rendered text of the documentation pages (the January documents). Tables are flattened
  either one cell per line (headings end with ``#``) or one row per line with the cells run together;
- ``mdx``: the per-model pages of the current documentation (front matter, HTML ``<table>`` summary tables
  under ``### Low Latency`` / ``### High Throughput``, ``## Optimal Configuration`` with one ``###`` section
  per configuration: ``**Key**: value`` lines, ``#### Model Deployment`` and ``#### Benchmark`` with fenced
  command blocks). These pages publish no per-card figure and no result block.

Every section keeps the document line numbers of its parts, so that what the importer cannot map is
refused naming the line.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any


class ImportRefusal(ValueError):
    """What the importer cannot map; the message names the document and line."""


@dataclasses.dataclass(frozen=True)
class Lines:
    """A run of document lines: the text and the (1-based) number of its first line."""

    text: str
    first: int

    def numbered(self) -> list[tuple[int, str]]:
        return [(self.first + i, line) for i, line in enumerate(self.text.splitlines())]

    def line_of(self, needle: str) -> int | None:
        """The number of the first line containing ``needle`` (None when absent)."""
        for number, line in self.numbered():
            if needle in line:
                return number
        return None


@dataclasses.dataclass(frozen=True)
class SummaryRow:
    table: str  # low_latency | high_throughput
    model: str
    hardware: str  # A2 | A3
    cards: int
    mode: str  # "PD Separation" | "PD Mixed"
    dataset: str
    quantization: str
    tpot_ms: float
    tpot_text: str
    tps_text: str | None  # output tok/s per card as printed; None where the table has no such column
    line: int
    text: str
    # The section the row links to ("#deepseek-r1-w8a8-2p1d-32p-in3k5-out1k5-16ms"), where the table has links.
    anchor: str | None = None
    # The TTFT target in ms where the table has a TTFT column and the row fills it (a row of a TTFT-only
    # configuration prints '-' as its TPOT: tpot_ms 0).
    ttft_ms: float | None = None

    @property
    def tpot_is_target(self) -> bool:
        """Tables without published throughput print the TPOT target, not a measured one."""
        return self.tps_text is None


@dataclasses.dataclass(frozen=True)
class Section:
    document: str  # the document's id (the leading digits of its file name, else its name)
    title: str
    line: int
    meta: dict[str, str]  # key/value lines under the title (Model, Hardware, Cards, ...) where the form has them
    deploy: Lines  # the deployment script ("Model Deployment")
    bench: str  # the benchmark command, continuations joined, whitespace collapsed
    bench_line: int
    result: Lines  # the published result block (may be empty)

    @property
    def reuses_deployment(self) -> bool:
        """Sections whose deployment is "Please turn to Model Deployment": another section's script."""
        return "launch_server" not in self.deploy.text and bool(
            re.search(r"please turn to model deployment", self.deploy.text, re.IGNORECASE))


@dataclasses.dataclass(frozen=True)
class Document:
    name: str
    id: str
    form: str
    rows: list[SummaryRow]
    sections: list[Section]


def document_id(name: str) -> str:
    """``000_ec3c2a8796e9b31b.txt`` -> ``000``: the short id the profiles record as their source."""
    base = re.split(r"[\\/]", name)[-1]
    match = re.match(r"^(\d+)_", base)
    return match.group(1) if match else re.sub(r"\.[A-Za-z0-9]+$", "", base)


def read_document(text: str, name: str) -> Document:
    """Sections and summary rows of one document, whatever its form."""
    if detect_form(text) == "mdx":
        return _read_mdx(text, name)
    return _read_seed(text, name)


def detect_form(text: str) -> str:
    head = text.lstrip()[:2000]
    if head.startswith("---") or re.search(r"^#{2,4} ", text, re.MULTILINE) or "<table" in head:
        return "mdx"
    return "seed"


# --------------------------------------------------------------------------- the rendered text form

_HEADING_MARK = "#"
# The January documents say "PD Separation"; the current pages "PD Disaggregation" for the same mode.
_MODE = r"PD Separation|PD Disaggregation|PD Mixed"
# A row of a table whose cells were run together on one line (no per-card column).
_RUN_TOGETHER_ROW = re.compile(
    rf"^(?P<model>\S+?)Atlas 800I (?P<hw>A\d)(?P<cards>\d+)(?P<mode>{_MODE})(?P<dataset>.+?)(?P<tpot>\d+(?:\.\d+)?)ms"
    r"(?P<quant>.+?)Optimal Configuration$")
_TABLE_NAMES = {"low latency": "low_latency", "high throughput": "high_throughput"}
# SGLang's glossary names the nodes "Atlas 800I A2 (A2)" and "Atlas 800I A3 (A3)"; the pages moved to docs/docs/
# write the same nodes "Ascend A3 Series Products" (their note: each A3 card has 2 dies, as on Atlas 800I A3).
_HARDWARE = re.compile(r"Atlas 800I (A[23])|Ascend (A[23]) Series Products")


def hardware_of(text: str) -> str | None:
    """``Atlas 800I A3`` or ``Ascend A3 Series Products`` -> ``A3``; None for hardware the planner does not model."""
    match = _HARDWARE.fullmatch(text.strip())
    return (match.group(1) or match.group(2)) if match else None


_BENCH_START = re.compile(r"^\s*python3? -m sglang\.bench_serving\b")


def _plain(line: str) -> str:
    """A line without the heading mark the rendered pages append (``Benchmark#``)."""
    stripped = line.strip()
    return stripped[:-1] if stripped.endswith(_HEADING_MARK) else stripped


def _read_seed(text: str, name: str) -> Document:
    lines = text.splitlines()
    doc = document_id(name)
    body_at = _optimal_configuration_heading(lines, name)
    rows = _summary_rows(lines[:body_at])
    starts = _section_starts(lines, body_at)
    if not starts:
        raise ImportRefusal(f"{name}: no configuration section after line {body_at + 1} "
                            "(a title followed by 'Model Deployment' or a 'Model:' line)")
    sections = []
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        sections.append(_section(lines, start, end, doc, name))
    return Document(name=name, id=doc, form="seed", rows=rows, sections=sections)


def _optimal_configuration_heading(lines: list[str], name: str) -> int:
    """The index of the "Optimal Configuration" heading that opens the sections (the table cells say it too)."""
    candidates = [i for i, line in enumerate(lines) if _plain(line) == "Optimal Configuration"]
    for i in candidates:
        if lines[i].strip().endswith(_HEADING_MARK):
            return i
    # Tables one row per line: the heading is the first such line standing alone after the tables.
    for i in candidates:
        nxt = next((lines[j].strip() for j in range(i + 1, len(lines)) if lines[j].strip()), "")
        if nxt and not _RUN_TOGETHER_ROW.match(nxt) and not nxt.startswith("Model"):
            return i
    raise ImportRefusal(f"{name}: no 'Optimal Configuration' heading: not a best-practice document")


def _next_nonblank(lines: list[str], i: int) -> tuple[int, str]:
    for j in range(i + 1, len(lines)):
        if lines[j].strip():
            return j, lines[j].strip()
    return len(lines), ""


def _section_starts(lines: list[str], body_at: int) -> list[int]:
    starts = []
    for i in range(body_at + 1, len(lines)):
        title = _plain(lines[i])
        if not title or title in ("Model Deployment", "Benchmark", "Command", "Optimal Configuration") \
                or title.startswith("Model: "):
            continue
        _j, nxt = _next_nonblank(lines, i)
        if _plain(nxt) == "Model Deployment" or nxt.startswith("Model: "):
            starts.append(i)
    return starts


_META_KEYS = ("Model", "Hardware", "Cards", "Deploy Mode", "Quantization", "Dataset", "TPOT", "TTFT")


def parse_meta(line: str) -> dict[str, str]:
    """``Model: X Hardware: Atlas 800I A3 Cards: 8 ...`` -> {Model: X, Hardware: Atlas 800I A3, ...}."""
    keys = "|".join(re.escape(k) for k in _META_KEYS)
    parts = re.split(rf"(?:^|\s)({keys}):\s*", line.strip())
    return {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}


def _section(lines: list[str], start: int, end: int, doc: str, name: str) -> Section:
    title = _plain(lines[start])
    meta: dict[str, str] = {}
    deploy_at = bench_at = None
    for i in range(start + 1, end):
        plain = _plain(lines[i])
        if plain.startswith("Model: ") and not meta:
            meta = parse_meta(plain)
        elif plain == "Model Deployment" and deploy_at is None:
            deploy_at = i
        elif plain == "Benchmark" and deploy_at is not None and bench_at is None:
            bench_at = i
    if deploy_at is None:
        raise ImportRefusal(f"{name} line {start + 1}: section '{title}' has no 'Model Deployment' part")
    deploy_end = bench_at if bench_at is not None else end
    first = deploy_at + 1
    # The plain form puts the script under a "Command" line.
    for i in range(deploy_at + 1, deploy_end):
        if _plain(lines[i]) == "Command":
            first = i + 1
            break
    while first < deploy_end and not lines[first].strip():
        first += 1
    last = deploy_end
    while last > first and not lines[last - 1].strip():
        last -= 1
    deploy = Lines("\n".join(lines[first:last]), first + 1)
    bench, bench_line, result = "", 0, Lines("", end + 1)
    if bench_at is not None:
        for i in range(bench_at + 1, end):
            if _BENCH_START.match(lines[i]):
                stop = i
                while stop + 1 < end and lines[stop].rstrip().endswith("\\"):
                    stop += 1
                bench = " ".join(" ".join(line.rstrip().rstrip("\\") for line in lines[i:stop + 1]).split())
                bench_line = i + 1
                tail = lines[stop + 1:end]
                while tail and not tail[-1].strip():
                    tail.pop()
                lead = 0
                while lead < len(tail) and not tail[lead].strip():
                    lead += 1
                result = Lines("\n".join(tail[lead:]).strip("\n"), stop + 2 + lead)
                break
    return Section(document=doc, title=title, line=start + 1, meta=meta, deploy=deploy, bench=bench,
                   bench_line=bench_line, result=result)


def _summary_rows(lines: list[str]) -> list[SummaryRow]:
    """Every row of the summary tables before the sections: one cell per line, or a row per line."""
    rows: list[SummaryRow] = []
    cells = [(i + 1, line.strip()) for i, line in enumerate(lines) if line.strip()]
    table = None
    for n, (number, cell) in enumerate(cells):
        heading = _plain(cell).lower()
        if heading in _TABLE_NAMES:
            table = _TABLE_NAMES[heading]
            continue
        match = _RUN_TOGETHER_ROW.match(cell)
        if match:
            rows.append(SummaryRow(
                table=table or "", model=match["model"], hardware=match["hw"], cards=int(match["cards"]),
                mode=match["mode"], dataset=match["dataset"], quantization=match["quant"],
                tpot_ms=float(match["tpot"]), tpot_text=match["tpot"], tps_text=None, line=number, text=cell))
            continue
        if n + 8 < len(cells) and cells[n + 1][1].startswith("Atlas 800I ") \
                and cells[n + 8][1] == "Optimal Configuration":
            model, hw, cards, mode, dataset, quant, tpot, tps = [c for _n, c in cells[n:n + 8]]
            if not (cards.isdigit() and re.fullmatch(_MODE, mode) and re.fullmatch(r"\d+(?:\.\d+)?", tpot)):
                continue
            rows.append(SummaryRow(
                table=table or "", model=model, hardware=hw.split()[-1], cards=int(cards), mode=mode,
                dataset=dataset, quantization=quant, tpot_ms=float(tpot), tpot_text=tpot, tps_text=tps,
                line=number, text=" / ".join(c for _n, c in cells[n:n + 8])))
    return rows


_RESULT_LINE = re.compile(r"^([A-Za-z][A-Za-z0-9 ()./\-]*?)(?::\s*|\s{2,})(\S+)$")


def result_lines(block: str) -> dict[str, str]:
    """``label -> value`` of every line of a published result block (the first of two equal labels)."""
    out: dict[str, str] = {}
    for line in block.splitlines():
        line = line.strip()
        match = _RESULT_LINE.match(line)
        if match and not line.startswith(("=", "-")):
            out.setdefault(match.group(1).strip().rstrip(":"), match.group(2))
    return out


def as_printed(text: str) -> Any:
    """A table figure as printed: ``296`` is the int 296, ``311.750`` the float 311.75."""
    return int(text) if re.fullmatch(r"\d+", text) else float(text)


# --------------------------------------------------------------------------- the MDX form (current per-model pages)

_FENCE = re.compile(r"^\s*(```|~~~)")
_SUMMARY_COLUMNS = ("Model", "Hardware", "Cards", "Deploy Mode", "Dataset", "TPOT", "Quantization")
_CELL = re.compile(r"<t[dh][^>]*>(.*?)</t[dh]>", re.DOTALL)
_TAG = re.compile(r"<[^>]+>")
_BOLD_KEY = re.compile(r"^\*\*(?P<key>[A-Za-z ]+)\*\*\s*:\s*(?P<value>.+?)\s*$")


def _heading(line: str) -> tuple[int, str] | None:
    match = re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
    return (len(match.group(1)), match.group(2).strip()) if match else None


def _fenced_blocks(lines: list[str], start: int, end: int) -> list[tuple[int, list[str]]]:
    """(index of the first line inside, the lines) of every fenced block between start and end."""
    blocks, i = [], start
    while i < end:
        if _FENCE.match(lines[i]):
            j = i + 1
            while j < end and not _FENCE.match(lines[j]):
                j += 1
            blocks.append((i + 1, lines[i + 1:j]))
            i = j + 1
        else:
            i += 1
    return blocks


def duration_ms(text: str) -> float | None:
    """A latency as the pages print it (``5s``, ``500ms``, ``1.5 s``) in ms; None for anything else (``-``)."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(ms|s)", text.strip())
    if not match:
        return None
    value = float(match.group(1)) * (1000 if match.group(2) == "s" else 1)
    return value if value > 0 else None


def anchor_of(title: str) -> str:
    """A heading's anchor as the pages link it: lower case, every run of other characters one hyphen."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def _mdx_rows(lines: list[str], end: int) -> list[SummaryRow]:
    """The overview tables' rows, written as HTML (<tr><td>) or as Markdown pipe tables."""
    rows: list[SummaryRow] = []
    table = ""
    # Where each column is: a table's header row names them (the newer pages add a TTFT column after TPOT).
    columns = list(range(len(_SUMMARY_COLUMNS)))
    ttft_column: int | None = None
    text = "\n".join(lines[:end])
    offsets = [0]
    for line in lines[:end]:
        offsets.append(offsets[-1] + len(line) + 1)
    for match in re.finditer(r"^#{2,4}\s+(Low Latency|High Throughput)\s*$|<tr[^>]*>(.*?)</tr>|^(\|[^\n]*\|)[ \t]*$", text,
                             re.MULTILINE | re.DOTALL):
        if match.group(1):
            table = _TABLE_NAMES[match.group(1).lower()]
            continue
        if match.group(2) is not None:
            raw = _CELL.findall(match.group(2))
        else:
            raw = match.group(3).strip().strip("|").split("|")
        link = re.search(r'href="#([^"]+)"|\]\(#([^)\s]+)\)', raw[-1]) if raw else None
        cells = [" ".join(_TAG.sub("", c).split()) for c in raw]
        if cells and cells[0] == "Model":
            if all(name in cells for name in _SUMMARY_COLUMNS):
                columns = [cells.index(name) for name in _SUMMARY_COLUMNS]
                ttft_column = cells.index("TTFT") if "TTFT" in cells else None
            continue
        if len(cells) <= max(columns) or not cells[columns[2]].isdigit():
            continue
        model, hw, cards, mode, dataset, tpot, quant = (cells[i] for i in columns)
        tpot_match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*ms", tpot)
        ttft_ms = duration_ms(cells[ttft_column]) if ttft_column is not None and ttft_column < len(cells) else None
        if not ((tpot_match or (tpot == "-" and ttft_ms)) and re.fullmatch(_MODE, mode)):
            continue
        line = next(n for n, off in enumerate(offsets) if off > match.start())
        rows.append(SummaryRow(table=table, model=model, hardware=hardware_of(hw) or hw.split()[-1], cards=int(cards),
                               mode=mode, dataset=dataset, quantization=quant,
                               tpot_ms=float(tpot_match.group(1)) if tpot_match else 0.0,
                               tpot_text=tpot_match.group(1) if tpot_match else "", tps_text=None, line=line,
                               text=" / ".join(cells[i] for i in columns),
                               anchor=anchor_of(next(g for g in link.groups() if g)) if link else None,
                               ttft_ms=ttft_ms))
    return rows


def _read_mdx(text: str, name: str) -> Document:
    lines = text.splitlines()
    heads = [(i, *_heading(line)) for i, line in enumerate(lines) if _heading(line) and not _in_fence(lines, i)]
    body = next((i for i, level, title in heads if level == 2 and title == "Optimal Configuration"), None)
    if body is None:
        raise ImportRefusal(f"{name}: no '## Optimal Configuration' heading: not a best-practice page")
    starts = [(i, title) for i, level, title in heads if level == 3 and i > body]
    if not starts:
        raise ImportRefusal(f"{name}: no '### <configuration>' section after line {body + 1}")
    sections = []
    for n, (start, title) in enumerate(starts):
        end = starts[n + 1][0] if n + 1 < len(starts) else len(lines)
        sections.append(_mdx_section(lines, heads, start, end, title, name))
    return Document(name=name, id=document_id(name), form="mdx", rows=_mdx_rows(lines, body), sections=sections)


def _in_fence(lines: list[str], index: int) -> bool:
    return sum(1 for line in lines[:index] if _FENCE.match(line)) % 2 == 1


def _mdx_section(lines: list[str], heads: list[tuple[int, int, str]], start: int, end: int, title: str,
                 name: str) -> Section:
    meta: dict[str, str] = {}
    for line in lines[start + 1:end]:
        match = _BOLD_KEY.match(line.strip())
        if match:
            meta.setdefault(match["key"].strip(), match["value"])
    parts = {t: i for i, level, t in heads if start < i < end and level == 4}
    deploy_at, bench_at = parts.get("Model Deployment"), parts.get("Benchmark")
    if deploy_at is None:
        raise ImportRefusal(f"{name} line {start + 1}: section '{title}' has no '#### Model Deployment' part")
    deploy_end = bench_at if bench_at is not None and bench_at > deploy_at else end
    blocks = _fenced_blocks(lines, deploy_at + 1, deploy_end)
    if not blocks:
        raise ImportRefusal(f"{name} line {deploy_at + 1}: section '{title}' has no deployment command block")
    # Every command block of the part is the script (the current pages put the router in a block of its own);
    # what lies between them (prose, fence lines) becomes blank lines, so that line numbers stay the page's.
    first = blocks[0][0]
    inside = {i for at, block in blocks for i in range(at, at + len(block))}
    last = blocks[-1][0] + len(blocks[-1][1])
    deploy = Lines("\n".join(lines[i] if i in inside else "" for i in range(first, last)), first + 1)
    bench, bench_line, result = "", 0, Lines("", end + 1)
    for first_b, block in _fenced_blocks(lines, bench_at + 1, end) if bench_at is not None else []:
        for k, line in enumerate(block):
            if _BENCH_START.match(line) and not bench:
                stop = k
                while stop + 1 < len(block) and block[stop].rstrip().endswith("\\"):
                    stop += 1
                bench = " ".join(" ".join(x.rstrip().rstrip("\\") for x in block[k:stop + 1]).split())
                bench_line = first_b + k + 1
        if re.search(r"serving benchmark result", "\n".join(block), re.IGNORECASE):
            result = Lines("\n".join(block), first_b + 1)
    return Section(document=document_id(name), title=title, line=start + 1, meta=meta, deploy=deploy, bench=bench,
                   bench_line=bench_line, result=result)
