# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Options shared by the modules that copy a directory of files (sglang_wheelhouse, sglang_place_archive)."""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  mode:
    description: Octal mode of every file.
    type: str
    default: "0644"
  directory_mode:
    description: Octal mode of the directories it creates (existing ones keep theirs).
    type: str
    default: "0755"
"""
