"""Make the checkout importable as ``ansible_collections.ascend.sglang`` for plain pytest."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _collection_root() -> str:
    """The repo's .collections link (scripts/setup.sh), else a temporary one."""
    link = ROOT / ".collections" / "ansible_collections" / "ascend" / "sglang"
    if link.exists() and link.resolve() == ROOT:
        return str(ROOT / ".collections")
    base = Path(tempfile.mkdtemp(prefix="ascend-sglang-"))
    (base / "ansible_collections" / "ascend").mkdir(parents=True)
    os.symlink(ROOT, base / "ansible_collections" / "ascend" / "sglang")
    return str(base)


sys.path.insert(0, _collection_root())
sys.path.insert(0, str(ROOT / "tests" / "golden"))
sys.path.insert(0, str(ROOT / "tests" / "validation"))
