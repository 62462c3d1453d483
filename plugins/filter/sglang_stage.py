# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The summary of a weights stage (playbooks/stage_weights.yml): what each host received, and what failed. The
stage's schedule is made by sglang_stage_inputs and sglang_stage_schedule (plugins/filter/sglang_schedules.py).
The logic is in plugins/plugin_utils/stage/_stage_plan.py (pure, unit-tested)."""

from __future__ import annotations

# What a filter uses is imported when it runs (plugins/filter/sglang_operations.py says why: Ansible imports every
# filter file of the collection in each task's worker process).


def sglang_stage_summary(stage, hostvars, hosts, result_var="sglang_stage_pulled"):
    """{table (lines), failed}: the summary of a stage from each host's pulls (result_var, a list)."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.core._serialize import plain
    from ansible_collections.ascend.sglang.plugins.plugin_utils.core._table import render
    from ansible_collections.ascend.sglang.plugins.plugin_utils.stage._stage_plan import summary
    results = {str(h): plain((hostvars.get(h) or {}).get(result_var) or []) for h in hosts}
    out = summary(plain(stage), results)
    out["table"] = render(["host", "directory", "from", "files", "bytes", "seconds", "rate"], out["rows"],
                          right=(3, 4, 5, 6)) if out["rows"] else ["nothing was transferred: every host held its copy"]
    return out


class FilterModule:
    def filters(self):
        return {"sglang_stage_summary": sglang_stage_summary}
