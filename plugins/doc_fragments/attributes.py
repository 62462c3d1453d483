# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Attributes shared by the collection's modules (ascend.sglang.attributes.<name>)."""

from __future__ import annotations


class ModuleDocFragment:
    # Modules whose work happens in an action plugin on the controller.
    CONTROLLER = r"""
attributes:
  check_mode:
    support: full
  action:
    support: full
"""

    # Modules that run on the managed host and honour check mode.
    HOST = r"""
attributes:
  check_mode:
    support: full
"""
