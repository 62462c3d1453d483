# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Controller-side import of a best-practice document: writes its profiles into the operator's directory."""

from __future__ import annotations

import os

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.ascend.sglang.plugins.module_utils.files._atomic_files import place_all
from ansible_collections.ascend.sglang.plugins.plugin_utils.importer import _import_output, _import_profile, _import_validate
from ansible_collections.ascend.sglang.plugins.plugin_utils.importer._import_doc import ImportRefusal, read_document
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import Collector, PlanError
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._serialize import plain
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _settings
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._inputs import UNREADABLE, template_reader


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("source", "dest", "curate", "parser_python", "router_python"))
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars or {})
        args = plain(self._task.args)  # plain Python: Ansible's tagged types reach no writer
        args.update({option: value for option, value in self._run_values(task_vars or {}).items()
                     if not args.get(option)})
        if not args.get("source"):
            raise AnsibleActionFail("variable 'sglang_import_source' is not set: pass -e sglang_import_source=FILE "
                                    "(a best-practice document saved as text, or an MDX page)")
        if not args.get("dest"):
            raise AnsibleActionFail("variable 'sglang_profiles_dir' is not set: pass -e sglang_profiles_dir=DIR "
                                    "(the directory the profiles are written into)")
        interpreters = {kind: _interpreter(args.get(option), variable) for kind, option, variable in (
            ("server", "parser_python", "sglang_import_parser_python"),
            ("router", "router_python", "sglang_import_router_python"))}
        source = os.path.abspath(os.path.expanduser(str(args["source"])))
        dest = os.path.abspath(os.path.expanduser(str(args["dest"])))
        text = _read_source(source)
        collection = _import_profile.collection_profiles()
        # The collection's recorded deviations and figure corrections are the importer's only fixes; without
        # them (curate: false) every section that needs one is refused naming its line.
        curations = _import_profile.curations_by_section(collection) if args.get("curate", True) else {}
        try:
            _import_output.check_directory(dest, "sglang_profiles_dir")
            document = read_document(text, os.path.basename(source))
            items = _import_profile.import_document(document, curations, strict=False)
            planned = _import_output.plan_files(items, source, dest, collection)
            _import_output.check_destination(dest, [os.path.basename(p.path) for p in planned],
                                             "sglang_profiles_dir")
            # Before anything is written: a command its release's parser rejects refuses the import.
            profiles, refusals = _import_validate.imported_profiles(items, collection)
            verdict = _import_validate.validate(profiles, interpreters)
            if refusals or verdict.refusals:
                raise ImportRefusal("\n".join(refusals + verdict.refusals))
        except (ImportRefusal, _import_output.NotOurs) as exc:
            lines = str(exc).splitlines()
            result.update(failed=True, msg=f"sglang import of {os.path.basename(source)} refused: " + (
                lines[0] if len(lines) == 1 else f"{len(lines)} problems:\n" + "\n".join(f"  - {x}" for x in lines)),
                refusals=lines)
            return result
        files = [{"path": p.path, "data": p.content.encode("utf-8"), "mode": 0o644} for p in planned]
        try:
            placed = place_all([{"path": dest, "mode": 0o755}], files, bool(self._task.check_mode),
                               bool(self._task.diff))
        except OSError as exc:
            raise AnsibleActionFail(f"writing sglang_profiles_dir failed: {exc}") from None
        stale = [{"profile": item.id, **{k: str(v) for k, v in dev.items() if k in ("part", "seed")}}
                 for item in items for dev in item.stale]
        report = verdict.report + _import_output.report(planned)
        report += [f"not applied (the document no longer has its text): {s['profile']} {s['part']} {s['seed']!r}"
                   for s in stale]
        result.update(changed=bool(placed["changed"]), document=document.id, dest=dest,
                      profiles=[{"id": p.id, "path": p.path, "status": p.status, "differences": p.differences}
                                for p in planned],
                      stale_deviations=stale, validation=verdict.report, report=report,
                      msg=report[-1] if not stale else report[-1 - len(stale)])
        if placed.get("diff"):
            result["diff"] = placed["diff"]
        return result

    def _run_values(self, task_vars) -> dict:
        """The run's values of the options, read through the settings table (checked, the table's default where
        unset): import_profiles.yml passes none, so no Jinja default restates the table."""
        errors = Collector()
        read = template_reader(self._templar, errors)
        given = {name: read(task_vars, name, None) for name in _OPTIONS.values() if name in task_vars}
        values = {option: _settings.one_value(name, {k: v for k, v in given.items() if v is not UNREADABLE}, errors)
                  for option, name in _OPTIONS.items()}
        try:
            errors.raise_if_any()
        except PlanError as exc:
            raise AnsibleActionFail(exc.render("sglang import")) from None
        return values


# Option -> the run setting it takes when not given.
_OPTIONS = {"source": "sglang_import_source", "dest": "sglang_profiles_dir",
            "parser_python": "sglang_import_parser_python", "router_python": "sglang_import_router_python"}


def _read_source(source: str) -> str:
    """The document's text, refused when unreadable or longer than a best-practice document may be."""
    try:
        with open(source, encoding="utf-8") as handle:
            text = handle.read(_import_profile.MAX_CHARACTERS + 1)
    except (OSError, UnicodeDecodeError) as exc:
        raise AnsibleActionFail(f"variable 'sglang_import_source': cannot read '{source}': {exc}") from None
    if len(text) > _import_profile.MAX_CHARACTERS:
        raise AnsibleActionFail(f"variable 'sglang_import_source': '{source}' is longer than the "
                                f"{_import_profile.MAX_CHARACTERS} characters a best-practice document may have")
    return text


def _interpreter(value, variable: str) -> str | None:
    """An interpreter the operator named: an executable file on the controller, else a failure naming the variable."""
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        raise AnsibleActionFail(f"variable '{variable}' must be the path of a Python interpreter (a string)")
    path = os.path.abspath(os.path.expanduser(value))
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise AnsibleActionFail(f"variable '{variable}': '{path}' is not an executable file on the controller "
                                "(a Python interpreter with the release's package installed)")
    return path
