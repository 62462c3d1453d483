# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Filters of the weights staging (playbooks/stage_weights.yml): the model directories a host stages and their
sources, the stage's plan, one host's part in a round, the lines and the summary shown.
The logic is in plugins/plugin_utils/stage/_stage_plan.py (pure, unit-tested)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

# What a filter uses is imported when it runs (plugins/filter/sglang_operations.py says why: Ansible imports every
# filter file of the collection in each task's worker process).


def _typed(plan, host=None):
    """The typed plan; with host, as that host's filters see it (typed_plan: only its own part of the hosts)."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import typed_plan
    try:
        return typed_plan(plan, None if host is None else str(host))
    except ValueError as exc:
        raise AnsibleFilterError(str(exc)) from None


def _model_dirs(host_plan):
    return sorted({str(mp.get("path")).rstrip("/") for svc in host_plan.services for mp in svc.model_paths
                   if mp.get("kind") == "dir" and mp.get("path")})


def sglang_stage_models(plan, host):
    """[{path, source}] of the model directories this host's servers load that sglang_model_source names."""
    typed = _typed(plan, host)
    sources = typed.settings["sglang_model_source"]  # {model directory: source}, as the plan resolved it
    host_plan = typed.hosts.get(str(host))
    if host_plan is None:
        return []
    return [{"path": p, "source": sources[p]} for p in _model_dirs(host_plan) if p in sources]


def sglang_stage_plan(plan, hostvars, hosts, result_var="sglang_stage_observed"):
    """The stage's plan from what each host's observe (registered as result_var) found; fails naming every host
    that cannot stage (unreadable source, too little free space)."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.core._serialize import plain
    from ansible_collections.ascend.sglang.plugins.plugin_utils.stage._stage_plan import plan_lines, plan_stage
    typed = _typed(plan)
    settings = typed.settings
    sources = settings["sglang_model_source"]  # {model directory: source}, as the plan resolved it
    wanted, observed = {}, {}
    for host in hosts:
        models = sglang_stage_models(plan, host)
        if not models:
            continue
        wanted[str(host)] = [m["path"] for m in models]
        result = plain((hostvars.get(host) or {}).get(result_var) or {})
        observed[str(host)] = {o.get("path"): o for o in result.get("models") or []}
    stage = plan_stage({p: s for p, s in sources.items() if any(p in w for w in wanted.values())}, wanted, observed,
                       # Checked by the settings table, its defaults filled in: read as the plan holds them.
                       parallel=settings["sglang_stage_parallel"], fanout=settings["sglang_stage_fanout"],
                       tree=settings["sglang_stage_tree"], verify=settings["sglang_stage_verify"])
    if stage.errors:
        raise AnsibleFilterError("weights staging refused before a byte moved:\n  " + "\n  ".join(stage.errors))
    out = stage.as_dict()
    out["lines"] = plan_lines(out)
    return out


def sglang_stage_round(stage, index, host, hostvars, token, result_var="sglang_stage_observed"):
    """This host's part in round index (0-based): {serve, allow, pulls}."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.core._serialize import plain
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._settings import HOST, defaults
    from ansible_collections.ascend.sglang.plugins.plugin_utils.stage._stage_plan import round_view
    transfers = [t for r in stage["rounds"] for t in r]
    hosts = sorted({t["host"] for t in transfers} | {t["sender"] for t in transfers if t["sender"]})
    addresses, allowed, ports = {}, {}, {}
    plan = (hostvars.get("localhost") or {}).get("sglang_plan")
    typed = _typed(plan)
    for name in hosts:
        host_plan = typed.hosts.get(name)
        address = next((s.host for s in host_plan.services), name) if host_plan else name
        addresses[name] = address
        result = plain((hostvars.get(name) or {}).get(result_var) or {})
        allowed[name] = sorted(set(result.get("addresses") or []) | {address})
        # A host the plan has no entry for: the settings table's default.
        ports[name] = (host_plan.settings if host_plan else defaults(HOST))["sglang_stage_port"]
    return round_view(plain(stage), int(index), str(host), addresses, allowed, ports, str(token))


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
        return {"sglang_stage_models": sglang_stage_models, "sglang_stage_plan": sglang_stage_plan,
                "sglang_stage_round": sglang_stage_round, "sglang_stage_summary": sglang_stage_summary}
