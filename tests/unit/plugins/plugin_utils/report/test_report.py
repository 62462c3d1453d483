"""When a preflight / doctor / stack report stops the run (plugin_utils/report/_report.py): the fail_on threshold the
playbooks pass to ascend.sglang.sglang_preflight_report. Pure Python."""

from __future__ import annotations

import pytest

from ansible_collections.ascend.sglang.plugins.plugin_utils.report._report import FAIL_ON, fail_on_value, stops


@pytest.mark.parametrize(("fail_on", "codes"), [("fail", {2}), ("warn", {1, 2}), ("never", set())])
def test_each_threshold_stops_at_its_exit_codes(fail_on: str, codes: set) -> None:
    assert {code for code in (0, 1, 2) if stops(code, fail_on)} == codes


def test_every_choice_is_kept() -> None:
    assert [fail_on_value(v) for v in FAIL_ON] == list(FAIL_ON)


# Unset is refused too: the default is the settings table's, which the plan fills in.
@pytest.mark.parametrize("value", ["FAIL", "warning", "no", True, 2, None, ""])
def test_a_wrong_value_is_refused_naming_the_variable(value) -> None:
    with pytest.raises(ValueError, match=r"^sglang_doctor_fail_on must be one of fail, warn, never, got "):
        fail_on_value(value, "sglang_doctor_fail_on")
    with pytest.raises(ValueError, match=r"^fail_on must be one of"):
        fail_on_value(value)
