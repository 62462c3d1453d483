# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The inventory read through the settings table: what the plan takes from the play and from each host.

Pure; no Ansible import (the action plugin passes a ``read`` callback that templates one value).  Every
``sglang_*`` name the play or a host carries is looked up in the table (plugin_utils/plan/_settings.py):
- a name the table does not hold is refused, with the nearest known name;
- a deployment-wide or run value that a group or host sets differently from the play is refused, naming the
  host and its group: the plan reads it once, so the host's own value would be silently ignored;
- the values themselves are checked by the planner: host values per host, deployment and run values once.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable, Mapping

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _contract as c
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _settings as table
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import Collector
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._planner import plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import Plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import load_profile
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._serialize import plain
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._topology import MONITORING_GROUP, build_inventory

UNREADABLE = object()
# Host values the planner reads besides the table's host rows.
ANSIBLE_HOST_VARS = ("ansible_host",)
SERVER_GROUPS = ("prefill", "decode", "mixed", "router")
# The collection's own names (facts, registered results, role parameters): set by its playbooks, never read here.
NOT_READ = (table.INTERNAL, table.PARAMETER)

Read = Callable[[Mapping[str, Any], str, "str | None"], Any]

# What templating a host's value says when the value refers to other hosts' variables or to the plan, neither of
# which a host's own variables hold before the plan exists.
DEFERRED_RE = re.compile(r"'hostvars' is undefined|'sglang_plan' is undefined|has no attribute 'sglang_plan'")


def template_reader(templar: Any, errors: Collector) -> Read:
    """The ``read`` callback of read_inventory for an action's templar."""
    def read(source: Mapping[str, Any], key: str, host: str | None) -> Any:
        """One inventory value, templated; a template that cannot be evaluated is a finding, not a traceback."""
        try:
            # Plain Python from here on: Ansible's tagged types reach no checker, plan or serializer.
            return plain(templar.template(source[key]))
        except Exception as exc:  # noqa: BLE001 - any templating error becomes a finding naming the variable
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if host is not None and DEFERRED_RE.search(first):
                # It refers to other hosts or to the plan (hostvars['localhost'].sglang_plan...): the host
                # evaluates it after the plan, the settings table says whether that is allowed.
                return table.DEFERRED
            errors.add(f"cannot be evaluated on the controller: {first[:200]}", host=host, variable=key)
            return UNREADABLE
    return read


def _group_of(host: str, groups: Mapping[str, Any]) -> str | None:
    return next((g for g in SERVER_GROUPS + (MONITORING_GROUP,) if host in (groups.get(g) or ())), None)


def _shown(row: table.Setting, value: Any) -> str:
    return "(values not shown)" if row.name == "sglang_secrets" else c.shown(value)


def read_inventory(groups: Mapping[str, Any], hostvars: Mapping[str, Mapping[str, Any]],
                   play_vars: Mapping[str, Any], read: Read, errors: Collector
                   ) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """-> (host values per planned host, deployment and run values).  Problems go to ``errors``."""
    variables: dict[str, Any] = {}
    for name in sorted(k for k in play_vars if isinstance(k, str) and k.startswith("sglang_")):
        row = table.BY_NAME.get(name)
        if row is None:
            errors.add(table.unknown_message(name), variable=name)
            continue
        if row.scope not in table.ONE_VALUE:
            continue
        value = read(play_vars, name, None)
        if value is UNREADABLE or value is table.DEFERRED:
            continue
        variables[name] = value  # checked by the planner (_settings.check_one_values)
    host_values: dict[str, dict[str, Any]] = {}
    # The Prometheus hosts too: their values are checked before any host task like the servers'.
    wanted = sorted({h for g in SERVER_GROUPS + (MONITORING_GROUP,) for h in (groups.get(g) or ())
                     if isinstance(h, str)})
    for host in wanted:
        hv = hostvars.get(host) or {}
        group = _group_of(host, groups)
        own: dict[str, Any] = {}
        for name in ANSIBLE_HOST_VARS:
            if name in hv:
                value = read(hv, name, host)
                if value is not UNREADABLE:
                    own[name] = value
        for name in sorted(k for k in hv if isinstance(k, str) and k.startswith("sglang_")):
            row = table.BY_NAME.get(name)
            if row is None:
                if name not in play_vars:  # reported once above otherwise
                    errors.add(table.unknown_message(name), group=group, host=host, variable=name)
                continue
            if row.scope in NOT_READ:
                continue
            value = read(hv, name, host)
            if value is UNREADABLE:
                continue
            if row.scope in table.ONE_VALUE:
                if value is table.DEFERRED:
                    continue  # evaluated on the host; the play's own value is the one the plan reads
                if name not in variables or value != variables[name]:
                    deployment = (f"the deployment's is {_shown(row, variables[name])}" if name in variables
                                  else "the deployment has none")
                    errors.add(f"is {row.scope}-wide, read once for every host: set it for all hosts (group_vars/all, "
                               f"the inventory's all: vars or -e), not for one group or host; this host has "
                               f"{_shown(row, value)}, {deployment}", group=group, host=host, variable=name)
                continue
            own[name] = value
        host_values[host] = own
    return host_values, variables


def plan_inputs(profile_id: str, groups: Mapping[str, Any], host_values: Mapping[str, Mapping[str, Any]],
                variables: Mapping[str, Any], errors: Collector, profiles_dir: str | None = None) -> Plan:
    """The plan of what read_inventory gave; raises PlanError with the reading's findings first, then everything
    the planner finds besides."""
    profile = load_profile(profile_id, profiles_dir)
    inventory = build_inventory(groups, host_values, variables)
    if errors.findings:
        inventory = dataclasses.replace(inventory, findings=tuple(errors.findings) + inventory.findings)
    return plan(profile, inventory)
