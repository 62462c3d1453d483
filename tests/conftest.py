"""Make the checkout importable as ``ansible_collections.ascend.sglang`` for plain pytest."""

from __future__ import annotations

import atexit
import os
import shutil
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
    # rmtree unlinks the symlink, never what it points to (the checkout).
    atexit.register(shutil.rmtree, base, True)
    (base / "ansible_collections" / "ascend").mkdir(parents=True)
    os.symlink(ROOT, base / "ansible_collections" / "ascend" / "sglang")
    return str(base)


sys.path.insert(0, _collection_root())
sys.path.insert(0, str(ROOT / "tests" / "golden"))
sys.path.insert(0, str(ROOT / "tests" / "validation"))
sys.path.insert(0, str(ROOT / "tests" / "support"))


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "seeds: reads the best-practice documents (SGLANG_SEEDS_DIR)")


def pytest_collection_modifyitems(config, items) -> None:
    """The golden tests and tests marked ``seeds`` are skipped, with one reason, where the documents are absent (a clone of the
    collection alone); with SGLANG_SEEDS_REQUIRED=1 (CI) their absence is an error instead."""
    import pytest
    import seeddoc

    reason = seeddoc.missing_reason()
    if reason is None:
        return
    if os.environ.get("SGLANG_SEEDS_REQUIRED") == "1":
        raise pytest.UsageError(f"SGLANG_SEEDS_REQUIRED=1 but the {reason}")
    golden = ROOT / "tests" / "golden"
    for item in items:
        # Every golden test compares with the documents; elsewhere a test says so with the marker.
        if item.get_closest_marker("seeds") or golden in Path(item.path).parents:
            item.add_marker(pytest.mark.skip(reason=reason))
