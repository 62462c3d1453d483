"""One unit's ``systemctl show`` output, read: its properties and how long it has been active. Pure Python, no
host."""

from __future__ import annotations

from ansible_collections.ascend.sglang.plugins.module_utils.files._unit_show import parse_systemctl_show, uptime_seconds


def test_systemctl_show_and_uptime() -> None:
    props = parse_systemctl_show("ActiveState=active\nSubState=running\nActiveEnterTimestampMonotonic=5000000\n")
    assert uptime_seconds(props, 3605.4) == 3600
    assert uptime_seconds(dict(props, ActiveState="inactive"), 3605.4) is None
    assert uptime_seconds(dict(props, ActiveEnterTimestampMonotonic="0"), 10) is None
