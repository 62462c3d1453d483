# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The documented ``sglang.bench_serving`` run as the module sglang_bench runs it on the entry host: its command
from the plan's flags with the operator's overrides, and the parser of its "Serving Benchmark Result" block (the
verdict against a profile's published figures is the controller's: plugins/plugin_utils/report/_bench_verdict.py).

Pure and typed; no Ansible import.  The parser accepts every formatting the published result
blocks show (colon or column-aligned values, ``PTOT`` for ``TPOT``, the long "Time per Output
Token (excl. 1st token)" label with or without ``(ms)``, headers split over three lines, any
separator characters, trailing blanks) and keeps the first of two identically labelled lines.
"""

from __future__ import annotations

import math
import re
from typing import Any, List, Mapping, Sequence, Tuple

# sglang.bench_serving's default when --num-prompts is absent.
DEFAULT_NUM_PROMPTS = 1000

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


# ---------------------------------------------------------------------------------------------- the command

Flags = List[Tuple[str, List[str]]]


def _flags(planned: Sequence[Any]) -> Flags:
    """The plan's ``bench.flags`` ([flag, [values...]] pairs, in order) as typed pairs."""
    out: Flags = []
    for pair in planned or ():
        if not isinstance(pair, (list, tuple)) or len(pair) != 2 or not isinstance(pair[1], (list, tuple)):
            raise ValueError(f"benchmark flags: {pair!r} is not a [flag, [values...]] pair of the plan")
        out.append((str(pair[0]), [str(v) for v in pair[1]]))
    return out


def apply_overrides(flags: Sequence[Any], overrides: Mapping[str, Any] | None) -> Flags:
    """The plan's benchmark flags with ``overrides`` (flag -> value) applied in place.

    A value replaces the flag's values (a list gives several), ``true`` makes a bare flag, ``null`` or
    ``false`` removes it; a flag the command lacks is appended.
    """
    pairs = _flags(flags)
    for flag, value in (overrides or {}).items():
        flag = str(flag)
        if not flag.startswith("--") or len(flag) < 3:
            raise ValueError(f"benchmark override '{flag}': flags must be full '--names'")
        if value is None or value is False:
            pairs = [(f, v) for f, v in pairs if f != flag]
            continue
        values = [] if value is True else [str(v) for v in value] if isinstance(value, (list, tuple)) else [str(value)]
        if any(f == flag for f, _unused in pairs):
            pairs = [(f, values if f == flag else v) for f, v in pairs]
        else:
            pairs.append((flag, values))
    return pairs


def command(python: str, module: str, flags: Sequence[Any], overrides: Mapping[str, Any] | None
            ) -> tuple[list[str], int]:
    """The argv ``python -m module`` + the flags with ``overrides`` applied, and the number of prompts it sends
    (its --num-prompts, bench_serving's default without one): the count the verdict holds the successful
    requests to."""
    pairs = apply_overrides(flags, overrides)
    given = next((values for flag, values in pairs if flag == "--num-prompts"), None)
    try:
        prompts = int(given[0]) if given else DEFAULT_NUM_PROMPTS
    except (ValueError, IndexError):
        raise ValueError(f"--num-prompts {given!r}: a number of prompts") from None
    argv = [str(python), "-m", str(module)]
    for flag, values in pairs:
        argv += [flag, *values]
    return argv, prompts
