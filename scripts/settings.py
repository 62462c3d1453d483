"""Roles' defaults/main.yml and the options of their meta/argument_specs.yml, generated from the settings table
(plugins/plugin_utils/_settings.py).

  .venv/bin/python scripts/settings.py write    # rewrite the generated files
  .venv/bin/python scripts/settings.py check    # exit 1 when a generated file differs from the table
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import conftest  # noqa: E402,F401  (puts the collection on sys.path)  # pylint: disable=unused-import

from ansible_collections.ascend.sglang.plugins.plugin_utils import _settings  # noqa: E402

HEADER = ("# Generated from the settings table (plugins/plugin_utils/_settings.py) by scripts/settings.py write:\n"
          "# edit the table, not this file.\n")


class _Dumper(yaml.SafeDumper):
    """Block lists indented under their key, as the collection's YAML is written."""

    def increase_indent(self, flow=False, indentless=False):  # noqa: D102 - PyYAML hook
        return super().increase_indent(flow, False)


def _dump(data) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, width=110, default_flow_style=False, allow_unicode=True)


def _roles() -> list[str]:
    return sorted(p.name for p in (ROOT / "roles").iterdir() if (p / "meta").is_dir())


def defaults_text(role: str) -> str:
    rows = [row for row in _settings.TABLE if role in row.defaults_in]
    parts = ["---\n", HEADER]
    if not rows:
        parts.append("# No defaults of its own: its options are those of ascend.sglang.sglang_service.\n")
    for row in rows:
        parts.append("\n" + textwrap.fill(row.doc, width=110, initial_indent="# ", subsequent_indent="# ") + "\n")
        parts.append(yaml.safe_dump({row.name: row.default}, default_flow_style=False, width=1000))
    return "".join(parts)


def argument_specs_text(role: str) -> str:
    path = ROOT / "roles" / role / "meta" / "argument_specs.yml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    for entry, spec in data["argument_specs"].items():
        key = f"{role}:{entry}"
        options = {row.name: row.spec() for row in _settings.TABLE if key in row.entries}
        if options:
            spec["options"] = options
        else:
            spec.pop("options", None)
    return "---\n" + HEADER.replace("# edit", "# options generated; the rest is written by hand, edit") + _dump(data)


def expected() -> dict[Path, str]:
    out = {}
    for role in _roles():
        out[ROOT / "roles" / role / "defaults" / "main.yml"] = defaults_text(role)
        out[ROOT / "roles" / role / "meta" / "argument_specs.yml"] = argument_specs_text(role)
    return out


def stale() -> list[str]:
    return [str(p.relative_to(ROOT)) for p, text in expected().items()
            if not p.exists() or p.read_text(encoding="utf-8") != text]


def main(argv: list[str]) -> int:
    command = argv[1] if len(argv) > 1 else "check"
    if command == "write":
        for path, text in expected().items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        return 0
    if command == "check":
        bad = stale()
        for name in bad:
            print(f"{name} differs from the settings table: run scripts/settings.py write", file=sys.stderr)
        return 1 if bad else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
