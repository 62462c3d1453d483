# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The host checks of the files the services read at start: the CANN scripts the launcher sources and the model
paths (the model and draft directories, their config and quantisation description, a recorded expert
distribution).

Private to the collection; pure, no Ansible import. Runs on the managed host (module sglang_preflight, through
``_preflight.check_host``); whether the model's files are the same on every host is module_utils/checks/_weights.py's
and the controller's (plugins/plugin_utils/rollout/_fleet_checks.py).
"""

from __future__ import annotations

from typing import Any, Mapping

from ansible_collections.ascend.sglang.plugins.module_utils.checks._findings import FAIL, OK, Findings
from ansible_collections.ascend.sglang.plugins.module_utils.checks._preflight_inputs import container, model_paths, services


def _path_kind(observed: Mapping[str, Any], path: str) -> str:
    return str((observed.get("paths") or {}).get(path) or "unknown")


def check_files(out: Findings, host_plan: Mapping[str, Any], observed: Mapping[str, Any]) -> None:
    for script in [] if container(host_plan) else (host_plan.get("cann") or {}).get("sources") or []:
        kind = _path_kind(observed, str(script))
        if kind == "file":
            out.add("cann_scripts", OK, f"{script} present", "present")
        else:
            out.add("cann_scripts", FAIL, f"{script} {kind}", "readable file (sourced by cann_env.sh)",
                    "install the package that provides it (CANN toolkit, NNAL/ATB) or correct the profile's "
                    "cann.sources; the launcher stops on a missing script")
    seen: set[str] = set()
    for svc in services(host_plan):
        for path, kind, why in model_paths(svc):
            if path in seen:
                continue
            seen.add(path)
            found = _path_kind(observed, path)
            if found == kind:
                out.add("model", OK, f"{path} present", why, service=str(svc.get("name")))
                continue
            parent = path.rsplit("/", 1)[0]
            if kind == "file" and parent in seen and _path_kind(observed, parent) != "dir":
                continue  # the missing directory is already reported
            fix = {
                "dir": "copy the model to this path on every server host or set sglang_model_path / "
                       "sglang_draft_model_path to where it is",
                "file": "the directory is not a complete model: copy the whole model (config.json, and for "
                        "modelslim weights quant_model_description.json) or fix the path",
            }[kind]
            if "--init-expert-location" in why:
                fix = "copy the recorded expert distribution there or fix sglang_init_expert_location"
            out.add("model", FAIL, f"{path} {found}", f"{'directory' if kind == 'dir' else 'file'}: {why}", fix,
                    service=str(svc.get("name")))
