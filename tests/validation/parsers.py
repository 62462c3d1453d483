"""Runs the real SGLang / sglang-router parsers installed by setup_parsers.sh."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "parsers"
# The collection's own probe: the import's validation runs the same file.
SCRIPT = ROOT / "plugins" / "plugin_utils" / "importer" / "_parser_probe.py"


def available(kind: str, release: str) -> bool:
    if kind == "server":
        return (CACHE / f"sglang-{release}" / ".complete").exists()
    return (CACHE / f"router-{release}" / "bin" / "python").exists()


def parse(kind: str, release: str, argvs: list[list[str]]) -> dict:
    """One process per call: the parser is built once, parses every argv and lists its options."""
    if kind == "server":
        python = CACHE / "base" / "bin" / "python"
        path = [CACHE / "stubs", CACHE / f"sglang-{release}", CACHE / f"deps-{release}"]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(str(p) for p in path))
    else:
        python = CACHE / f"router-{release}" / "bin" / "python"
        env = dict(os.environ)
    env.pop("PYTHONHOME", None)
    proc = subprocess.run([str(python), str(SCRIPT)], input=json.dumps({"kind": kind, "argvs": argvs}),
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{kind} parser {release} failed to run:\n{proc.stderr[-3000:]}")
    answer = json.loads(proc.stdout)
    _OPTIONS[(kind, release)] = answer["options"]
    return answer


_MEMO: dict[tuple[str, str, tuple[str, ...]], dict] = {}
_OPTIONS: dict[tuple[str, str], list[str]] = {}


def prime(kind: str, release: str, argvs: list[list[str]]) -> None:
    """Parse many commands in one process (importing SGLang takes seconds) and remember the results."""
    todo = [a for a in {tuple(a): None for a in argvs} if (kind, release, a) not in _MEMO]
    if todo:
        for argv, result in zip(todo, parse(kind, release, [list(a) for a in todo])["results"]):
            _MEMO[(kind, release, argv)] = result


def parsed(kind: str, release: str, argvs: list[list[str]]) -> list[dict]:
    prime(kind, release, argvs)
    return [_MEMO[(kind, release, tuple(a))] for a in argvs]


def option_strings(kind: str, release: str) -> list[str]:
    """The parser's long options, from the process that parsed this release's commands when there was one."""
    if (kind, release) not in _OPTIONS:
        parse(kind, release, [])
    return _OPTIONS[(kind, release)]


def catalog_path(kind: str, release: str) -> Path:
    return ROOT / "profiles" / "_flags" / f"{'sglang' if kind == 'server' else 'sglang_router'}-{release}.txt"


def bench_catalog_path(release: str) -> Path:
    """The long options of ``release``'s sglang.bench_serving (bench_parser.py builds its parser)."""
    return ROOT / "profiles" / "_flags" / f"bench_serving-{release}.txt"


def interpreter(kind: str, release: str, directory: Path) -> Path:
    """An executable that runs ``release``'s parser environment as one interpreter, as an operator's virtual
    environment with SGLang installed does (what sglang_import_parser_python names)."""
    if kind != "server":
        return CACHE / f"router-{release}" / "bin" / "python"
    path = [CACHE / "stubs", CACHE / f"sglang-{release}", CACHE / f"deps-{release}"]
    script = directory / f"python-sglang-{release}"
    script.write_text("#!/bin/sh\nunset PYTHONHOME\n"
                      f"PYTHONPATH={shlex.quote(os.pathsep.join(str(p) for p in path))} "
                      f"exec {shlex.quote(str(CACHE / 'base' / 'bin' / 'python'))} \"$@\"\n", encoding="utf-8")
    script.chmod(0o755)
    return script
