"""The run settings the planner resolves once (plan/_run_settings.py): sglang_restart_batch as the count of instances
a restart batch or upgrade wave takes out of service, sglang_restart_only as the planned instance keys restart.yml
restarts (or "pending"), sglang_retire as a list; what the operator wrote reaches the plan normalised, and the
playbooks and filters read it there. Pure Python on real plans, no host, no Ansible."""

from __future__ import annotations

import pytest

from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import Collector, PlanError
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _settings
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._run_settings import restart_batch_count
from ansible_collections.ascend.sglang.tests.unit.planned_fleets import make_plan

MIXED6 = {"mixed": [f"m{i}" for i in range(6)], "router": ["r0"]}
PROFILE = "qwen3_32b_a3_2c_mixed_2k_2k_50ms"


def _checked(value):
    errors = Collector()
    checked = _settings.check_one_values({"sglang_restart_batch": value}, errors)
    return checked["sglang_restart_batch"], [f.message for f in errors.findings]


@pytest.mark.parametrize("value, fleet, size", [
    (1, 64, 1), ("1", 64, 1), (4, 64, 4), (" 4 ", 64, 4), ("25%", 64, 16), ("25%", 3, 1), ("100%", 5, 5),
    ("1%", 64, 1), ("50%", 5, 2), ("33%", 64, 21), (100, 3, 100),
])
def test_a_batch_is_a_count_or_a_percentage_of_the_fleet_rounded_down_at_least_one(value, fleet, size) -> None:
    checked, problems = _checked(value)
    assert problems == [] and restart_batch_count(checked, fleet) == size


@pytest.mark.parametrize("value", [0, "0", "0%", "101%", "-1", "x", True, "2.5", ""])
def test_the_table_refuses_what_is_no_batch(value) -> None:
    assert _checked(value)[1]


def _settings_of(variables: dict | None = None) -> dict:
    return make_plan(PROFILE, MIXED6, variables)["settings"]


def test_the_plan_holds_the_count_and_every_instance_by_default() -> None:
    settings = _settings_of()
    assert settings["sglang_restart_batch"] == 1
    assert settings["sglang_restart_only"] == [f"mixed-i{i}" for i in range(6)]
    assert settings["sglang_retire"] == []


@pytest.mark.parametrize("given, count", [("50%", 3), ("34%", 2), (" 2 ", 2), (4, 4), ("1%", 1)])
def test_the_plan_resolves_the_batch_against_its_server_instances(given, count) -> None:
    # Six mixed instances behind one router: the router is no instance a batch counts.
    assert _settings_of({"sglang_restart_batch": given})["sglang_restart_batch"] == count


@pytest.mark.parametrize("given, keys", [
    ("mixed-i3, mixed-i1", ["mixed-i1", "mixed-i3"]),
    (["mixed-i5", "mixed-i5", "mixed-i0"], ["mixed-i0", "mixed-i5"]),
    ("pending", "pending"),
])
def test_the_plan_holds_the_instance_keys_to_restart(given, keys) -> None:
    assert _settings_of({"sglang_restart_only": given})["sglang_restart_only"] == keys


@pytest.mark.parametrize("given, message", [
    ("mixed-i9,mixed-i1", "mixed-i9 is not an instance of the plan; planned instances: mixed-i0, mixed-i1"),
    ([], "an empty list is not an instance of the plan"),
    ("prefill-i1 x", "must be instance keys (a list, or comma-separated)"),
    ({"mixed-i1": 1}, "must be instance keys (a list, or comma-separated)"),
])
def test_a_key_the_plan_lacks_is_refused_naming_the_variable(given, message) -> None:
    with pytest.raises(PlanError) as caught:
        _settings_of({"sglang_restart_only": given})
    found = [f for f in caught.value.findings if f.variable == "sglang_restart_only"]
    assert found and message in found[0].message, caught.value.render()


@pytest.mark.parametrize("given, sources", [
    (None, {}),
    ("weights01:/export/m", {"/m": "weights01:/export/m"}),
    ({"/m/": "rsync://w/models/m", "/d": "/shared/d"}, {"/m": "rsync://w/models/m", "/d": "/shared/d"}),
])
def test_the_plan_holds_the_model_sources_by_directory(given, sources) -> None:
    # make_plan's sglang_model_path is /m: a single source is its source.
    variables = {} if given is None else {"sglang_model_source": given}
    assert _settings_of(variables)["sglang_model_source"] == sources


def test_a_source_that_is_the_model_path_is_refused_on_the_checked_values() -> None:
    with pytest.raises(PlanError) as caught:
        _settings_of({"sglang_model_source": "/m/"})
    assert [f.variable for f in caught.value.findings] == ["sglang_model_source"], caught.value.render()


def test_the_bench_client_runs_with_the_servers_interpreter_unless_given_one() -> None:
    assert _settings_of()["sglang_bench_python"] == "python3"
    assert _settings_of({"sglang_python": "/opt/sglang/bin/python3"})["sglang_bench_python"] == "/opt/sglang/bin/python3"
    assert _settings_of({"sglang_bench_python": "/opt/bench/bin/python"})["sglang_bench_python"] == "/opt/bench/bin/python"


def test_the_plan_holds_every_checked_setting_none_where_unset() -> None:
    settings = _settings_of()
    assert settings["sglang_min_cann_version"] is None and settings["sglang_plan_file"] is None
    assert settings["sglang_npu_smi"] == "npu-smi" and settings["sglang_preflight_probe_timeout"] == 3
    assert settings["sglang_bench_overrides"] == {} and settings["sglang_status_timeout"] == 5


def test_the_npu_tools_take_a_command_name_or_absolute_paths() -> None:
    """sglang_npu_smi is looked up in PATH on the host (a name) or given as a path; sglang_npu_toolkit_info is the
    module's list of glob patterns, one path a list of one."""
    settings = _settings_of({"sglang_npu_smi": "/usr/local/sbin/npu-smi",
                             "sglang_npu_toolkit_info": "/opt/cann/*/ascend_toolkit_install.info"})
    assert settings["sglang_npu_smi"] == "/usr/local/sbin/npu-smi"
    assert settings["sglang_npu_toolkit_info"] == ["/opt/cann/*/ascend_toolkit_install.info"]
    assert _settings_of()["sglang_npu_toolkit_info"] == _settings.BY_NAME["sglang_npu_toolkit_info"].default
    for name, value, message in (("sglang_npu_smi", "npu smi", "a command name"),
                                 ("sglang_npu_toolkit_info", ["relative/*.info"], "must be an absolute path"),
                                 ("sglang_npu_toolkit_info", [], "must be a list of absolute paths")):
        errors = Collector()
        _settings.one_value(name, {name: value}, errors)
        assert [f.variable for f in errors.findings] and message in str(errors.findings[0]), (name, value)
