"""scripts/import_pages.py as a module, for the golden tests that call it (the page drift test and the record's
update on synthetic pages): loaded once per test process."""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path


@functools.lru_cache(maxsize=None)
def import_pages():
    """scripts/import_pages.py, which writes the shipped profiles from the pages (loaded once)."""
    spec = importlib.util.spec_from_file_location("import_pages", Path(__file__).parents[2] / "scripts" /
                                                  "import_pages.py")
    module = importlib.util.module_from_spec(spec)
    # Registered before it runs: its dataclasses look their module up by name.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
