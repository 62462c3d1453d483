# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Options of the modules that plan a profile (sglang_plan, sglang_k8s_manifests)."""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  profile:
    description: >-
      Profile id, the name of a file under the collection's C(profiles/) without C(.yml). Unset, the run's
      C(sglang_profile), read through the settings table by the action (the playbooks pass none).
    type: str
  profiles_dir:
    description: >-
      Read profiles from this directory before the collection's. Unset, the run's C(sglang_profiles_dir), read
      through the settings table by the action.
    type: path
"""
