"""The plan's services carry each service's environment, which plan.yml keeps out of the log. A module's
arguments are shown at -vvv and logged in the host's journal, so every task of the playbooks and roles that
hands planned services to a module passes them through ascend.sglang.sglang_without_env (itself, or through a
variable of its role's vars/main.yml defined with it), or runs with no_log."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import re

import yaml

ROOT = Path(__file__).resolve().parents[2]
TASK_FILES = sorted([*ROOT.glob("playbooks/*.yml"), *ROOT.glob("playbooks/tasks/*.yml"),
                     *ROOT.glob("roles/*/tasks/*.yml")])


def tasks(node: Any) -> Iterator[dict[str, Any]]:
    """Every task of a playbook or task file, blocks and their rescue/always included."""
    if isinstance(node, list):
        for item in node:
            yield from tasks(item)
    elif isinstance(node, dict):
        if any(k in node for k in ("tasks", "pre_tasks", "post_tasks", "handlers", "block", "rescue", "always")):
            for key in ("tasks", "pre_tasks", "post_tasks", "handlers", "block", "rescue", "always"):
                yield from tasks(node.get(key))
        else:
            yield node


FILTER = "ascend.sglang.sglang_without_env"
# What carries no environment by construction: the generation of a host in upgrade.yml's schedule
# (ascend.sglang.sglang_upgrade_schedule) is {name, files} only.
FILTERS = (FILTER, ".generation")


def stripped_vars(path: Path, task_vars: Any = None) -> set[str]:
    """Variables of the task itself (its vars:) and of the task file's role (vars/main.yml) whose value goes through
    one of the filters."""
    found = dict(task_vars) if isinstance(task_vars, dict) else {}
    role_vars = path.parent.parent / "vars" / "main.yml"
    if path.relative_to(ROOT).parts[0] == "roles" and role_vars.exists():
        found.update(yaml.safe_load(role_vars.read_text(encoding="utf-8")) or {})
    return {name for name, value in found.items() if any(f in str(value) for f in FILTERS)}


def without_env(path: Path, expression: Any, task_vars: Any = None) -> bool:
    text = str(expression)
    names = stripped_vars(path, task_vars)
    return any(f in text for f in FILTERS) or any(re.search(rf"\b{re.escape(name)}\b", text) for name in names)


def service_tasks() -> list[tuple[str, str, dict[str, Any]]]:
    found = []
    for path in TASK_FILES:
        for task in tasks(yaml.safe_load(path.read_text(encoding="utf-8"))):
            for key, args in task.items():
                if key.startswith("ascend.sglang.") and isinstance(args, dict) and "services" in args:
                    found.append((str(path.relative_to(ROOT)), task.get("name", "?"),
                                  dict(task, __args=args, __stripped=without_env(path, args["services"], task.get("vars")))))
    return found


def test_the_check_sees_the_tasks_that_hand_services_to_modules() -> None:
    paths = {found[0] for found in service_tasks()}
    assert {"playbooks/tasks/host_status.yml", "playbooks/doctor.yml", "roles/sglang_service/tasks/wait_healthy.yml"} <= paths, paths


def test_no_module_receives_a_services_environment() -> None:
    leaking = [f"{path}: {name}" for path, name, task in service_tasks()
               if not task["__stripped"] and task.get("no_log") is not True]
    assert not leaking, "hand services through ascend.sglang.sglang_without_env (or no_log): " + "; ".join(leaking)
