"""What sglang_units does to each unit, from the states `systemctl show` reports. Pure Python, no host."""

from __future__ import annotations

import pytest

from ansible_collections.ascend.sglang.plugins.module_utils.files._unit_show import parse_systemctl_show
from ansible_collections.ascend.sglang.plugins.module_utils.files._units import PROPERTIES, bad_names, unit_actions, units_to_stop

RUNNING = {"LoadState": "loaded", "ActiveState": "active", "UnitFileState": "enabled"}


def test_running_enabled_units_are_left_alone_in_order():
    units = [{"unit": "sglang-decode-0.service"}, {"unit": "sglang-watchdog-sglang-decode-0.service"}]
    states = {u["unit"]: RUNNING for u in units}
    assert unit_actions(units, states) == [
        {"unit": "sglang-decode-0.service", "enable": False, "start": None},
        {"unit": "sglang-watchdog-sglang-decode-0.service", "enable": False, "start": None}]


def test_restart_is_done_whatever_the_state():
    for active in ("active", "failed", "inactive", "activating"):
        state = {**RUNNING, "ActiveState": active}
        assert unit_actions([{"unit": "a.service", "restart": True}], {"a.service": state})[0]["start"] == "restart"


@pytest.mark.parametrize("active, start", [("active", None), ("activating", None), ("reloading", None),
                                           ("inactive", "start"), ("failed", "start"), ("deactivating", "start")])
def test_start_only_what_does_not_run(active, start):
    state = {**RUNNING, "ActiveState": active}
    assert unit_actions([{"unit": "a.service", "restart": False}], {"a.service": state})[0]["start"] == start


@pytest.mark.parametrize("file_state, enable", [("enabled", False), ("static", False), ("enabled-runtime", False),
                                                ("disabled", True), ("masked", True), ("", True)])
def test_enable_unless_systemd_says_enabled(file_state, enable):
    state = {**RUNNING, "UnitFileState": file_state}
    assert unit_actions([{"unit": "a.service"}], {"a.service": state})[0]["enable"] is enable


def test_unknown_unit_is_started_and_enabled():
    """A new unit in check mode has no state: it would be started and enabled (and systemctl names a missing one)."""
    assert unit_actions([{"unit": "new.service", "restart": False}], {}) == [
        {"unit": "new.service", "enable": True, "start": "start"}]


def test_state_from_systemctl_show_output():
    out = "LoadState=loaded\nActiveState=inactive\nUnitFileState=disabled\n"
    assert set(PROPERTIES.split(",")) == set(parse_systemctl_show(out))
    assert unit_actions([{"unit": "a.service"}], {"a.service": parse_systemctl_show(out)}) == [
        {"unit": "a.service", "enable": True, "start": "start"}]


@pytest.mark.parametrize("name", ["-a.service", "--now.service", "a", "a.socket", "../x.service", "a b.service",
                                  "a.service\nb.service", "a.service\n", "/etc/x.service", ""])
def test_names_that_never_reach_systemctl(name):
    assert bad_names([{"unit": name}]) == [name]


def test_unit_names_the_renderer_writes_pass():
    assert bad_names([{"unit": "sglang-prefill-0.service"}, {"unit": "sglang-watchdog-sglang-decode-0-n1.service"},
                      {"unit": "sglang-router@r0.service"}]) == []


def test_only_known_running_units_are_stopped_in_order():
    states = {"a.service": RUNNING, "b.service": {**RUNNING, "ActiveState": "failed"},
              "c.service": {"LoadState": "not-found", "ActiveState": "inactive"},
              "d.service": {**RUNNING, "ActiveState": "activating"}, "e.service": {**RUNNING, "ActiveState": "inactive"}}
    assert units_to_stop(["d.service", "a.service", "b.service", "c.service", "e.service", "f.service"],
                         states) == ["d.service", "a.service"]
