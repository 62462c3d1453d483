# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The host checks of a running deployment (doctor mode): each planned service's unit active, running the files
it has (no restart pending), and its health endpoint answering 200.

Private to the collection; pure, no Ansible import. Runs on the managed host (module sglang_preflight in doctor
mode, through ``_preflight.check_host``).
"""

from __future__ import annotations

from typing import Any, Mapping

from ansible_collections.ascend.sglang.plugins.module_utils.checks._findings import FAIL, OK, WARN, Findings
from ansible_collections.ascend.sglang.plugins.module_utils.checks._preflight_inputs import services, unit_state
from ansible_collections.ascend.sglang.plugins.module_utils.files._started import pending_rows, pending_text
from ansible_collections.ascend.sglang.plugins.module_utils.files._units import service_units


def check_doctor(out: Findings, host_plan: Mapping[str, Any], observed: Mapping[str, Any]) -> None:
    health = observed.get("health") or {}
    for svc in services(host_plan):
        name = str(svc.get("name"))
        state = unit_state(observed, name)
        unit = (observed.get("units") or {}).get(name) or {}
        if state == "running":
            out.add("service", OK, "active", "active", service=name)
        elif state == "absent":
            out.add("service", WARN, "not deployed (no unit)", "active",
                    "deploy with the profile's playbook (this is a planned, not a running, service)", service=name)
        elif state == "unknown":
            out.add("service", WARN, "state unknown (systemctl unavailable)", "active",
                    f"check `systemctl status {name}` by hand", service=name)
        else:
            out.add("service", FAIL, f"{unit.get('active') or 'inactive'} ({unit.get('sub') or '?'})", "active",
                    f"`journalctl -u {name} -n 200` for the cause, then `systemctl restart {name}`", service=name)
        started = observed.get("started") or {}
        pending = pending_rows([started[unit] for unit in service_units(name) if unit in started])
        if pending:
            out.add("config", WARN, pending_text(pending), "runs the files it has",
                    "run the deployment again (or restart.yml -e sglang_restart_only=pending): it restarts the "
                    "instance; an earlier run was cut short after writing the files, or they were edited by hand",
                    service=name)
        elif state == "running" and f"{name}.service" in started:
            out.add("config", OK, "current", "runs the files it has", service=name)
        url = svc.get("health_url")
        if url and name in health:
            result = health[name] or {}
            if result.get("status") == 200:
                out.add("health", OK, f"{url}: 200", "200", service=name)
            elif state == "running":
                out.add("health", FAIL, f"{url}: {result.get('status') or result.get('error')}", "200",
                        f"the server is up but unhealthy: `journalctl -u {name} -n 200`", service=name)
