# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Parses launch commands with a release's real argument parser; run as a script by an interpreter that has
SGLang (or sglang-router) installed, never imported by Ansible (SGLang brings torch; Ansible's Python need not).

stdin: JSON ``{"kind": "server" | "router", "argvs": [[...], ...], "by_release": {release: [[...], ...]}}``;
``by_release`` (optional) holds the commands rendered for each release, and the probe parses those of the release
it finds installed after ``argvs``.  stdout: JSON ``{"version": the installed release or null, "results": [{"ok":
bool, "error": str}, ...], "options": [every long option the parser accepts]}``.

Server commands go through ``ServerArgs.add_cli_args`` on a parser with abbreviations disabled (so ``--tp`` no
longer passes as ``--tp-size``); router commands through sglang_router's own CLI parser, also without
abbreviations, and the router's post-parse checks.  Users: the import's validation
(plugin_utils/importer/_import_validate.py) and the real-parser tests (tests/validation/parsers.py).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys

DISTRIBUTIONS = {"server": "sglang", "router": "sglang-router"}


def server_parser() -> argparse.ArgumentParser:
    from sglang.srt.server_args import ServerArgs  # pylint: disable=import-error

    parser = argparse.ArgumentParser(prog="sglang.launch_server", allow_abbrev=False)
    ServerArgs.add_cli_args(parser)
    return parser


def router_parser() -> argparse.ArgumentParser:
    from sglang_router.router_args import RouterArgs  # pylint: disable=import-error

    parser = argparse.ArgumentParser(prog="sglang_router.launch_router", allow_abbrev=False)
    RouterArgs.add_cli_args(parser, use_router_prefix=False, exclude_host_port=False)
    return parser


def installed_version(kind: str) -> str | None:
    """The installed distribution's version (what a profile's release names), None without its metadata."""
    from importlib import metadata

    try:
        return metadata.version(DISTRIBUTIONS[kind])
    except metadata.PackageNotFoundError:
        return None


def parse_all(kind: str, argvs: list[list[str]]) -> list[dict]:
    parser = server_parser() if kind == "server" else router_parser()
    results = []
    for argv in argvs:
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                namespace = parser.parse_args(argv)
                if kind == "router":
                    # The router's own post-parse checks (PD mode needs prefill and decode URLs, ...).
                    from sglang_router.router_args import RouterArgs  # pylint: disable=import-error

                    RouterArgs.from_cli_args(namespace, use_router_prefix=False)
            results.append({"ok": True, "error": ""})
        except SystemExit:
            lines = [line for line in err.getvalue().splitlines() if line.strip()]
            results.append({"ok": False, "error": lines[-1] if lines else "rejected"})
        except (ValueError, AssertionError) as exc:
            results.append({"ok": False, "error": f"{type(exc).__name__}: {exc}"})
    return results


def option_strings(kind: str) -> list[str]:
    """Every long option the release's parser accepts (for profiles/_flags/)."""
    parser = server_parser() if kind == "server" else router_parser()
    return sorted({s for action in parser._actions for s in action.option_strings if s.startswith("--")})


def answer(request: dict) -> dict:
    kind = request["kind"]
    version = installed_version(kind)
    argvs = list(request.get("argvs") or []) + list((request.get("by_release") or {}).get(version) or [])
    # Both in one process: importing a release's SGLang takes most of a call's time.
    return {"version": version, "results": parse_all(kind, argvs), "options": option_strings(kind)}


if __name__ == "__main__":
    # Run by path: its own folder (the collection's helpers) must not shadow anything SGLang imports.
    del sys.path[0]
    json.dump(answer(json.load(sys.stdin)), sys.stdout)
