"""Fixtures the preflight tests share (module_utils/checks and the controller's report): the planned layouts of
tests/unit/preflight_hosts.py, planned once per test module by the real planner."""

from __future__ import annotations

import pytest

from ansible_collections.ascend.sglang.tests.unit.plans import make_plan
from ansible_collections.ascend.sglang.tests.unit.preflight_hosts import A2_MIXED, PD32


@pytest.fixture(scope="module")
def pd32():
    return make_plan(PD32, prefill=2, decode=2, router=1)


@pytest.fixture(scope="module")
def a2mixed():
    return make_plan(A2_MIXED, mixed=1)
