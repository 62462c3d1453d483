# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The metrics a deployment's launches get, decided by the planner: the monitoring settings (checked), the
server and router metrics flags, the router exporter's port and each service's metrics URL.

Pure; no Ansible import.  The Prometheus files made from a plan are targets/_monitoring.py's.
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Any, Mapping

from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import Collector
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _contract as c
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import SERVER_ROLES

# The Rust router's exporter when no flag says otherwise (router_args.py of 0.3.0 / 0.3.2: 0.0.0.0:29000): what a
# router started without the plan's flags listens on.
ROUTER_DEFAULT_METRICS_PORT = 29000
# Flags the metrics settings own: an override of one is refused (set the variables instead).
SERVER_FLAGS = ("--enable-metrics",)
ROUTER_FLAGS = ("--prometheus-host", "--prometheus-port")
# A Prometheus duration (model.ParseDuration): units from ms to y, largest first, e.g. 1m, 90s, 1h30m.
DURATION_RE = re.compile(r"(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?")
# The TTFT alert's threshold when the inventory sets none and the profile has no TTFT target: this many times the
# profile's published mean TTFT (the documented runs' P99 TTFT is 1.6 to 2.9 times their mean), or TTFT_FALLBACK_S
# for a profile that publishes none.
TTFT_MEAN_FACTOR = 3
TTFT_FALLBACK_S = 30.0


@dataclasses.dataclass(frozen=True)
class Settings:
    """The deployment's monitoring values, checked (the plan's ``monitoring``); the defaults are the settings
    table's (plugin_utils/plan/_settings.py)."""
    metrics: bool
    router_metrics_port: int
    scrape_interval: str
    down_for: str
    ttft_p90_seconds: float
    # Where the TTFT threshold comes from, said in the rules file.
    ttft_source: str
    # The profile's documented TPOT target (tpot_target_ms) in seconds; None: the profile documents none.
    tpot_target_seconds: float | None


def duration(value: Any, errors: Collector, where: c.Where) -> str | None:
    """A Prometheus duration such as 30s, 1m or 1h30m (not 0)."""
    text = c.text(value, errors, where, what="a Prometheus duration such as 1m (a string)")
    if text is None:
        return None
    match = DURATION_RE.fullmatch(text)
    if not text or match is None or not any(match.group(i) for i in range(2, 15, 2)) \
            or all(int(match.group(i) or 0) == 0 for i in range(2, 15, 2)):
        where.add(errors, f"must be a Prometheus duration such as 30s, 1m or 1h30m, got {c.shown(text)}")
        return None
    return text


def settings(checked: Mapping[str, Any], tpot_target_ms: float, published: Mapping[str, Any],
             ttft_target_ms: float = 0) -> Settings:
    """The monitoring values of the deployment, as the settings table checked them (its defaults filled in:
    _settings.check_one_values), with the profile's targets: a profile held to a TTFT target alerts on it."""
    mean_ttft = (published.get("figures") or {}).get("mean_ttft_ms") if isinstance(published, Mapping) else None
    if checked.get("sglang_alert_ttft_p90_seconds") is not None:
        ttft = checked["sglang_alert_ttft_p90_seconds"]
        source = "sglang_alert_ttft_p90_seconds"
    elif ttft_target_ms:
        ttft = ttft_target_ms / 1000
        source = f"the profile's TTFT target ({ttft_target_ms:g} ms)"
    elif isinstance(mean_ttft, (int, float)) and mean_ttft > 0:
        ttft = math.ceil(TTFT_MEAN_FACTOR * float(mean_ttft) / 100) / 10
        source = f"{TTFT_MEAN_FACTOR} x the profile's published mean TTFT ({mean_ttft:g} ms)"
    else:
        ttft = TTFT_FALLBACK_S
        source = f"the profile publishes no TTFT: {TTFT_FALLBACK_S:g} s; set sglang_alert_ttft_p90_seconds"
    return Settings(metrics=checked["sglang_metrics"], router_metrics_port=checked["sglang_router_metrics_port"],
                    scrape_interval=checked["sglang_metrics_scrape_interval"], down_for=checked["sglang_alert_down_for"],
                    ttft_p90_seconds=float(ttft), ttft_source=source,
                    tpot_target_seconds=tpot_target_ms / 1000 if tpot_target_ms else None)


def check_overrides(overrides: Mapping[str, Any], errors: Collector) -> None:
    """The metrics flags belong to sglang_metrics and sglang_router_metrics_port, not to sglang_overrides."""
    for role, flags in (("router", ROUTER_FLAGS),) + tuple((r, SERVER_FLAGS) for r in SERVER_ROLES):
        given = ((overrides.get(role) or {}).get("args") or {}) if isinstance(overrides.get(role), Mapping) else {}
        for flag in flags:
            if flag in given:
                hint = ("set sglang_router_metrics_port (the address is the router host's)" if role == "router"
                        else "set sglang_metrics")
                errors.add(f"{flag} is set by the plan's metrics settings: {hint} instead",
                           group=role, variable=f"sglang_overrides.{role}.args.{flag}")


def server_flags(mon: Settings) -> dict[str, Any]:
    """What every server launch gets: ``--enable-metrics`` (/metrics on the server port) when metrics are on."""
    return {"--enable-metrics": True} if mon.metrics else {}


def router_flags(mon: Settings, mini_lb: bool) -> dict[str, Any]:
    """What a router launch gets: its exporter on the router host's address and the planned port.  The Python
    mini load balancer has no exporter: it gets nothing."""
    if not mon.metrics or mini_lb:
        return {}
    return {"--prometheus-host": "{metrics_host}", "--prometheus-port": "{metrics_port}"}


def router_metrics_port(mon: Settings, mini_lb: bool) -> int | None:
    """The port a router's exporter listens on (the Rust router always starts one, on its default port when the
    plan gives none); None for the mini load balancer."""
    if mini_lb:
        return None
    return mon.router_metrics_port if mon.metrics else ROUTER_DEFAULT_METRICS_PORT


def url(address: str, port: int) -> str:
    host = f"[{address}]" if ":" in address else address
    return f"http://{host}:{port}/metrics"
