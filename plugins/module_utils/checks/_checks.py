# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The preflight checks an operator can set to fail, warn or off (``sglang_preflight_checks``), with what each
looks at. One table, read by the planner (which validates the variable and puts the settings in the plan), the
host-side checks and the controller's cross-host checks.

Private to the collection; pure, no Ansible import.
"""

from __future__ import annotations

from typing import Any, Mapping

LEVELS = ("fail", "warn", "off")

# name -> what it checks (docs/docsite/rst/preflight.rst lists the commands behind each).
CHECKS = {
    "npu_link": "each planned NPU's RoCE link is UP (hccn_tool -i N -link -g)",
    "npu_net_health": "each planned NPU's network health is Success (hccn_tool -i N -net_health -g)",
    "npu_ip": "each planned NPU has an IP, the one /etc/hccn.conf gives it (hccn_tool -i N -ip -g)",
    "npu_tls": "the TLS switch is the same on every planned NPU of every host (hccn_tool -i N -tls -g)",
    "npu_ping": "NPUs that exchange traffic reach each other (hccn_tool -i N -ping -g address IP)",
    "npu_health": "each planned NPU chip reports OK (npu-smi info -t health -i N -c C)",
    "weights": "the model files are complete and the same on every rank of an instance",
}
DEFAULTS = {name: "fail" for name in CHECKS}
# sglang_preflight_weights: quick compares file lists, sizes and the small files' digests; full also hashes every
# shard (cached per file by size, mtime and inode on each host).
WEIGHTS_MODES = ("quick", "full")


def settings(checks: Mapping[str, str] | None = None, weights: str | None = None) -> dict[str, Any]:
    """The plan's preflight settings: every check with its level (defaults filled in) and the weights mode."""
    return {"checks": dict(DEFAULTS, **dict(checks or {})), "weights": weights or "quick"}


def level(preflight: Mapping[str, Any] | None, check: str) -> str:
    """A check's level in the plan's preflight settings (a plan made before the setting existed: the default)."""
    return str(((preflight or {}).get("checks") or {}).get(check) or DEFAULTS[check])
