"""The settings table (plugins/plugin_utils/plan/_settings.py) and the inventory read through it (_inputs.py)."""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

import pytest

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _settings as table
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._contract import Where
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import Collector
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._inputs import UNREADABLE, read_inventory

ROOT = Path(__file__).resolve().parents[5]


def _script():
    spec = importlib.util.spec_from_file_location("settings_script", ROOT / "scripts" / "settings.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_defaults_and_argument_specs_match_the_table():
    assert _script().stale() == [], "run scripts/settings.py write"


def test_one_row_per_name_with_a_known_scope_and_one_line_of_doc():
    names = [row.name for row in table.TABLE]
    assert len(names) == len(set(names))
    for row in table.TABLE:
        assert row.name.startswith("sglang_") and row.scope in table.SCOPES, row
        assert row.doc and "\n" not in row.doc, row.name
        # A role reads a row only when the row has a default there or is a deployment value the plan carries.
        assert set(row.defaults_in) <= {e.split(":")[0] for e in row.entries} | {"sglang_service"}, row.name


def test_no_role_variable_is_listed_outside_the_table():
    """No second list of role variables: Python code outside the table names at most a few settings it reads."""
    rows = {row.name for row in table.TABLE if row.scope == table.HOST and row.default is not table.NO_DEFAULT}
    offenders = []
    for path in (ROOT / "plugins").rglob("*.py"):
        if path.name in ("_settings.py",) or path.parent.name in ("modules", "doc_fragments", "filter"):
            continue
        text = path.read_text(encoding="utf-8")
        named = sorted(name for name in rows if re.search(rf"[\"']{name}[\"']", text))
        if len(named) > 3:
            offenders.append(f"{path.relative_to(ROOT)}: {', '.join(named)}")
    assert offenders == []


def test_every_host_row_with_a_default_refuses_a_float_and_accepts_its_default():
    errors = Collector()
    rows = [row for row in table.host_settings() if row.default is not table.NO_DEFAULT]
    table.check_host_values({row.name: 3.5 for row in rows}, errors, "decode", "d1")
    assert sorted({f.variable.split("[")[0].split(".")[0] for f in errors.findings}) == sorted(r.name for r in rows)
    errors = Collector()
    got = table.check_host_values(table.defaults(table.HOST), errors, None, None)
    assert errors.findings == [] and got == table.defaults(table.HOST)


def test_host_values_keep_the_host_value_and_fill_defaults():
    errors = Collector()
    got = table.check_host_values({"sglang_restart_sec": "20", "sglang_etc_dir": "/srv/etc"}, errors, "p", "p0")
    assert errors.findings == []
    assert got["sglang_restart_sec"] == 20 and got["sglang_etc_dir"] == "/srv/etc"
    assert got["sglang_limit_nofile"] == 1048576


@pytest.mark.parametrize("value, ok", [
    ([], True), (["sglang==0.5.6.post2"], True), (["sglang[all]>=0.5,<0.6", "torch_npu"], True),
    (["sglang=={{ sglang_plan.releases.sglang }}"], True), (["--index-url=http://x"], False), (["-e", "."], False),
    (["sglang ; id"], False), (["https://x/y.whl"], False), ("sglang", False), ([["a"]], False), (["a\nb"], False),
])
def test_requirement_lists(value, ok):
    errors = Collector()
    table.check(table.BY_NAME["sglang_server_packages"], value, errors, Where("sglang_server_packages"))
    assert (errors.findings == []) is ok, errors.findings


@pytest.mark.parametrize("name, hint", [
    ("sglang_hostip", "sglang_host_ip"), ("sglang_model_pth", "sglang_model_path"),
    ("sglang_watchdog_intervall", "sglang_watchdog_interval"), ("sglang_overide", "sglang_overrides"),
    ("sglang_zzz_unrelated_name", None),
])
def test_unknown_names_get_the_nearest_known_one(name, hint):
    assert table.nearest(name) == hint
    assert ("did you mean" in table.unknown_message(name)) is (hint is not None)


def read(groups, hostvars, play):
    errors = Collector()
    hosts, variables = read_inventory(groups, hostvars, play, lambda src, key, host: src[key], errors)
    return hosts, variables, [(f.group, f.host, f.variable, f.message) for f in errors.findings]


def test_a_deployment_value_equal_everywhere_is_read_once():
    play = {"sglang_model_path": "/m", "sglang_profile": "x"}
    hosts, variables, found = read({"decode": ["d0"]}, {"d0": dict(play, sglang_restart_sec=5)}, play)
    assert found == [] and variables == play and hosts == {"d0": {"sglang_restart_sec": 5}}


def test_a_deployment_value_of_one_group_is_refused_naming_host_and_group():
    _unused, _unused2, found = read({"decode": ["d0"], "prefill": ["p0"]},
                                    {"d0": {"sglang_release": "0.5.7"}, "p0": {}}, {})
    assert [(g, h, v) for g, h, v, _m in found] == [("decode", "d0", "sglang_release")]
    assert "the deployment has none" in found[0][3]


def test_secrets_set_per_group_are_refused_without_their_values():
    _unused, _unused2, found = read({"router": ["r0"]}, {"r0": {"sglang_secrets": {"router": {"--api-key": "s3"}}}},
                                    {"sglang_secrets": {"router": {"--api-key": "other"}}})
    assert len(found) == 1 and "s3" not in found[0][3] and "other" not in found[0][3]


def test_an_unknown_name_of_all_hosts_is_reported_once():
    play = {"sglang_hostip": "1.2.3.4"}
    _unused, _unused2, found = read({"decode": ["d0", "d1"]}, {"d0": dict(play), "d1": dict(play)}, play)
    assert [(g, h, v) for g, h, v, _m in found] == [(None, None, "sglang_hostip")]


def test_facts_of_the_collection_are_not_inventory_values():
    hosts, _unused, found = read({"decode": ["d0"]}, {"d0": {"sglang_rollout_failure": {}, "sglang_plan": {}}}, {})
    assert found == [] and hosts == {"d0": {}}


def test_an_unreadable_value_is_skipped():
    errors = Collector()
    hosts, _unused = read_inventory({"decode": ["d0"]}, {"d0": {"sglang_nic": "x"}}, {},
                                    lambda src, key, host: UNREADABLE, errors)
    assert hosts == {"d0": {}}


def test_table_rows_document_what_the_readme_lists():
    """Every run option a playbook reads with a default is a row (no playbook reads an unknown name)."""
    used = set()
    for path in list((ROOT / "playbooks").rglob("*.yml")) + list((ROOT / "roles").rglob("*.yml")):
        used |= set(re.findall(r"\b(sglang_[a-z0-9_]+) *\| *default\(", path.read_text(encoding="utf-8")))
    assert sorted(used - set(table.BY_NAME)) == []
    assert os.path.basename(__file__) == "test_settings.py"


def test_a_value_evaluated_on_the_host_after_the_plan_is_not_checked_before():
    """sglang_router_version: "{{ hostvars['localhost'].sglang_plan.releases.sglang_router }}" (the Molecule
    overlay's): the plan cannot evaluate it, the host does; only a value the host's files need is refused."""
    errors = Collector()
    table.check_host_values({"sglang_router_install": True, "sglang_router_version": table.DEFERRED,
                             "sglang_server_packages": table.DEFERRED}, errors, "router", "r0")
    assert errors.findings == []
    table.check_host_values({"sglang_etc_dir": table.DEFERRED}, errors, "router", "r0")
    assert [(f.host, f.variable) for f in errors.findings] == [("r0", "sglang_etc_dir")]
    deferred = {"sglang_release": table.DEFERRED}
    _unused, variables, found = read({"decode": ["d0"]}, {"d0": deferred}, {"sglang_release": "0.5.7"})
    assert found == [] and variables == {"sglang_release": "0.5.7"}
