"""What the health wait polls for a planned service: its readiness URL, its health URL, or its unit. Pure Python,
no host."""

from __future__ import annotations

from ansible_collections.ascend.sglang.plugins.module_utils.http._health_wait import wait_target


def test_wait_target_readiness_health_or_unit() -> None:
    router = {"name": "r", "health_url": "http://h:1/health", "ready_url": "http://h:1/readiness"}
    assert wait_target(router, True) == "http://h:1/readiness"
    assert wait_target(router, False) == "http://h:1/health"
    assert wait_target({"name": "p", "health_url": "http://h:2/health", "ready_url": None}, True) == "http://h:2/health"
    # Node ranks > 0 serve no HTTP: their unit must be active.
    assert wait_target({"name": "d-n1", "health_url": None}, True) is None
    assert wait_target({"name": "d-n1"}, False) is None
