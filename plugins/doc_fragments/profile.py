# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Options of the modules that plan a profile (sglang_plan, sglang_k8s_manifests)."""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  profile:
    description: Profile id, the name of a file under the collection's C(profiles/) without C(.yml).
    type: str
    required: true
  profiles_dir:
    description: Read profiles from this directory instead of the collection's.
    type: path
"""
