# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The run settings whose meaning depends on what was planned, resolved once by the planner: the playbooks and
filters read them from ``sglang_plan.settings`` as they use them, and none parses the operator's value again.

- ``sglang_restart_only``: the instance keys restart.yml restarts (every planned server instance when unset), or
  ``pending`` (the instances with a restart pending, which only the hosts' status can tell at run time);
- ``sglang_restart_batch``: the count of instances a restart batch or an upgrade wave may take out of service,
  a percentage being of the plan's server instances (rounded down, at least 1: a Kubernetes maxUnavailable);
- ``sglang_retire``: the instance keys or hosts retire.yml takes out (none when unset);
- ``sglang_bench_python``: the benchmark client's interpreter, the servers' (``sglang_python``) when unset.

The settings table (``_settings.py``) has checked each value's form; what is left to check here needs the plan
(an instance key restart.yml is asked to restart must be planned).  Private to the collection; pure, no Ansible
import.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import Collector

PENDING = "pending"
SERVER_ROLES = ("prefill", "decode", "mixed")


def restart_batch_count(value: Any, fleet: int) -> int:
    """The checked ``sglang_restart_batch`` (a count, or the table's percentage form ``"N%"``) as a count of
    instances: a percentage of ``fleet`` rounded down, at least 1."""
    if isinstance(value, str):  # the settings table gives a percentage as "N%", a count as an int
        return max(1, fleet * int(value[:-1]) // 100)
    return int(value)


def restart_only_keys(value: Any, keys: list[str], errors: Collector) -> "list[str] | str":
    """The checked ``sglang_restart_only`` (None, ``pending`` or a list of names) as what restart.yml restarts:
    the planned keys it names, each once, in rollout order; every planned key when unset; ``pending`` as it is.
    A name that is not a planned instance is an error naming the variable."""
    if value is None:
        return list(keys)
    if value == PENDING:
        return PENDING
    unknown = [name for name in value if name not in keys]
    if unknown or not value:
        errors.add(f"{', '.join(unknown) or 'an empty list'} is not an instance of the plan; planned instances: "
                   f"{', '.join(keys)} (or \"{PENDING}\")", variable="sglang_restart_only")
    return [key for key in keys if key in value]


def resolve(checked: Mapping[str, Any], instances: Iterable[Any], errors: Collector) -> dict[str, Any]:
    """The plan's settings: the checked values with the run settings above resolved against the planned
    ``instances`` (InstancePlan records; routers are not restarted by key)."""
    order = {role: index for index, role in enumerate(SERVER_ROLES)}
    servers = sorted((inst for inst in instances if inst.role in order),
                     key=lambda inst: (order[inst.role], inst.instance))
    keys = [inst.key for inst in servers]
    out = dict(checked)
    out["sglang_restart_only"] = restart_only_keys(checked.get("sglang_restart_only"), keys, errors)
    # The fleet a percentage is of: the plan's server instances, counted here alone.
    out["sglang_restart_batch"] = restart_batch_count(checked["sglang_restart_batch"], len(keys))
    out["sglang_retire"] = list(checked.get("sglang_retire") or [])
    # The benchmark client runs with the servers' interpreter unless given one (the plan's bench command does).
    out["sglang_bench_python"] = checked.get("sglang_bench_python") or checked.get("sglang_python")
    return out
