# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The schedule of a weights stage (playbooks/stage_weights.yml), made on the controller in two steps around the
hosts' observe, neither of which types the plan again:

- ``stage_inputs`` (from the typed plan, once): the model directories each server host stages and their sources
  (sglang_model_source as the planner resolved it: {model directory: source}), each host's address, rsync daemon
  port and rsync, and the run's stage options (checked by the settings table, defaults filled in);
- ``stage_schedule`` (from those inputs and what each host observed): the stage's plan (_stage_plan.py), its lines,
  and every host's part in every round (what it serves to whom, what it pulls from where).

Pure; no Ansible import.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import Plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._settings import host_values
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._settings_record import PlanSettings
from ansible_collections.ascend.sglang.plugins.plugin_utils.stage._stage_plan import plan_lines, plan_stage, round_view


@dataclasses.dataclass(frozen=True)
class StageHost:
    models: tuple[Mapping[str, str], ...]  # {path, source} of each model directory it stages
    address: str  # where the other hosts reach it (its servers' address; its inventory name without one)
    port: int  # sglang_stage_port
    rsync: str  # sglang_stage_rsync


@dataclasses.dataclass(frozen=True)
class StageInputs:
    sources: Mapping[str, str]  # model directory -> source, every one sglang_model_source names
    hosts: Mapping[str, StageHost]
    options: Mapping[str, Any]  # the run's stage settings by name (``_options``)

    def as_dict(self) -> dict[str, Any]:
        return {"sources": dict(self.sources), "options": dict(self.options),
                "hosts": {name: {"models": [dict(m) for m in h.models], "address": h.address, "port": h.port,
                                 "rsync": h.rsync} for name, h in self.hosts.items()}}


def _model_dirs(host_plan: Any) -> list[str]:
    return sorted({str(mp.get("path")).rstrip("/") for svc in host_plan.services for mp in svc.model_paths
                   if mp.get("kind") == "dir" and mp.get("path")})


def _options(settings: PlanSettings) -> dict[str, Any]:
    """The run settings a stage reads (the plan's, as the settings table checked them), by name."""
    return {"sglang_stage_parallel": settings.sglang_stage_parallel,
            "sglang_stage_fanout": settings.sglang_stage_fanout, "sglang_stage_tree": settings.sglang_stage_tree,
            "sglang_stage_verify": settings.sglang_stage_verify, "sglang_stage_bwlimit": settings.sglang_stage_bwlimit,
            "sglang_stage_timeout": settings.sglang_stage_timeout,
            "sglang_stage_progress_interval": settings.sglang_stage_progress_interval,
            "sglang_model_owner": settings.sglang_model_owner, "sglang_model_mode": settings.sglang_model_mode}


def stage_inputs(plan: Plan, hosts: Sequence[str]) -> StageInputs:
    """The stage's inputs for these (server) hosts: a host the plan has no entry for stages nothing and has the
    settings table's defaults."""
    sources = dict(plan.typed_settings.sglang_model_source)  # {model directory: source}, as the planner resolved it
    out: dict[str, StageHost] = {}
    for name in dict.fromkeys(str(h) for h in hosts):
        host_plan = plan.hosts.get(name)
        settings = host_values(host_plan.settings if host_plan is not None else None, name, None)
        models = tuple({"path": p, "source": sources[p]} for p in (_model_dirs(host_plan) if host_plan else [])
                       if p in sources)
        address = next((str(s.host) for s in host_plan.services), name) if host_plan else name
        out[name] = StageHost(models, address, int(settings["sglang_stage_port"]), str(settings["sglang_stage_rsync"]))
    return StageInputs(sources, out, _options(plan.typed_settings))


def stage_schedule(inputs: Mapping[str, Any], observed: Mapping[str, Mapping[str, Any]], token: str
                   ) -> dict[str, Any]:
    """The stage's schedule from its inputs (``StageInputs.as_dict()``) and each host's observe result (host ->
    {models, addresses}): the stage's plan (sources, expected, copies, rounds, verify), ``lines`` (what --check
    shows) and ``parts`` (host -> its part in each round: {serve, allow, pulls}). ValueError naming every host
    that cannot stage."""
    options = inputs["options"]
    wanted = {host: [m["path"] for m in h["models"]] for host, h in inputs["hosts"].items() if h["models"]}
    seen = {host: {o.get("path"): o for o in (observed.get(host) or {}).get("models") or []} for host in wanted}
    used = {p: s for p, s in inputs["sources"].items() if any(p in w for w in wanted.values())}
    stage = plan_stage(used, wanted, seen, parallel=options["sglang_stage_parallel"],
                       fanout=options["sglang_stage_fanout"], tree=options["sglang_stage_tree"],
                       verify=options["sglang_stage_verify"])
    if stage.errors:
        raise ValueError("weights staging refused before a byte moved:\n  " + "\n  ".join(stage.errors))
    out = stage.as_dict()
    out["lines"] = plan_lines(out)
    addresses = {host: h["address"] for host, h in inputs["hosts"].items()}
    ports = {host: h["port"] for host, h in inputs["hosts"].items()}
    allowed = {host: sorted(set((observed.get(host) or {}).get("addresses") or []) | {addresses[host]})
               for host in inputs["hosts"]}
    out["parts"] = {host: [round_view(out, index, host, addresses, allowed, ports, str(token))
                           for index in range(len(out["rounds"]))] for host in inputs["hosts"]}
    return out
