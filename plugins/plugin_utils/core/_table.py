# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The one text table of the reports operators read (preflight / doctor / stack findings, the status of the
deployment, the benchmark's figures).

Private to the collection; pure, no Ansible import.

    +--------+------+----------------------+
    | status | host | found                |
    +--------+------+----------------------+
    | FAIL   | h1   | a long cell wraps    |
    |        |      | onto continuation    |
    |        |      | lines                |
    +--------+------+----------------------+
    | WARN   | h2   | short                |
    +--------+------+----------------------+

A column with a maximum width wraps its longer cells onto continuation lines (at spaces; a word longer than the
column is split): nothing is cut off. A rule separates the rows only when one of them wrapped, so that each row's
continuation lines stay visibly with it; otherwise the rows follow each other between the header's rule and the
closing one.
"""

from __future__ import annotations

import textwrap
from typing import Collection, Iterable, Sequence


def render(header: Sequence[str], rows: Iterable[Sequence[str]], widths: Sequence[int | None] | None = None,
           right: Collection[int] = ()) -> list[str]:
    """The table's lines: ``header`` and ``rows`` (cells as text, as many as the header's), ``widths`` the
    maximum width of each column (None: as wide as its longest cell), ``right`` the indexes of the columns
    aligned right (numbers), the header's cells included."""
    header = [str(c) for c in header]
    rows = [[str(c) for c in row] for row in rows]
    limits = list(widths) if widths is not None else [None] * len(header)
    if len(limits) != len(header) or any(len(row) != len(header) for row in rows):
        raise ValueError(f"a table of {len(header)} columns: every row and the widths need as many")
    cols = [max([len(header[i])] + [len(r[i]) for r in rows]) for i in range(len(header))]
    cols = [w if limit is None else min(limit, w) for w, limit in zip(cols, limits)]
    rule = "+-" + "-+-".join("-" * w for w in cols) + "-+"

    def lines_of(cells: Sequence[str]) -> list[str]:
        wrapped = [[c] if limit is None else
                   textwrap.wrap(c, width, break_long_words=True, break_on_hyphens=False) or [""]
                   for c, limit, width in zip(cells, limits, cols)]
        out = []
        for n in range(max(len(w) for w in wrapped)):
            parts = [w[n] if n < len(w) else "" for w in wrapped]
            out.append("| " + " | ".join(p.rjust(cols[j]) if j in right else p.ljust(cols[j])
                                         for j, p in enumerate(parts)) + " |")
        return out

    body = [lines_of(row) for row in rows]
    separated = any(len(lines) > 1 for lines in body)
    out = [rule, *lines_of(header), rule]
    for lines in body:
        out += lines + ([rule] if separated else [])
    if body and not separated:
        out.append(rule)
    return out
