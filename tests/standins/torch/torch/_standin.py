"""Knobs of the stand-ins: the environment first, else ``KEY=VALUE`` lines of ``$ASCEND_STANDIN_DIR/pytorch``
(a container's file, as the stand-in npu-smi reads /etc/ascend-standin)."""
from __future__ import annotations

import os


def standin_dir() -> str:
    return os.environ.get("ASCEND_STANDIN_DIR") or "/etc/ascend-standin"


def knob(name: str, default: str | None = None) -> str | None:
    if name in os.environ:
        return os.environ[name]
    try:
        with open(os.path.join(standin_dir(), "pytorch"), encoding="utf-8") as handle:
            for line in handle:
                key, sep, value = line.strip().partition("=")
                if sep and key.strip() == name:
                    return value.strip()
    except OSError:
        pass
    return default
