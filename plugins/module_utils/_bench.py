# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The documented ``sglang.bench_serving`` run: overrides of its argv, the parser of its
"Serving Benchmark Result" block, and the verdict against a profile's published figures.

Pure and typed; no Ansible import.  The parser accepts every formatting the published result
blocks show (colon or column-aligned values, ``PTOT`` for ``TPOT``, the long "Time per Output
Token (excl. 1st token)" label with or without ``(ms)``, headers split over three lines, any
separator characters, trailing blanks) and keeps the first of two identically labelled lines.
"""

from __future__ import annotations

import math
import re
from typing import Any, Mapping, Sequence

# Figures compared with a profile's published ones: (key in the figures, label, unit, higher is better).
FIGURES: tuple[tuple[str, str, str, bool], ...] = (
    ("mean_ttft_ms", "Mean TTFT", "ms", False),
    ("mean_tpot_ms", "Mean TPOT", "ms", False),
    ("mean_itl_ms", "Mean ITL", "ms", False),
    ("output_throughput_tok_s", "Output tok/s", "tok/s", True),
    ("output_tps_per_card", "Output tok/s per card", "tok/s", True),
)

# sglang.bench_serving's default when --num-prompts is absent.
DEFAULT_NUM_PROMPTS = 1000
# Default tolerance over the profile's TPOT target: the published figures themselves exceed their
# target by up to 3 % (Qwen3-235B 8-card 3.5K-1.5K: 51.51 ms against 50 ms).
DEFAULT_TPOT_TOLERANCE = 0.10

_STAT = r"(?P<stat>mean|median|std|p\d+|max)"
# (label pattern, key); a key with {stat} takes the statistic from the label.
_LABELS: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p + r"$"), k) for p, k in (
    (r"backend", "backend"),
    (r"traffic request rate", "request_rate"),
    (r"max request concurrency", "max_concurrency"),
    (r"successful requests", "completed"),
    (r"benchmark duration \(s\)", "duration_s"),
    (r"total input tokens", "total_input_tokens"),
    (r"total input text tokens", "total_input_text_tokens"),
    (r"total input vision tokens", "total_input_vision_tokens"),
    (r"total generated tokens", "total_output_tokens"),
    (r"total generated tokens \(retokenized\)", "total_output_tokens_retokenized"),
    (r"request throughput \(req/s\)", "request_throughput"),
    (r"input token throughput \(tok/s\)", "input_throughput"),
    (r"output token throughput \(tok/s\)", "output_throughput"),
    (r"peak output token throughput \(tok/s\)", "max_output_tokens_per_s"),
    (r"peak concurrent requests", "max_concurrent_requests"),
    (r"total token throughput \(tok/s\)", "total_throughput"),
    (r"concurrency", "concurrency"),
    (r"accept length", "accept_length"),
    (_STAT + r" e2e latency \(ms\)", "{stat}_e2e_latency_ms"),
    (_STAT + r" ttft \(ms\)", "{stat}_ttft_ms"),
    # "TPOT", the published typo "PTOT", and the long label (some blocks omit the unit).
    (_STAT + r" (?:tpot|ptot|time per output token \(excl\. 1st token\))(?: \(ms\))?", "{stat}_tpot_ms"),
    (_STAT + r" itl \(ms\)", "{stat}_itl_ms"),
))
# Labels bench_serving does not print itself (published typos and paraphrases).
_ALIAS = re.compile(r"ptot|time per output token", re.IGNORECASE)
_HEADER = re.compile(r"serving benchmark result", re.IGNORECASE)
_METRIC = re.compile(r"^\s*(?P<label>[A-Za-z][A-Za-z0-9 ./()\-]*?)\s*(?::\s*|\s{2,})(?P<value>\S+)\s*$")
# Section titles between the metrics ("---- Time to First Token ----", "End-to-End Latency", ...).
_TITLE_WORDS = re.compile(r"latency|token|serving benchmark result", re.IGNORECASE)
_SEPARATOR_CHARS = "-=#*| \t"


class BenchParseError(ValueError):
    """The text holds no usable "Serving Benchmark Result" block."""


def _value(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return text
    # JSON has no inf / nan: keep them as the text bench_serving printed ("inf" request rate).
    return number if math.isfinite(number) else text


def _key(label: str) -> str | None:
    norm = " ".join(label.lower().split())
    for pattern, key in _LABELS:
        match = pattern.match(norm)
        if match:
            return key.format(**match.groupdict()) if "{" in key else key
    return None


def _blocks(text: str) -> list[list[str]]:
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if _HEADER.search(line)]
    return [lines[s + 1:(starts[n + 1] if n + 1 < len(starts) else len(lines))] for n, s in enumerate(starts)]


def _parse_block(lines: Sequence[str]) -> dict[str, Any]:
    metrics: dict[str, Any] = {}
    unknown: dict[str, Any] = {}
    duplicates: list[str] = []
    aliased: dict[str, str] = {}
    for line in lines:
        stripped = line.strip(_SEPARATOR_CHARS)
        if not stripped:
            # A closing rule of "=" after the metrics ends the block (bench_serving's last line).
            if metrics and set(line.strip()) == {"="} and len(line.strip()) >= 5:
                break
            continue
        match = _METRIC.match(line)
        if match and not line.lstrip().startswith(("-", "=")):
            label, value = match.group("label").strip(), _value(match.group("value"))
            key = _key(label)
            alias = _ALIAS.search(label) is not None
            if key is None:
                unknown.setdefault(label, value)
            elif key in metrics and not (key in aliased and not alias):
                duplicates.append(label)
            else:
                if key in metrics:
                    duplicates.append(aliased[key])
                # bench_serving's own label ("Mean TPOT (ms)") wins over a misspelt or long one.
                if alias:
                    aliased[key] = label
                else:
                    aliased.pop(key, None)
                metrics[key] = value
            continue
        if _TITLE_WORDS.search(stripped) and len(stripped) < 80:
            continue
        break  # anything else (prose, the next document section) ends the block
    return {"metrics": metrics, "unknown": unknown, "duplicates": duplicates}


def parse_result(text: str) -> dict[str, Any]:
    """Parse the last "Serving Benchmark Result" block of ``text`` (bench_serving's stdout).

    Returns ``{"metrics": {key: value}, "unknown": {label: value}, "duplicates": [label]}``; keys follow
    bench_serving's own JSON names where it has one (``completed``, ``output_throughput``,
    ``mean_tpot_ms`` ...).  Raises BenchParseError when no block with metrics is found.
    """
    blocks = [b for b in (_parse_block(lines) for lines in _blocks(text)) if b["metrics"]]
    if not blocks:
        raise BenchParseError("no 'Serving Benchmark Result' block with figures in the benchmark output")
    return blocks[-1]


def parse_all(text: str) -> list[dict[str, Any]]:
    """Every block of ``text`` with at least one metric (a document quoting several results)."""
    return [b for b in (_parse_block(lines) for lines in _blocks(text)) if b["metrics"]]


def figures(metrics: Mapping[str, Any], cards: float) -> dict[str, float | None]:
    """The compared figures; output tok/s per card = output tok/s / the cards the servers use."""
    def num(key: str) -> float | None:
        value = metrics.get(key)
        return float(value) if isinstance(value, (int, float)) else None

    output = num("output_throughput")
    return {
        "mean_ttft_ms": num("mean_ttft_ms"),
        "mean_tpot_ms": num("mean_tpot_ms"),
        "mean_itl_ms": num("mean_itl_ms"),
        "output_throughput_tok_s": output,
        "output_tps_per_card": round(output / cards, 3) if output is not None and cards > 0 else None,
    }


# ---------------------------------------------------------------------------------------------- argv

def _split(argv: Sequence[str]) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """[python, -m, module] + ordered (flag, values) pairs."""
    argv = [str(a) for a in argv]
    try:
        start = argv.index("-m") + 2
    except ValueError:
        start = 1
    head, flags = argv[:start], []
    for arg in argv[start:]:
        if arg.startswith("--"):
            flags.append((arg, []))
        elif flags:
            flags[-1][1].append(arg)
        else:
            head.append(arg)
    return head, flags


def _overridden(argv: Sequence[str], overrides: Mapping[str, Any] | None, python: str | None
                ) -> tuple[list[str], list[tuple[str, list[str]]]]:
    head, flags = _split(argv)
    if python:
        head[0] = str(python)
    for flag, value in (overrides or {}).items():
        flag = str(flag)
        if not flag.startswith("--") or len(flag) < 3:
            raise ValueError(f"benchmark override '{flag}': flags must be full '--names'")
        if value is None or value is False:
            flags = [(f, v) for f, v in flags if f != flag]
            continue
        values = [] if value is True else [str(v) for v in value] if isinstance(value, (list, tuple)) else [str(value)]
        if any(f == flag for f, _unused in flags):
            flags = [(f, values if f == flag else v) for f, v in flags]
        else:
            flags.append((flag, values))
    return head, flags


def _joined(head: list[str], flags: list[tuple[str, list[str]]]) -> list[str]:
    out = list(head)
    for flag, values in flags:
        out += [flag, *values]
    return out


def apply_overrides(argv: Sequence[str], overrides: Mapping[str, Any] | None, python: str | None = None
                    ) -> list[str]:
    """The documented benchmark argv with ``overrides`` (flag -> value) applied in place.

    A value replaces the flag's values (a list gives several), ``true`` makes a bare flag, ``null`` or
    ``false`` removes it; a flag the command lacks is appended.  ``python`` replaces the interpreter.
    """
    return _joined(*_overridden(argv, overrides, python))


def command(argv: Sequence[str], overrides: Mapping[str, Any] | None, python: str | None = None
            ) -> tuple[list[str], int]:
    """``apply_overrides`` and the number of prompts the resulting command sends (its --num-prompts,
    bench_serving's default without one): the count the verdict holds the successful requests to."""
    head, flags = _overridden(argv, overrides, python)
    given = next((values for flag, values in flags if flag == "--num-prompts"), None)
    try:
        prompts = int(given[0]) if given else DEFAULT_NUM_PROMPTS
    except ValueError:
        raise ValueError(f"--num-prompts {given[0]!r}: a number of prompts") from None
    return _joined(head, flags), prompts


# ------------------------------------------------------------------------------------------- verdict

def evaluate(parsed: Mapping[str, Any], *, cards: float, tpot_target_ms: float,
             published: Mapping[str, Any] | None, tolerance: float = DEFAULT_TPOT_TOLERANCE,
             target_source: str = "the profile", argv: Sequence[str] = ()) -> dict[str, Any]:
    """Measured figures beside the published ones, and every reason the run fails. ``parsed`` is the module's
    (ascend.sglang.sglang_bench) result block with the prompts the command sent (``num_prompts``, from
    ``command``); ``target_source`` names where ``tpot_target_ms`` comes from (the profile, or an operator's
    stricter target). ``argv``, the command that ran, is not read: callers may still pass it."""
    del argv
    metrics = parsed.get("metrics") or {}
    measured = figures(metrics, cards)
    pub = dict(published or {})
    rows = []
    for key, label, unit, higher in FIGURES:
        mine, theirs = measured.get(key), pub.get(key)
        theirs = float(theirs) if isinstance(theirs, (int, float)) else None
        ratio = round(mine / theirs, 3) if mine is not None and theirs else None
        rows.append({"figure": key, "label": label, "unit": unit, "higher_is_better": higher,
                     "measured": mine, "published": theirs, "ratio": ratio})
    failures: list[str] = []
    wanted = int(parsed.get("num_prompts") or DEFAULT_NUM_PROMPTS)
    completed = metrics.get("completed")
    if not isinstance(completed, int):
        failures.append("the result has no 'Successful requests' figure")
    elif completed < wanted:
        failures.append(f"{wanted - completed} of {wanted} requests failed (successful requests: {completed})")
    tokens = metrics.get("total_output_tokens", metrics.get("total_output_tokens_retokenized"))
    if not isinstance(tokens, (int, float)) or tokens <= 0:
        failures.append("no output tokens were generated (total generated tokens: "
                        f"{tokens if tokens is not None else 'missing'})")
    tpot = measured["mean_tpot_ms"]
    limit = round(tpot_target_ms * (1 + tolerance), 3) if tpot_target_ms else None
    if tpot is None:
        failures.append("the result has no mean TPOT figure")
    elif limit is not None and tpot > limit:
        failures.append(f"mean TPOT {tpot:g} ms exceeds the target {tpot_target_ms:g} ms ({target_source}) by more "
                        f"than {tolerance:.0%} (limit {limit:g} ms)")
    return {"passed": not failures, "failures": failures, "figures": measured, "comparison": rows,
            "num_prompts": wanted, "completed": completed, "total_output_tokens": tokens,
            "tpot_target_ms": tpot_target_ms, "tpot_target_source": target_source, "tpot_tolerance": tolerance,
            "tpot_limit_ms": limit,
            "cards": cards}


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.2f}" if abs(value) < 1e6 else f"{value:,.0f}"


def render_table(verdict: Mapping[str, Any]) -> list[str]:
    """Figure | measured | published | ratio (measured / published), one line per element."""
    head = ("figure", "measured", "published", "ratio")
    body = []
    for row in verdict["comparison"]:
        hint = "higher is better" if row["higher_is_better"] else "lower is better"
        body.append((f"{row['label']} ({row['unit']}, {hint})", _fmt(row["measured"]), _fmt(row["published"]),
                     "-" if row["ratio"] is None else f"{row['ratio']:.3f}"))
    widths = [max(len(r[i]) for r in (head, *body)) for i in range(4)]
    line = "  ".join("{:<%d}" % w if i == 0 else "{:>%d}" % w for i, w in enumerate(widths))
    out = [line.format(*head), "  ".join("-" * w for w in widths)]
    out += [line.format(*r) for r in body]
    limit = verdict.get("tpot_limit_ms")
    out.append(f"successful requests {verdict['completed']} / {verdict['num_prompts']}; "
               f"generated tokens {verdict['total_output_tokens']}; TPOT target {verdict['tpot_target_ms']:g} ms"
               + (f" (+{verdict['tpot_tolerance']:.0%}: limit {limit:g} ms)" if limit is not None else ""))
    out.append("PASS" if verdict["passed"] else "FAIL: " + "; ".join(verdict["failures"]))
    return out
