# Copyright: ascend.sglang contributors
# Apache License 2.0
"""When a preflight / doctor / stack report stops the run (action ascend.sglang.sglang_preflight_report).

Private to the collection; pure, no Ansible import. fail_on is the operator's threshold (sglang_preflight_fail_on,
sglang_doctor_fail_on): C(fail) stops on failures, C(warn) on warnings too, C(never) never.
"""

from __future__ import annotations

from typing import Any

from ansible_collections.ascend.sglang.plugins.module_utils.checks._findings import FAIL, WARN
from ansible_collections.ascend.sglang.plugins.plugin_utils.report._preflight_report import EXIT_CODES

FAIL_ON = ("fail", "warn", "never")
# The lowest report exit code (0 ok, 1 warnings, 2 failures) each threshold stops at; never: none.
_STOP_AT = {"fail": EXIT_CODES[FAIL], "warn": EXIT_CODES[WARN], "never": None}


def fail_on_value(value: Any, name: str = "fail_on") -> str:
    """The threshold given, checked. name: what the operator set (a variable or an option), named in the error.
    Raises ValueError when the value is not one of FAIL_ON; unset too: the playbooks pass the plan's value, which
    the settings table defaults (sglang_preflight_fail_on, sglang_doctor_fail_on), so no default is kept here."""
    if not isinstance(value, str) or value not in FAIL_ON:
        raise ValueError(f"{name} must be one of {', '.join(FAIL_ON)}, got {value!r}")
    return value


def stops(exit_code: int, fail_on: str) -> bool:
    """Whether a report of this exit code stops the run at this threshold (fail_on_value() first)."""
    at = _STOP_AT[fail_on]
    return at is not None and int(exit_code) >= at
