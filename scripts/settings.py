"""Roles' defaults/main.yml, the options of their meta/argument_specs.yml and their README.md, generated from the
settings table (plugins/plugin_utils/plan/_settings.py) and, for the READMEs, the hand-written parts of the argument specs
and the flow and example of each role below; and the typed record of the plan's settings
(plugins/plugin_utils/plan/_settings_record.py).

  .venv/bin/python scripts/settings.py write    # rewrite the generated files
  .venv/bin/python scripts/settings.py check    # exit 1 when a generated file differs from the table
"""

from __future__ import annotations

import json
import re
import sys
import textwrap
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import conftest  # noqa: E402,F401  (puts the collection on sys.path)  # pylint: disable=unused-import

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _settings  # noqa: E402

HEADER = ("# Generated from the settings table (plugins/plugin_utils/plan/_settings.py) by scripts/settings.py write:\n"
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


# ---- role READMEs ----------------------------------------------------------------------------------------
# Galaxy's importer (galaxy-importer, scripts/lint.sh's galaxy gate) refuses a collection whose roles have no
# README, and shows each one on the role's page: what the role does in the deployment flow, its variables (the
# table's rows of its argument specification, with their defaults), where every variable is documented, and a play.
# Written from the argument specs the collection ships, so the README cannot say what ansible-doc does not.

# The collection's variable reference, relative to roles/<role>/README.md.
VARIABLES_LINK = "../../docs/docsite/rst/variables.rst"
PLAN_IMPORT = ("# ansible-playbook -i INVENTORY this.yml -e sglang_profile=PROFILE_ID\n"
               "- name: Plan (sets hostvars['localhost'].sglang_plan, which the role reads)\n"
               "  ansible.builtin.import_playbook: ascend.sglang.plan\n\n")


def _server_flow(role: str) -> str:
    return (f"`playbooks/deploy.yml` runs it in a play of its own on the `{role}` group, after host tuning: it writes "
            f"the environment files, launchers and systemd units of the host's {role} services (through "
            "`ascend.sglang.sglang_service`), starts and enables them and restarts only those whose files changed. "
            "One health gate for every server follows (the `wait_healthy` entry point of `ascend.sglang.sglang_service`).")


def _server_example(role: str) -> str:
    return (PLAN_IMPORT + f"- name: {role.capitalize()} servers\n  hosts: {role}\n  gather_facts: false\n"
            f"  roles:\n    - role: ascend.sglang.{role}\n")


# Per role: its place in the flow (one or two sentences, from its tasks and playbooks/deploy.yml) and one play using
# it by FQCN (every example is syntax-checked by tests/integration/test_galaxy_metadata.py).
ROLE_DOCS: dict[str, tuple[str, str]] = {
    "host_tuning": (
        "`playbooks/deploy.yml` runs it on the `prefill`, `decode` and `mixed` hosts after preflight and the stack "
        "install, before any server starts; the router hosts, and hosts the plan does not name, are left alone.",
        PLAN_IMPORT + "- name: Tune the server hosts\n  hosts: prefill:decode:mixed\n  gather_facts: false\n"
        "  roles:\n    - role: ascend.sglang.host_tuning\n      vars:\n"
        "        sglang_host_tuning_governor: false   # the kernel settings only\n"),
    "prefill": (_server_flow("prefill"), _server_example("prefill")),
    "decode": (_server_flow("decode"), _server_example("decode")),
    "mixed": (_server_flow("mixed"), _server_example("mixed")),
    "router": (
        "`playbooks/deploy.yml` runs it last, on the `router` group, once every server is healthy: it installs "
        "sglang-router when asked (`sglang_router_install`) and deploys the router services through "
        "`ascend.sglang.sglang_service`; its `wait_healthy` entry point then waits for `/health`, makes every "
        "planned instance one of the router's workers and waits for `/readiness`.",
        PLAN_IMPORT + "- name: Start the router in front of the healthy servers\n  hosts: router\n"
        "  gather_facts: false\n  tasks:\n    - name: Router\n      ansible.builtin.include_role:\n"
        "        name: ascend.sglang.router\n\n    - name: Router readiness, with every planned instance as a worker\n"
        "      ansible.builtin.include_role:\n        name: ascend.sglang.router\n        tasks_from: wait_healthy\n"),
    "sglang_service": (
        "The internal role behind `ascend.sglang.prefill`, `decode`, `mixed` and `router` (`main`). "
        "`playbooks/deploy.yml` also runs its `install` (the server stack, right after preflight), `image` (the "
        "container image) and `wait_healthy` (one health gate for every server) entry points, and "
        "`playbooks/render.yml` its `render` entry point, which writes every host's files on the controller.",
        PLAN_IMPORT + "- name: Render every host's files on the controller (contacts no host)\n  hosts: localhost\n"
        "  gather_facts: false\n  tasks:\n    - name: Write every host's files\n"
        "      ansible.builtin.include_role:\n        name: ascend.sglang.sglang_service\n        tasks_from: render\n"
        "      vars:\n        sglang_render_dir: \"{{ playbook_dir }}/render\"\n"),
}


def _markdown(text: str) -> str:
    """Ansible's C() and I() markup (the only forms the table and the specs use) as Markdown code; one table cell."""
    text = re.sub(r"\b[CI]\(([^()]*(\([^()]*\)[^()]*)*)\)", r"`\1`", " ".join(text.split()))
    return text.replace("|", "\\|")


def _default(row) -> str:
    if row.default is _settings.NO_DEFAULT:
        return "(none)"
    if isinstance(row.default, str):
        return f"`{row.default}`" if row.default else '`""`'
    return f"`{json.dumps(row.default)}`"


def _paragraph(text: str) -> str:
    return textwrap.fill(text, width=115, break_long_words=False, break_on_hyphens=False) + "\n\n"


def readme_text(role: str) -> str:
    entries = yaml.safe_load(argument_specs_text(role))["argument_specs"]   # as written next to it
    flow, example = ROLE_DOCS[role]
    rows = [row for row in _settings.TABLE if any(f"{role}:{entry}" in row.entries for entry in entries)]
    several = len(entries) > 1
    out = [f"# ascend.sglang.{role}\n\n",
           f"<!-- Generated by scripts/settings.py write from roles/{role}/meta/argument_specs.yml and the settings\n"
           "     table (plugins/plugin_utils/plan/_settings.py): edit those, or the role's text in scripts/settings.py. -->\n\n",
           _paragraph(f"{_markdown(entries['main']['short_description'])}. {flow}")]
    if several:
        out.append("Entry points (`tasks_from`):\n\n")
        out.extend(f"- `{name}`: {_markdown(spec['short_description'])}\n" for name, spec in entries.items())
        out.append("\n")
    out.append("## Variables\n\n")
    # As its defaults/main.yml says: the thin server roles hold no defaults, the included sglang_service's apply.
    if not any(role in row.defaults_in for row in rows):
        out.append(_paragraph("No defaults of its own: its options are those of `ascend.sglang.sglang_service`, "
                              "which it includes, with their defaults."))
    elif any(role not in row.defaults_in and row.default is not _settings.NO_DEFAULT for row in rows):
        out.append(_paragraph("Where its `defaults/main.yml` has no default, the default is that of "
                              "`ascend.sglang.sglang_service`, which it includes."))
    out.append("| Name | Type | Default | Description |" + (" Entry points |" if several else "") + "\n")
    out.append("|---|---|---|---|" + ("---|" if several else "") + "\n")
    for row in rows:
        kind = f"{row.type} of {row.elements}" if row.elements else row.type
        doc = _markdown(row.doc) + (f" One of {', '.join(f'`{c}`' for c in row.choices)}." if row.choices else "")
        cells = [f"`{row.name}`", kind, _default(row), doc]
        if several:
            cells.append(", ".join(f"`{e}`" for e in entries if f"{role}:{e}" in row.entries))
        out.append("| " + " | ".join(cells) + " |\n")
    out.append("\n" + _paragraph(
        f"Every `sglang_*` variable of the collection, its scope and where it may be set: the "
        f"[variable reference]({VARIABLES_LINK}). `ansible-doc -t role ascend.sglang.{role}` shows the argument "
        "specification of each entry point."))
    out.append(f"## Example\n\n```yaml\n{example}```\n")
    return "".join(out)


# The Python type of a row's value by its argument_specs type (a row the plan resolves says its own: ``resolved``).
_PYTHON_TYPES = {"str": "str", "path": "str", "int": "int", "bool": "bool", "float": "float",
                 "dict": "dict[str, Any]", "list": "list[Any]", "raw": "Any"}
RECORD = ROOT / "plugins" / "plugin_utils" / "plan" / "_settings_record.py"
_RECORD_HEAD = '''# Copyright: ascend.sglang contributors
# Apache License 2.0
# Generated from the settings table (plugins/plugin_utils/plan/_settings.py) by scripts/settings.py write:
# edit the table, not this file.
"""The plan's deployment and run settings as one frozen, typed record: a field per row of the settings table the
plan holds (``sglang_plan.settings``: checked, defaults filled in, the run settings resolved against the plan by
plan/_run_settings.py). Controller code reads the attributes (``Plan.typed_settings``), never a name with a default
of its own. A row without a default is None when unset. Private to the collection; pure, no Ansible import."""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping


@dataclasses.dataclass(frozen=True)
class PlanSettings:
'''
_RECORD_TAIL = '''
    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PlanSettings:
        """The record of ``sglang_plan.settings`` (a missing row: None)."""
        return cls(**{field.name: data.get(field.name) for field in dataclasses.fields(cls)})
'''


def record_rows() -> list:
    """The rows the plan's settings hold: the deployment's and the run's, those with a default or a checker (a row
    checked by the planner with the profile and without a default is the planner's, not a setting of the plan)."""
    return [row for row in _settings.TABLE if row.scope in _settings.ONE_VALUE
            and (row.default is not _settings.NO_DEFAULT or row.check is not None)]


def record_text() -> str:
    """plugins/plugin_utils/plan/_settings_record.py: a field per row of ``record_rows``, typed by the row."""
    lines = []
    for row in record_rows():
        kind = row.resolved or _PYTHON_TYPES[row.type]
        if row.type == "list" and row.elements in _PYTHON_TYPES:
            kind = f"list[{_PYTHON_TYPES[row.elements]}]"
        if row.default is _settings.NO_DEFAULT and kind != "Any" and not row.resolved:  # resolved: always set
            kind += " | None"
        lines.append(f"    {row.name}: {kind}")
    return _RECORD_HEAD + "\n".join(lines) + "\n" + _RECORD_TAIL


def expected() -> dict[Path, str]:
    out = {RECORD: record_text()}
    for role in _roles():
        out[ROOT / "roles" / role / "defaults" / "main.yml"] = defaults_text(role)
        out[ROOT / "roles" / role / "meta" / "argument_specs.yml"] = argument_specs_text(role)
        out[ROOT / "roles" / role / "README.md"] = readme_text(role)
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
