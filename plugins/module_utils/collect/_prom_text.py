# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The Prometheus text exposition format (0.0.4, what ``prometheus_client`` serves on ``/metrics``), parsed,
and the load of an SGLang server read from it (module sglang_service_status, on the server's host).

Private to the collection; the standard library only.

A line is a comment (``# HELP <name> <doc>``, ``# TYPE <name> <type>``, anything else after ``#``) or a sample:

    <name>[{<label>="<value>",...}] <value> [<timestamp ms>]

Names may hold colons (``sglang:num_running_reqs``); newer clients may quote a name inside the braces
(``{"a.b",le="1"}``).  Label values escape ``\\``, ``\"`` and ``\n``; values may be ``NaN``, ``+Inf``, ``-Inf``.
A histogram ``h`` shows as samples ``h_bucket{le=...}``, ``h_sum`` and ``h_count``; a counter ``c_total`` as
``c_total`` (and ``c_created``).  A line that does not parse is recorded in ``errors`` and skipped: a scrape
answered by something else, or cut short, never raises.
"""

from __future__ import annotations

import math
import re
from typing import Dict, Iterable, List, NamedTuple, Optional, Tuple

_NAME_RE = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL_RE = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
# Go's ParseFloat forms that Prometheus writes; Python's float() alone would also take "1_0" or "infinity".
_NUMBER_RE = re.compile(r"[+-]?(?:inf|nan|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?)", re.IGNORECASE)
_ESCAPES = {"\\": "\\", '"': '"', "n": "\n"}
# Errors kept per parse: enough to say what went wrong without returning a broken page line by line.
MAX_ERRORS = 5

# SGLang's own collector (python/sglang/srt/metrics/collector.py, v0.5.6.post2 and later): scheduler gauges, set
# per scheduler (labels model_name, engine_type, tp_rank, pp_rank, dp_rank, ...), and the tokenizer's metrics.
RUNNING = "sglang:num_running_reqs"
QUEUED = "sglang:num_queue_reqs"
INTER_TOKEN = "sglang:inter_token_latency_seconds"
REQUESTS = "sglang:num_requests_total"


class Sample(NamedTuple):
    name: str
    labels: Dict[str, str]
    value: float
    timestamp: Optional[int]


class Exposition(NamedTuple):
    """``types``: family name -> its ``# TYPE``; ``errors``: ``line <n>: <why>`` (at most MAX_ERRORS),
    ``skipped`` how many lines did not parse."""
    samples: List[Sample]
    types: Dict[str, str]
    errors: List[str]
    skipped: int


def parse_text(text: str) -> Exposition:
    samples: List[Sample] = []
    types: Dict[str, str] = {}
    errors: List[str] = []
    skipped = 0
    for number, raw in enumerate(str(text or "").split("\n"), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            parts = line[1:].split(None, 3)
            if len(parts) >= 3 and parts[0] == "TYPE":
                types[parts[1]] = parts[2]
            continue
        try:
            samples.append(_sample(line))
        except ValueError as exc:
            skipped += 1
            if len(errors) < MAX_ERRORS:
                errors.append(f"line {number}: {exc}"[:160])  # a metric name can be a whole line of garbage
    return Exposition(samples, types, errors, skipped)


def sample_sum(samples: Iterable[Sample], name: str) -> Optional[float]:
    """The sum of ``name``'s samples over all their label sets, NaN ones left out (no figure, as a gauge not set
    yet); None when it has no sample, or only NaN ones."""
    values = [s.value for s in samples if s.name == name and not math.isnan(s.value)]
    return math.fsum(values) if values else None


def server_load(text: str) -> Tuple[Optional[dict], Optional[str]]:
    """An SGLang server's ``/metrics`` page -> (``{running, queued, tpot_ms, requests}``, None), or (None, why)
    when its running or queued requests are missing.  ``tpot_ms`` is the mean inter-token latency since the
    server started (None before its first output token), ``requests`` the requests it finished (None when the
    counter has no sample yet)."""
    page = parse_text(text)
    running = sample_sum(page.samples, RUNNING)
    queued = sample_sum(page.samples, QUEUED)
    missing = [name for name, value in ((RUNNING, running), (QUEUED, queued)) if value is None]
    if missing:
        if page.errors:  # something else answered, or the page was cut short
            return None, f"not a metrics page? {page.skipped} unparsed lines, {page.errors[0]}; no {', '.join(missing)}"
        # The scheduler sets its gauges from its first batch on, or after 30 s idle: a fresh server has none yet.
        return None, f"not reported yet: {', '.join(missing)}"
    count = sample_sum(page.samples, INTER_TOKEN + "_count")
    total = sample_sum(page.samples, INTER_TOKEN + "_sum")
    tpot = total / count * 1000 if count and total is not None else None
    requests = sample_sum(page.samples, REQUESTS)
    return {"running": _plain(running), "queued": _plain(queued), "tpot_ms": _plain(tpot),
            "requests": _plain(requests)}, None


def _plain(value: Optional[float]):
    """A figure as JSON takes it: whole numbers as int, a non-finite one as None (JSON has no NaN or Inf)."""
    if value is None or not math.isfinite(value):
        return None
    return int(value) if value == int(value) and abs(value) < 2 ** 53 else round(value, 3)


def _sample(line: str) -> Sample:
    match = _NAME_RE.match(line)
    name = match.group() if match else None
    pos = match.end() if match else 0
    labels: Dict[str, str] = {}
    if pos < len(line) and line[pos] == "{":
        labels, quoted, pos = _labels(line, pos + 1, want_name=name is None)
        name = name or quoted
    elif name is not None and pos < len(line) and not line[pos].isspace():
        raise ValueError(f"unexpected {line[pos]!r} after the name {name}")
    if not name:
        raise ValueError("no metric name")
    rest = line[pos:].split()
    if not rest or len(rest) > 2:
        raise ValueError(f"{name}: expected a value and an optional timestamp, got {_shown(line[pos:].strip())}")
    if not _NUMBER_RE.fullmatch(rest[0]):
        raise ValueError(f"{name}: value {_shown(rest[0])} is not a number")
    timestamp = None
    if len(rest) == 2:
        if not re.fullmatch(r"-?[0-9]+", rest[1]):
            raise ValueError(f"{name}: timestamp {_shown(rest[1])} is not an integer")
        timestamp = int(rest[1])
    return Sample(name, labels, float(rest[0]), timestamp)


def _labels(line: str, pos: int, want_name: bool) -> Tuple[Dict[str, str], Optional[str], int]:
    """The label set from just after ``{`` -> (labels, a quoted metric name or None, position after ``}``)."""
    labels: Dict[str, str] = {}
    name = None
    first = True
    while True:
        pos = _skip_spaces(line, pos)
        if pos >= len(line):
            raise ValueError("label set not closed")
        if line[pos] == "}":
            return labels, name, pos + 1
        if line[pos] == '"':
            key, pos = _quoted(line, pos + 1)
            pos = _skip_spaces(line, pos)
            if pos < len(line) and line[pos] in ",}" and first and want_name:
                name = key  # {"metric.name",label="value"}: a UTF-8 name, quoted
                pos += line[pos] == ","
                first = False
                continue
        else:
            match = _LABEL_RE.match(line, pos)
            if not match:
                raise ValueError(f"bad label name at column {pos + 1}")
            key, pos = match.group(), _skip_spaces(line, match.end())
        if pos >= len(line) or line[pos] != "=":
            raise ValueError(f"label {key}: no '='")
        pos = _skip_spaces(line, pos + 1)
        if pos >= len(line) or line[pos] != '"':
            raise ValueError(f"label {key}: value not quoted")
        labels[key], pos = _quoted(line, pos + 1)
        pos = _skip_spaces(line, pos)
        first = False
        if pos < len(line) and line[pos] == ",":
            pos += 1
        elif pos >= len(line) or line[pos] != "}":
            raise ValueError(f"label {key}: expected ',' or '}}'")


def _quoted(line: str, pos: int) -> Tuple[str, int]:
    """A quoted string from just after its opening quote -> (its text unescaped, position after the close)."""
    out = []
    while pos < len(line):
        char = line[pos]
        if char == '"':
            return "".join(out), pos + 1
        if char == "\\" and pos + 1 < len(line):
            nxt = line[pos + 1]
            out.append(_ESCAPES.get(nxt, "\\" + nxt))  # an unknown escape stays as written
            pos += 2
            continue
        out.append(char)
        pos += 1
    raise ValueError("quoted string not closed")


def _shown(text: str) -> str:
    """A piece of a broken line for an error: a page of garbage must not make a page of errors."""
    return repr(text if len(text) <= 40 else text[:37] + "...")


def _skip_spaces(line: str, pos: int) -> int:
    while pos < len(line) and line[pos] in " \t":
        pos += 1
    return pos
