"""No playbook, role task or module restates a default of the settings table (plugins/plugin_utils/plan/_settings.py).

The table holds the default of every sglang_* variable; the operations playbooks read the values from the plan
(sglang_plan.settings, sglang_plan.hosts[host].settings, the ascend.sglang.sglang_host_settings filter). A literal
``sglang_X | default(5)`` beside the table, or a module option defaulting to the table's value, would keep the old
value the day the table's changes. Also: stop.yml's purge and the deployment name the same files."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.ascend.sglang.plugins.filter.sglang_operations import sglang_host_settings, sglang_purge_files
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import Collector
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _settings as table
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import HostPlan
from ansible_collections.ascend.sglang.plugins.plugin_utils.targets._host_files import host_files, purge_paths

from tests.unit.plans import make_plan

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("playbooks/**/*.yml", "roles/*/tasks/*.yml", "roles/*/handlers/*.yml", "roles/*/templates/*")
DEFAULT_RE = re.compile(r"\b(sglang_[a-z0-9_]+)\s*\|\s*default\(")
# Guards that only say "unset" (the row has no default of its own): omit, an empty value, none.
EMPTY = re.compile(r"(''|\"\"|\[\]|\{\}|none|None)(\s*,\s*(true|True))?")
LITERAL = re.compile(r"-?[0-9][0-9._]*|true|false|True|False|none|None|'[^']*'|\"[^\"]*\"|\[.*\]|\{.*\}", re.S)


def _argument(text: str, start: int) -> str:
    """The argument of the default( call opening at ``start``, up to its closing parenthesis."""
    depth = 1
    for index in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[index], 0)
        if depth == 0:
            return text[start:index].strip()
    return text[start:].strip()


def restated(text: str) -> list[tuple[int, str, str]]:
    """(line, variable, argument) of every default() that restates or shadows a table default: any default but
    omit on a row that has one, a non-empty literal on any row."""
    found = []
    for match in DEFAULT_RE.finditer(text):
        name = match.group(1)
        row = table.BY_NAME.get(name)
        if row is None:
            continue
        argument = _argument(text, match.end())
        if argument == "omit":
            continue
        has_default = row.default is not table.NO_DEFAULT
        literal = LITERAL.fullmatch(argument.split(",")[0].strip()) is not None and not EMPTY.fullmatch(argument)
        if has_default or literal:
            found.append((text.count("\n", 0, match.start()) + 1, name, argument))
    return found


def test_the_scan_sees_a_restated_default() -> None:
    assert restated("x: \"{{ sglang_status_timeout | default(5) }}\"\n") == [(1, "sglang_status_timeout", "5")]
    assert restated("{{ hostvars['localhost'].sglang_plan.settings.sglang_etc_dir | default('/etc/x') }}")
    assert restated("{{ sglang_etc_dir | default(other) }}")  # shadows the table's default
    assert not restated("{{ sglang_profile | default(omit) }} {{ sglang_render_dir | default('', true) }}")
    assert not restated("{{ sglang_bench_python | default(sglang_plan.bench.python) }}")


def test_no_playbook_or_role_restates_a_table_default() -> None:
    problems = [f"{path.relative_to(ROOT)}:{line}: {name} | default({argument}): "
                + (f"the settings table's default is {table.BY_NAME[name].default!r}; read it from the plan"
                   if table.BY_NAME[name].default is not table.NO_DEFAULT
                   else "a default beside the settings table; give the row this default and read it from the plan")
                for pattern in SCANNED for path in sorted(ROOT.glob(pattern)) if path.is_file()
                for line, name, argument in restated(path.read_text(encoding="utf-8"))]
    assert not problems, "\n".join(problems)


# The done-when as a test: no ``| default(`` around an operator's setting in playbooks or roles, read raw
# (``sglang_X``, ``hostvars[h].sglang_X``) or from the plan (``sglang_plan.settings.sglang_X``, an alias of it), and no
# operator's setting as the argument of a ``default(`` (a chain that falls back on the raw variable).  The plan holds
# every deployment and run setting, checked (None where unset and without a default: a module takes None as unset);
# a step that runs before the plan or without one (plan.yml, kubernetes.yml, import_profiles.yml) lets its action
# read the value through the table; sglang_secrets, whose values never enter the plan, is read by the render action.
SETTING_DEFAULT_RE = re.compile(r"(?<![\w])(sglang_[a-z0-9_]+)\s*\|\s*default\(")
SETTING_AS_DEFAULT_RE = re.compile(r"\bdefault\(\s*(?:hostvars\[[^\]]*\]\.)?(sglang_[a-z0-9_]+)\b(?!\s*\.)")
OPERATOR_SCOPES = (table.DEPLOYMENT, table.HOST, table.RUN)
# Every file of the playbooks and the roles a value is templated in.
SETTING_SCANNED = ("playbooks/**/*.yml", "roles/**/*.yml", "roles/*/templates/*")


def setting_defaults(text: str) -> list[tuple[int, str]]:
    """(line, variable) of every ``| default(`` around an operator's setting, and of every ``default(`` falling back
    on one; the collection's own facts (internal rows, ``__sglang_*``) are not settings."""
    found = []
    for regex in (SETTING_DEFAULT_RE, SETTING_AS_DEFAULT_RE):
        for match in regex.finditer(text):
            row = table.BY_NAME.get(match.group(1))
            line_start = text.rfind("\n", 0, match.start()) + 1
            if row is None or row.scope not in OPERATOR_SCOPES:
                continue
            if text[line_start:match.start()].lstrip().startswith("#"):
                continue
            found.append((text.count("\n", 0, match.start()) + 1, row.name))
    return sorted(found)


def test_the_scan_sees_a_setting_read_with_a_default() -> None:
    assert setting_defaults("x: \"{{ sglang_npu_smi | default(omit) }}\"\n") == [(1, "sglang_npu_smi")]
    assert setting_defaults("{{ hostvars['localhost'].sglang_plan.settings.sglang_npu_smi | default(omit) }}")
    assert setting_defaults("{{ __sglang_run.sglang_npu_smi | default(omit) }}")
    assert setting_defaults("{{ hostvars[h].sglang_secrets | default({}) }}")
    assert setting_defaults("{{ x | default(sglang_bench_python) }}") == [(1, "sglang_bench_python")]
    assert not setting_defaults("{{ x | default(sglang_plan.bench.python) }}")  # the plan, an internal fact
    assert not setting_defaults("{{ __sglang_x | default(1) }} {{ sglang_stage_observed | default({}) }}")
    assert not setting_defaults("# sglang_npu_smi | default(omit)\n{{ sglang_fleet_record | default(none) }}")


def test_no_playbook_or_role_puts_a_default_around_a_setting() -> None:
    problems = [f"{path.relative_to(ROOT)}:{line}: default() around {name}: read sglang_plan.settings.{name} as it "
                "is (the plan holds every setting, None where unset), or let the action read it through the table "
                "where no plan exists"
                for pattern in SETTING_SCANNED for path in sorted(ROOT.glob(pattern))
                if path.is_file() for line, name in setting_defaults(path.read_text(encoding="utf-8"))]
    assert not problems, "\n".join(problems)


def _documented_options(source: str) -> dict[str, dict]:
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "DOCUMENTATION" for t in node.targets):
            return (yaml.safe_load(node.value.value) or {}).get("options") or {}
    return {}


def _spec_defaults(source: str) -> dict[str, tuple[int, object]]:
    """option -> (line, default) of the argument spec's entries ({"opt": {"default": ...}} and dict(default=...))."""
    out = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and isinstance(value, (ast.Dict, ast.Call)):
                    pairs = (zip(value.keys, value.values) if isinstance(value, ast.Dict)
                             else ((ast.Constant(k.arg), k.value) for k in value.keywords))
                    for inner_key, inner_value in pairs:
                        if isinstance(inner_key, ast.Constant) and inner_key.value == "default":
                            try:
                                out[key.value] = (value.lineno, ast.literal_eval(inner_value))
                            except ValueError:
                                pass
    return out


# Modules whose options are the rows of another word: the health wait takes sglang_health_*.
OPTION_WORDS = {"sglang_wait_healthy": "health"}
# Modules run on their own, without a plan, that no playbook, role or action of the collection calls: their
# defaults are where the software installs itself, as the table's (npu_facts: ``ansible -m ascend.sglang.npu_facts``).
STANDALONE = {"npu_facts"}


def rows_named_after(module: str, option: str) -> list[table.Setting]:
    """The rows an option is named after: sglang_<option>, or <module's first word>_<option> (sglang_bench's
    timeout is sglang_bench_timeout, sglang_status_report's fail_unhealthy is sglang_status_fail_unhealthy)."""
    word = OPTION_WORDS.get(module) or (module.split("_")[1] if module.count("_") else module)
    names = {f"sglang_{option}", f"sglang_{word}_{option}", f"{module}_{option}"}
    return [table.BY_NAME[n] for n in sorted(names) if n in table.BY_NAME]


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _same(a: object, b: object) -> bool:
    """Equal values of one kind (2 and 2.0 are the same number; True is not 1)."""
    return (type(a) is type(b) or (_number(a) and _number(b))) and a == b


def test_no_module_option_defaults_to_a_table_default() -> None:
    problems = []
    for path in sorted((ROOT / "plugins" / "modules").glob("*.py")):
        source = path.read_text(encoding="utf-8")
        module = path.stem
        if module in STANDALONE:
            continue
        documented = {k: (None, v.get("default")) for k, v in _documented_options(source).items()
                      if isinstance(v, dict) and "default" in v}
        for where, defaults in (("DOCUMENTATION", documented), ("argument_spec", _spec_defaults(source))):
            for option, (line, default) in defaults.items():
                for row in rows_named_after(module, option):
                    if row.default is not table.NO_DEFAULT and _same(default, row.default):
                        problems.append(f"{path.relative_to(ROOT)}{'' if line is None else f':{line}'}: {where} option "
                                        f"{option} defaults to {default!r}, the default of {row.name} in the settings "
                                        "table; make it required (the playbooks pass the plan's value)")
    assert not problems, "\n".join(problems)


def test_a_standalone_module_is_called_by_no_playbook_role_or_action() -> None:
    for module in STANDALONE:
        callers = [path for pattern in ("playbooks/**/*.yml", "roles/**/*.yml", "plugins/action/*.py")
                   for path in ROOT.glob(pattern) if f"ascend.sglang.{module}" in path.read_text(encoding="utf-8")]
        assert not callers, f"{module} is called by {callers}: pass it the plan's settings and drop its defaults"


def test_the_plan_settings_hold_every_default_of_the_deployment_and_the_run() -> None:
    checked = table.check_one_values({"sglang_status_timeout": 7, "sglang_stop_purge": "x"}, errors := Collector())
    wanted = {row.name for row in table.TABLE if row.scope in table.ONE_VALUE and row.default is not table.NO_DEFAULT}
    assert wanted <= set(checked)
    assert checked["sglang_status_timeout"] == 7
    # A refused value is reported and leaves the table's default.
    assert checked["sglang_stop_purge"] is False and errors.findings


def test_a_host_outside_the_plan_gets_its_own_values_over_the_table_defaults() -> None:
    _unused, plan = make_plan("deepseek_r1_pd32", prefill=1, decode=2, router=1)
    plan["hosts"]["decode0"]["settings"]["sglang_etc_dir"] = "/planned"
    assert sglang_host_settings(plan, "decode0")["sglang_etc_dir"] == "/planned"
    left = sglang_host_settings(plan, "b", {"sglang_etc_dir": "/own"})
    assert left == dict(table.defaults(table.HOST), sglang_etc_dir="/own")
    assert sglang_host_settings(plan, "b") == table.defaults(table.HOST)
    # Its own values are checked by the table as a planned host's are: a refused one names the host and variable,
    # and no path of it reaches the purge.
    with pytest.raises(AnsibleFilterError, match="host 'b', variable 'sglang_etc_dir'"):
        sglang_host_settings(plan, "b", {"sglang_etc_dir": "relative/dir"})


def _service(name: str, role: str = "decode", **extra) -> dict:
    return dict({"name": name, "role": role, "argv": ["python3"], "env": {}, "nnodes": 1, "node_rank": 0,
                 "instance": 0, "inventory_host": "h", "host": "10.0.0.1", "port": 8000, "bootstrap_port": None,
                 "dist_init_addr": None, "health_url": None, "ready_url": None, "instance_key": name,
                 "depends_on": [], "listens": {}}, **extra)


def test_the_purge_removes_every_file_the_host_plan_writes_and_what_an_earlier_one_left() -> None:
    host_plan = HostPlan.from_dict({"services": [_service("sglang-decode-i0-r0"),
                                                 _service("sglang-decode-i1-r0", secret_flags=["--k"])],
                                    "cann": {}, "host_tuning": {}})
    settings = {"sglang_etc_dir": "/e", "sglang_libexec_dir": "/l", "sglang_systemd_dir": "/u",
                "sglang_sysctl_dir": "/s", "sglang_watchdog_state_dir": "/w"}
    paths = purge_paths(host_plan, settings)
    written = [f"{settings[f.dir]}/{f.name}" for f in host_files(host_plan, settings, secrets={"decode": {"--k": "v"}})]
    assert set(written) <= set(paths) and len(paths) == len(set(paths))
    for name in ("sglang-decode-i0-r0", "sglang-decode-i1-r0"):
        assert {f"/u/{name}.service", f"/e/{name}.env", f"/e/{name}.secrets", f"/l/{name}.sh",
                f"/u/sglang-watchdog-{name}.service", f"/e/{name}.watchdog.json",
                f"/run/sglang/{name}.service.started"} <= set(paths)
    assert {"/l/sglang_watchdog.py", "/w", "/l/sglang_record_start.sh", "/e/cann_env.sh",
            "/s/90-sglang.conf"} <= set(paths)
    # A host that left the plan: the host's own files, through the filter with the host's settings.
    _unused, plan = make_plan("deepseek_r1_pd32", prefill=1, decode=2, router=1)
    left = sglang_purge_files(plan, "gone", sglang_host_settings(plan, "gone", {"sglang_etc_dir": "/own"}))
    assert "/own/cann_env.sh" in left and not any(p.endswith(".env") for p in left)


# ---- Python: no literal default of a setting the table checks ------------------------------------------------

def _setting_named(node: ast.AST, constants: dict[str, str]) -> str | None:
    """The setting ``node`` reads: ``x.get(NAME ...)`` or ``x[NAME]``, NAME a "sglang_*" string or a module constant
    holding one."""
    key = None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args:
        key = node.args[0]
    elif isinstance(node, ast.Subscript):
        key = node.slice
    if isinstance(key, ast.Constant) and isinstance(key.value, str):
        name = key.value
    elif isinstance(key, ast.Name):
        name = constants.get(key.id, "")
    else:
        return None
    row = table.BY_NAME.get(name)
    # A row checked by the planner with the profile and without a default is the planner's to default.
    return name if row is not None and (row.default is not table.NO_DEFAULT or row.check is not None) else None


def _literal(node: ast.AST) -> bool:
    try:
        value = ast.literal_eval(node)
    except ValueError:
        return False
    return value not in (None, "", [], {}, (), False)


def python_restated(source: str) -> list[tuple[int, str, str]]:
    """(line, setting, literal) of every ``x.get(setting, literal)`` and ``x.get(setting) or literal`` (or
    ``x[setting] or literal``) of a setting the table checks or defaults."""
    tree = ast.parse(source)
    constants = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
                 and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
                 for t in n.targets if isinstance(t, ast.Name)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and len(node.args) == 2 and _literal(node.args[1]):
            name = _setting_named(node, constants)
            if name:
                found.append((node.lineno, name, ast.unparse(node.args[1])))
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and _literal(node.values[-1]):
            name = next((n for n in (_setting_named(v, constants) for v in node.values[:-1]) if n), None)
            if name:
                found.append((node.lineno, name, ast.unparse(node.values[-1])))
    return found


def test_the_python_scan_sees_a_restated_default() -> None:
    assert python_restated('d.get("sglang_state_dir") or "sglang-state"\n') == [(1, "sglang_state_dir", "'sglang-state'")]
    assert python_restated('V = "sglang_instances_per_host"\nh.settings.get(V, 1)\n') == [
        (2, "sglang_instances_per_host", "1")]
    assert python_restated('s["sglang_stage_port"] or 8873') and not python_restated('d.get("sglang_retire") or []')
    assert not python_restated('v.get("sglang_container_engine", "podman")')  # the planner's row: its default


def test_no_python_under_plugins_restates_a_table_default() -> None:
    generated = {"_settings.py", "_settings_record.py"}
    problems = [f"{path.relative_to(ROOT)}:{line}: {name} defaults to {literal} beside the settings table: read the "
                "plan's value (Plan.typed_settings, a host's settings), which the table filled in"
                for path in sorted((ROOT / "plugins").rglob("*.py")) if path.name not in generated
                for line, name, literal in python_restated(path.read_text(encoding="utf-8"))]
    assert not problems, "\n".join(problems)


def test_the_typed_settings_record_holds_every_setting_of_a_plan() -> None:
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import typed_plan
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._settings_record import PlanSettings
    data = make_plan("qwen3_32b_a3_2c_mixed_3k5_1k5_50ms", mixed=2, router=1)[1]
    fields = {f.name for f in dataclasses.fields(PlanSettings)}
    assert set(data["settings"]) <= fields
    record = typed_plan(data).typed_settings
    assert record.sglang_restart_batch == 1 and record.sglang_restart_only == ["mixed-i0", "mixed-i1"]
    assert record.sglang_state_dir == table.BY_NAME["sglang_state_dir"].default
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.sglang_restart_batch = 2  # type: ignore[misc]


def test_a_step_without_a_plan_reads_a_setting_through_the_table() -> None:
    """plan.yml's, kubernetes.yml's and import_profiles.yml's actions: checked by the row, its default where unset."""
    errors = Collector()
    assert table.one_value("sglang_k8s_kind", {}, errors) == "rbg"
    assert table.one_value("sglang_profiles_dir", {}, errors) is None
    assert table.one_value("sglang_profile", {"sglang_profile": "p"}, errors) == "p"
    assert not errors.findings
    assert table.one_value("sglang_profiles_dir", {"sglang_profiles_dir": " "}, errors) is None
    assert [f.variable for f in errors.findings] == ["sglang_profiles_dir"]
    with pytest.raises(ValueError):
        table.one_value("sglang_etc_dir", {}, errors)  # a host setting differs per host


# ---- Modules and actions: an option the playbooks pass from the plan's settings has no default ---------------
# The rule by what the playbooks pass, not by option names: an option whose value in a playbook or role task is a
# setting of the plan (``sglang_plan.settings.sglang_X``, an alias of ``sglang_plan.settings`` set in the task's
# vars) gets its value from the table; a default of the option's own (DOCUMENTATION, its fragments, the argument
# spec, the action's ``args.get(option, literal)`` / ``args.get(option) or literal``) would be a second copy of it.
PASSED_SCANNED = ("playbooks/**/*.yml", "roles/*/tasks/*.yml", "roles/*/handlers/*.yml")
SETTINGS_ALIAS_RE = re.compile(r"\{\{\s*(?:hostvars\[[^\]]*\]\.)?sglang_plan\.settings\s*\}\}")


def passed_setting(value: object, aliases: frozenset[str] = frozenset()) -> str | None:
    """The setting an option's value is, as it is or through filters (``| bool``): ``{{ ...sglang_plan.settings.X }}``
    or ``{{ alias.X }}``; None for anything else."""
    if not isinstance(value, str):
        return None
    roots = r"(?:hostvars\[[^\]]*\]\.)?sglang_plan\.settings" + "".join(f"|{re.escape(a)}" for a in sorted(aliases))
    match = re.fullmatch(r"\s*\{\{\s*(?:" + roots + r")\.(sglang_[a-z0-9_]+)(?:\s*\|\s*[a-z_]+)*\s*\}\}\s*", value)
    return match.group(1) if match and match.group(1) in table.BY_NAME else None


def _tasks(node: object):
    """Every task dict of a parsed playbook or task file (plays' tasks, blocks, rescue, always, handlers)."""
    if isinstance(node, list):
        for item in node:
            yield from _tasks(item)
    elif isinstance(node, dict):
        yield node
        for key in ("tasks", "pre_tasks", "post_tasks", "handlers", "block", "rescue", "always"):
            yield from _tasks(node.get(key))


def options_from_settings() -> dict[str, dict[str, set[str]]]:
    """module -> option -> "path: setting" of every task of the collection's playbooks and roles passing a setting."""
    out: dict[str, dict[str, set[str]]] = {}
    for pattern in PASSED_SCANNED:
        for path in sorted(ROOT.glob(pattern)):
            for task in _tasks(yaml.safe_load(path.read_text(encoding="utf-8"))):
                aliases = frozenset(k for k, v in (task.get("vars") or {}).items()
                                    if isinstance(v, str) and SETTINGS_ALIAS_RE.fullmatch(v.strip()))
                for key, args in task.items():
                    if not (isinstance(key, str) and key.startswith("ascend.sglang.") and isinstance(args, dict)):
                        continue
                    for option, value in args.items():
                        name = passed_setting(value, aliases)
                        if name:
                            out.setdefault(key.split(".")[-1], {}).setdefault(option, set()).add(
                                f"{path.relative_to(ROOT)}: {name}")
    # The options an action fills from the plan's settings itself (FROM_SETTINGS) when a task does not give them.
    for path in sorted((ROOT / "plugins" / "action").glob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if (isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "FROM_SETTINGS" for t in node.targets)):
                for option, name in ast.literal_eval(node.value).items():
                    out.setdefault(path.stem, {}).setdefault(option, set()).add(
                        f"{path.relative_to(ROOT)}: {name}")
    return out


def _fragment_defaults(source: str) -> dict[str, object]:
    """The defaults of the options the module's documentation fragments (ascend.sglang.*) give it."""
    tree = ast.parse(source)
    doc = next((yaml.safe_load(n.value.value) or {} for n in tree.body if isinstance(n, ast.Assign)
                and any(getattr(t, "id", None) == "DOCUMENTATION" for t in n.targets)), {})
    out = {}
    for fragment in doc.get("extends_documentation_fragment") or []:
        name, _dot, part = str(fragment).removeprefix("ascend.sglang.").partition(".")
        path = ROOT / "plugins" / "doc_fragments" / f"{name}.py"
        if not str(fragment).startswith("ascend.sglang.") or not path.is_file():
            continue
        holder = next((n for n in ast.parse(path.read_text(encoding="utf-8")).body if isinstance(n, ast.ClassDef)), None)
        wanted = (part or "DOCUMENTATION").upper()
        for node in holder.body if holder else []:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == wanted for t in node.targets):
                for option, spec in ((yaml.safe_load(node.value.value) or {}).get("options") or {}).items():
                    if isinstance(spec, dict) and "default" in spec:
                        out[option] = spec["default"]
    return out


def action_defaults(source: str) -> dict[str, tuple[int, str]]:
    """option -> (line, literal) of an action's ``args.get(option, literal)`` and ``args.get(option) or literal``."""
    out = {}
    for node in ast.walk(ast.parse(source)):
        calls = []
        if isinstance(node, ast.Call) and len(node.args) == 2 and _literal(node.args[1]):
            calls.append((node, node.args[1]))
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and _literal(node.values[-1]):
            calls += [(v, node.values[-1]) for v in node.values[:-1] if isinstance(v, ast.Call)]
        for call, literal in calls:
            func = call.func
            if (isinstance(func, ast.Attribute) and func.attr == "get" and call.args
                    and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str)):
                out[call.args[0].value] = (call.lineno, ast.unparse(literal))
    return out


def option_defaults_of_settings() -> list[str]:
    problems = []
    for module, options in sorted(options_from_settings().items()):
        module_path = ROOT / "plugins" / "modules" / f"{module}.py"
        action_path = ROOT / "plugins" / "action" / f"{module}.py"
        source = module_path.read_text(encoding="utf-8") if module_path.is_file() else ""
        documented = {k: v.get("default") for k, v in _documented_options(source).items()
                      if isinstance(v, dict) and "default" in v} if source else {}
        found = {"DOCUMENTATION": {k: (None, v) for k, v in documented.items()},
                 "documentation fragment": {k: (None, v) for k, v in _fragment_defaults(source).items()}
                 if source else {},
                 "argument_spec": _spec_defaults(source) if source else {},
                 "action": action_defaults(action_path.read_text(encoding="utf-8")) if action_path.is_file() else {}}
        for where, defaults in found.items():
            for option in sorted(set(options) & set(defaults)):
                line, default = defaults[option]
                if default is None or default is False or default == [] or default == {}:
                    continue  # off or unset, as the Python scan counts it (_literal): no value of the table's
                file = action_path if where == "action" else module_path
                problems.append(f"{file.relative_to(ROOT)}{'' if line is None else f':{line}'}: {where} option "
                                f"{option} defaults to {default!r}, but the playbooks pass it the plan's setting "
                                f"({'; '.join(sorted(options[option]))}): make it required, with no default (the "
                                "settings table holds it)")
    return problems


def test_the_scan_sees_an_option_passed_from_the_plan_settings() -> None:
    assert passed_setting("{{ hostvars['localhost'].sglang_plan.settings.sglang_npu_smi }}") == "sglang_npu_smi"
    assert passed_setting("{{ sglang_plan.settings.sglang_doctor_include_ok | bool }}") == "sglang_doctor_include_ok"
    assert passed_setting("{{ __r.sglang_npu_smi }}", frozenset({"__r"})) == "sglang_npu_smi"
    assert not passed_setting("{{ __r.sglang_npu_smi }}") and not passed_setting("{{ sglang_plan.profile }}")
    assert not passed_setting("{{ x if sglang_plan.settings.sglang_npu_smi else y }}")
    assert action_defaults('args.get("fail_on", "fail")\nargs.get("mode") or "preflight"\nargs.get("x", None)\n') == {
        "fail_on": (1, "'fail'"), "mode": (2, "'preflight'")}


def test_no_option_the_playbooks_pass_from_the_plan_settings_has_a_default() -> None:
    passed = options_from_settings()
    # The scan reads what it should: the preflight module's paths and timeouts, the report's threshold.
    assert {"npu_smi", "hccn_tool", "probe_timeout", "toolkit_info"} <= set(passed["sglang_preflight"])
    assert "fail_on" in passed["sglang_preflight_report"]
    problems = option_defaults_of_settings()
    assert not problems, "\n".join(problems)


def test_the_settings_an_action_fills_itself_are_rows_of_the_table() -> None:
    from ansible_collections.ascend.sglang.plugins.action.sglang_preflight import FROM_SETTINGS
    assert FROM_SETTINGS and all(name in table.BY_NAME for name in FROM_SETTINGS.values())
    # Each such option is one the module requires: the plan's value is always given, by the task or the action.
    passed = options_from_settings()["sglang_preflight"]
    assert set(FROM_SETTINGS) <= set(passed)
