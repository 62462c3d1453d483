# Copyright: ascend.sglang contributors
# Apache License 2.0
"""One unit's ``systemctl show`` properties, read: the properties as a mapping, and how long the unit has been
active (modules sglang_units and sglang_service_status, on the managed host).

Private to the collection; pure, no Ansible import.
"""

from __future__ import annotations

from typing import Mapping


def parse_systemctl_show(text: str) -> dict[str, str]:
    """``systemctl show -p A,B unit`` output -> {A: value, B: value}."""
    props: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            props[key.strip()] = value.strip()
    return props


def uptime_seconds(props: Mapping[str, str], now_monotonic_s: float) -> int | None:
    """Seconds since the unit became active (ActiveEnterTimestampMonotonic is microseconds since boot,
    the same clock as /proc/uptime); None when it is not active."""
    if props.get("ActiveState") != "active":
        return None
    try:
        entered = int(props.get("ActiveEnterTimestampMonotonic") or 0) / 1e6
    except ValueError:
        return None
    return max(0, int(now_monotonic_s - entered)) if entered > 0 else None
