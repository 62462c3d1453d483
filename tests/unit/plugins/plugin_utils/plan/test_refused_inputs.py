"""The broken-input table (tests/unit/broken_inputs.py), case by case, through the plan's inputs as Ansible
gives them: each case is refused before any host task, with the exact text naming the group, host and variable.

Ansible's variable scopes are reproduced as the plan action sees them: the inventory's all-vars reach the play
(localhost) and every host, a group's vars its hosts only, a host's vars that host only.  The end-to-end test
(tests/integration/test_broken_inputs.py) checks that reading against real ansible-playbook runs.
"""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
from unit.broken_inputs import CASES  # noqa: E402  # pylint: disable=wrong-import-position

from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import Collector, PlanError  # noqa: E402
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._inputs import plan_inputs, read_inventory  # noqa: E402

# Cases whose refusal comes from the action plugin's controller side (templating, the controller's files): end to
# end only (tests/integration/test_broken_inputs.py).
ANSIBLE_ONLY = {"value that cannot be templated", "image archive missing on the controller"}


def refusal(case: dict) -> str:
    """The plan's message for one case, as the plan action would return it."""
    play = dict(case["vars"], sglang_profile=case["profile"])
    groups = {group: list(hosts) for group, hosts in case["groups"].items()}
    hostvars = {}
    for group, hosts in case["groups"].items():
        for name, own in hosts.items():
            hostvars[name] = dict(case["vars"], **case.get("group_vars", {}).get(group, {}), **own)
    errors = Collector()
    host_values, variables = read_inventory(groups, hostvars, play, lambda src, key, host: src[key], errors)
    try:
        plan_inputs(case["profile"], groups, host_values, variables, errors)
    except PlanError as exc:
        return exc.render()
    return ""


@pytest.mark.parametrize("name, case, expected", [c for c in CASES if c[0] not in ANSIBLE_ONLY],
                         ids=[c[0] for c in CASES if c[0] not in ANSIBLE_ONLY])
def test_broken_input_is_refused_by_the_plan(name: str, case: dict, expected: str) -> None:
    message = refusal(case)
    assert message, f"{name}: the plan accepted it"
    assert expected in message, message
    # A refused secret is never echoed.
    assert "hunter2" not in message


def test_the_table_covers_every_class() -> None:
    assert len(CASES) >= 120
    assert len({c[0] for c in CASES}) == len(CASES)
