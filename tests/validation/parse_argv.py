"""Parses launch commands with a release's real argument parser (runs inside that release's environment).

stdin: JSON {"kind": "server" | "router", "argvs": [[...], ...]}; stdout: JSON {"results": [{"ok": bool,
"error": str}, ...], "options": [every long option the parser accepts]}. Server commands go through ``ServerArgs.add_cli_args`` on a parser
with abbreviations disabled (so ``--tp`` no longer passes as ``--tp-size``); router commands through
sglang_router's own CLI parser, also without abbreviations.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys


def server_parser() -> argparse.ArgumentParser:
    from sglang.srt.server_args import ServerArgs

    parser = argparse.ArgumentParser(allow_abbrev=False)
    ServerArgs.add_cli_args(parser)
    return parser


def router_parser() -> argparse.ArgumentParser:
    from sglang_router.router_args import RouterArgs

    parser = argparse.ArgumentParser(allow_abbrev=False)
    RouterArgs.add_cli_args(parser, use_router_prefix=False, exclude_host_port=False)
    return parser


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
                    from sglang_router.router_args import RouterArgs

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


if __name__ == "__main__":
    # Both in one process: importing a release's SGLang takes most of a call's time.
    request = json.load(sys.stdin)
    json.dump({"results": parse_all(request["kind"], request["argvs"]), "options": option_strings(request["kind"])},
              sys.stdout)
