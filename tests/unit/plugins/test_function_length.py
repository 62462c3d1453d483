"""No function of the collection's Python (plugins/) is longer than 60 lines.

A function is counted from its ``def`` line to the last line of its body (docstring and comments included,
decorators not); a nested function counts inside the function that holds it and on its own. A long function is
split into named helpers: the failure names each one with its file and line.
"""

from __future__ import annotations

import ast
import pathlib

PLUGINS = pathlib.Path(__file__).resolve().parents[3] / "plugins"
MAX_LINES = 60


def too_long(source: str, limit: int = MAX_LINES) -> list[tuple[str, int, int]]:
    """(name, first line, length) of every function of ``source`` longer than ``limit`` lines."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            if length > limit:
                out.append((node.name, node.lineno, length))
    return sorted(out, key=lambda found: found[1])


def test_the_count_runs_from_def_to_the_last_line_of_the_body():
    body = "".join(f"    x{i} = {i}\n" for i in range(59))
    assert too_long(f"def fits():\n{body}") == []
    assert too_long(f"@decorator\ndef fits():\n{body}") == []
    method = "".join(f"        x{i} = {i}\n" for i in range(60))
    assert too_long(f"class A:\n    def method(self):\n{method}") == [("method", 2, 61)]


def test_no_function_in_plugins_is_longer_than_60_lines():
    found = [f"{path.relative_to(PLUGINS.parent)}:{line} {name} ({length} lines)"
             for path in sorted(PLUGINS.rglob("*.py"))
             for name, line, length in too_long(path.read_text(encoding="utf-8"))]
    assert not found, (f"functions over {MAX_LINES} lines (split each into named helpers):\n  "
                       + "\n  ".join(found))
