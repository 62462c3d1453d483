# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Attributes shared by the collection's modules (ascend.sglang.attributes.<name>)."""

from __future__ import annotations


class ModuleDocFragment:
    # Modules whose work happens in an action plugin on the controller.
    CONTROLLER = r"""
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
  action:
    description: Indicates this has a corresponding action plugin so some parts of the options can be executed on
      the controller.
    support: full
"""

    # Modules that report diffs (beside one of the fragments above).
    DIFF = r"""
attributes:
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: full
"""

    # Modules that run on the managed host and honour check mode.
    HOST = r"""
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
"""
