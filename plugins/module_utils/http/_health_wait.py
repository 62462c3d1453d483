# Copyright: ascend.sglang contributors
# Apache License 2.0
"""What the health wait (module sglang_wait_healthy, on the host of each service) polls for a planned service.

Private to the collection; pure, no Ansible import.
"""

from __future__ import annotations

from typing import Any, Mapping


def wait_target(service: Mapping[str, Any], readiness: bool) -> str | None:
    """The URL a health wait polls for a planned service: its ``ready_url`` (a router's /readiness) when
    ``readiness`` is asked and it has one, else its ``health_url``; None when it has neither (node ranks > 0
    serve no HTTP: their unit must be active)."""
    if readiness and service.get("ready_url"):
        return str(service["ready_url"])
    return str(service["health_url"]) if service.get("health_url") else None
