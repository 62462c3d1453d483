# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The fleet's restart decision from every host's render result; the logic is in
plugins/plugin_utils/rollout/_rollout.py (pure, unit-tested). The renderer reports each host's facts; the
decision is made here alone, where every host's report is known."""

from __future__ import annotations

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

# What a filter uses is imported when it runs (plugins/filter/sglang_operations.py says why: Ansible imports every
# filter file of the collection in each task's worker process).


def sglang_rollout(reports, instances=None):
    """host -> the renderer's result (ascend.sglang.sglang_render_files) => host -> what that host restarts.
    instances: the plan's instances (sglang_plan.instances), which ranks form each instance."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import InstancePlan
    from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._rollout import decide
    hosts = {}
    for host, report in (reports or {}).items():
        # A host that rendered nothing here (no service of the play's roles) has a skipped or no result.
        usable = isinstance(report, dict) and not report.get("skipped") and "services" in report
        hosts[str(host)] = report if usable else {}
    try:
        planned = [InstancePlan(**dict(inst)) for inst in instances or ()]
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError(f"sglang_rollout: instances must be the plan's (sglang_plan.instances): {exc}") from None
    return decide(hosts, planned)


def sglang_gate_hosts(hosts, hostvars):
    """The server hosts of ``hosts`` that deploy.yml's health gate must ask (plugin_utils/rollout/_rollout.py
    gate_needed): the others restarted nothing in this run and every service of theirs was healthy at the look of
    the call that placed their files. Read from each host's __sglang_files and __sglang_rollout (its start play)."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._rollout import gate_needed
    out = []
    for host in hosts or ():
        own = hostvars[host] if host in hostvars else {}
        decision = own.get("__sglang_rollout")
        decision = decision.get(host) if isinstance(decision, Mapping) else None
        if gate_needed(own.get("__sglang_files"), decision):
            out.append(str(host))
    return out


class FilterModule:
    def filters(self):
        return {"sglang_rollout": sglang_rollout, "sglang_gate_hosts": sglang_gate_hosts}
