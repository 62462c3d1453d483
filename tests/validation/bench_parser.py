"""The argument parser a release's ``sglang.bench_serving`` builds, without running the benchmark.

bench_serving builds its parser in its ``if __name__ == "__main__":`` block (0.5.6.post2 to 0.5.13.post1) or, from
0.5.16 on, in ``cli_main()`` of ``sglang.benchmark.serving``, which that block calls.  Running the module would
import aiohttp, transformers, numpy and SGLang's runtime; instead its source is read with ``ast``: the statements
of the builder up to ``parser.parse_args()`` run after the module-level definitions they need (transitively: the
backends table that gives ``--backend`` its choices, the custom ``type=`` functions and ``Action`` classes), with
every import outside the standard library bound to an inert placeholder (no definition the parser needs calls
one: the benchmark's functions are defined, never run).  So the parser is the release's own ``add_argument`` calls,
choices and types included, built by the standard library alone in milliseconds, for every release in the parser
cache, and from the unpacked sources only (test_bench_commands_parse reads each release's; update_flag_catalog.py
writes profiles/_flags/bench_serving-<release>.txt from it).

Abbreviations are disabled on the built parser, as the server probe does: an abbreviated argument argparse takes
today breaks as soon as a release adds another with the same prefix.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import contextlib
import io
import sys
import types
from pathlib import Path

from parsers import CACHE

ENTRY = Path("sglang") / "bench_serving.py"


class _InertType(type):
    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return cls

    def __getitem__(cls, _key):
        return cls

    def __iter__(cls):
        # Subscription alone would make iteration endless.
        return iter(())


class Inert(metaclass=_InertType):
    """What a name imported from outside the standard library is bound to: callable, subclassable, any
    attribute; none of the parser's own definitions uses one when built or parsing."""

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return Inert

    def __getattr__(self, name):
        return Inert

    def __iter__(self):
        return iter(())


def _is_main_guard(node: ast.stmt) -> bool:
    return (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
            and isinstance(node.test.left, ast.Name) and node.test.left.id == "__name__")


def _builds_parser(nodes: list[ast.stmt]) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute))
               and (n.func.id if isinstance(n.func, ast.Name) else n.func.attr) == "ArgumentParser"
               for node in nodes for n in ast.walk(node))


def _module_file(root: Path, module: str) -> Path:
    base = root.joinpath(*module.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def builder(root: Path) -> tuple[ast.Module, list[ast.stmt], Path]:
    """The module holding the parser's construction, the construction's statements and the module's file:
    bench_serving's main block, or the function it calls there (followed through ``from ... import``)."""
    path = root / ENTRY
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    main = next((n for n in tree.body if _is_main_guard(n)), None)
    if main is None:
        raise LookupError(f"{path}: no main block")
    if _builds_parser(main.body):
        return tree, main.body, path
    called = [n.func.id for n in ast.walk(main) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    for _hop in range(4):
        for name in called:
            func = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
            if func is not None and _builds_parser(func.body):
                return tree, func.body, path
            source = next((n.module for n in tree.body if isinstance(n, ast.ImportFrom) and n.module
                           and any((a.asname or a.name) == name for a in n.names)), None)
            if source is not None:
                path = _module_file(root, source)
                tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
                break
        else:
            break
    raise LookupError(f"{root / ENTRY}: the parser's construction was not found")


def _before_parse(body: list[ast.stmt]) -> list[ast.stmt]:
    """The construction: every statement before the one that calls ``parse_args``."""
    out = []
    for node in body:
        if any(isinstance(n, ast.Attribute) and n.attr in ("parse_args", "parse_known_args") for n in ast.walk(node)):
            return out
        out.append(node)
    raise LookupError("the construction never calls parse_args")


def _bound(node: ast.stmt) -> set[str]:
    """The names a top-level statement binds."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    targets = node.targets if isinstance(node, ast.Assign) else \
        [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _used(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _stdlib(module: str | None, level: int) -> bool:
    return not level and bool(module) and module.split(".")[0] in sys.stdlib_module_names


def _needed(tree: ast.Module, construction: list[ast.stmt]) -> tuple[list[ast.stmt], set[str]]:
    """The module's statements the construction needs (transitively, in source order) and the names to bind to
    the placeholder (imported from outside the standard library, or bound nowhere the reading follows)."""
    defining: dict[str, list[int]] = {}
    for index, node in enumerate(tree.body):
        for name in _bound(node):
            defining.setdefault(name, []).append(index)
    keep: dict[int, ast.stmt] = {}
    inert: set[str] = set()
    todo = list(_used(ast.Module(body=construction, type_ignores=[])))
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen or hasattr(builtins, name):
            continue
        seen.add(name)
        if name not in defining:
            inert.add(name)
        for index in defining.get(name, []):
            node = tree.body[index]
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                # One import statement may bind several needed names: its kept form gathers their aliases.
                aliases = [a for a in node.names if (a.asname or a.name).split(".")[0] == name]
                stdlib = [a for a in aliases if _stdlib(a.name if isinstance(node, ast.Import) else node.module,
                                                        getattr(node, "level", 0))]
                if not stdlib:
                    inert.add(name)
                    continue
                previous = list(keep[index].names) if index in keep else []
                keep[index] = ast.Import(names=previous + stdlib) if isinstance(node, ast.Import) else \
                    ast.ImportFrom(module=node.module, names=previous + stdlib, level=0)
            elif index not in keep:
                keep[index] = node
                todo.extend(_used(node))
    # A name both imported and defined (a fallback in ``try``) ends as its kept definition: those run after.
    return [keep[i] for i in sorted(keep)], inert


def build(release: str) -> argparse.ArgumentParser:
    """The argparse parser ``release``'s bench_serving builds (abbreviations disabled)."""
    root = CACHE / f"sglang-{release}"
    tree, body, path = builder(root)
    construction = _before_parse(body)
    statements, inert = _needed(tree, construction)
    future = [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "__future__"]
    module = ast.fix_missing_locations(ast.Module(body=future + statements + construction, type_ignores=[]))
    # A module of its own (dataclasses look their class's module up in sys.modules), per release.
    home = types.ModuleType(f"_bench_serving_{release.replace('.', '_')}")
    home.__dict__.update({name: Inert for name in inert})
    sys.modules[home.__name__] = home
    exec(compile(module, str(path), "exec"), home.__dict__)  # pylint: disable=exec-used
    namespace = home.__dict__
    parsers = [v for v in namespace.values() if isinstance(v, argparse.ArgumentParser)]
    if len(parsers) != 1:
        raise LookupError(f"{path}: the construction built {len(parsers)} parsers")
    parser = parsers[0]
    parser.allow_abbrev = False
    parser.prog = "sglang.bench_serving"
    return parser


_BUILT: dict[str, argparse.ArgumentParser] = {}


def parser_of(release: str) -> argparse.ArgumentParser:
    if release not in _BUILT:
        _BUILT[release] = build(release)
    return _BUILT[release]


def parse(release: str, argv: list[str]) -> dict:
    """``{"ok": bool, "error": argparse's message (it names the argument)}``."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            parser_of(release).parse_args(argv)
    except SystemExit:
        lines = [line for line in err.getvalue().splitlines() if line.strip()]
        return {"ok": False, "error": lines[-1] if lines else "rejected"}
    return {"ok": True, "error": ""}


def option_strings(release: str) -> list[str]:
    """Every long option the release's bench_serving takes (profiles/_flags/bench_serving-<release>.txt)."""
    return sorted({s for action in parser_of(release)._actions  # pylint: disable=protected-access
                   for s in action.option_strings if s.startswith("--")})
