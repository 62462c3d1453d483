# Copyright: ascend.sglang contributors
# Apache License 2.0
"""What the health wait (module sglang_wait_healthy, on the host of each service) polls for a planned service, and
one look at it (that module's every poll, and sglang_place_files' look in the call that places a host's files).

Private to the collection; the standard library and module_utils only.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

from ansible_collections.ascend.sglang.plugins.module_utils.http._http import http_get


def wait_target(service: Mapping[str, Any], readiness: bool) -> str | None:
    """The URL a health wait polls for a planned service: its ``ready_url`` (a router's /readiness) when
    ``readiness`` is asked and it has one, else its ``health_url``; None when it has neither (node ranks > 0
    serve no HTTP: their unit must be active)."""
    if readiness and service.get("ready_url"):
        return str(service["ready_url"])
    return str(service["health_url"]) if service.get("health_url") else None


def look(name: str, url: Optional[str], timeout: float, run_command: Callable, systemctl: Optional[str]) -> dict:
    """One look at a service: HTTP 200 on ``url``, or, without one, its unit active (``systemctl is-active``).
    Returns {healthy, status}: the HTTP status or error, or the unit's state."""
    if url:
        status = http_get(url, timeout).label()
        return {"healthy": status == "200", "status": status}
    rc, stdout, _unused = run_command([systemctl, "is-active", "--", name + ".service"])
    return {"healthy": rc == 0, "status": stdout.strip() or f"rc {rc}"}
