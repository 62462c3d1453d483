# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The options of npu_facts, run on its own without a plan (sglang_preflight takes the plan's sglang_npu_* settings)."""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  npu_smi:
    description: The npu-smi command (a name looked up in C(PATH) first, or a path), so a stand-in can be placed there.
    type: str
    default: npu-smi
  driver_info:
    description: The driver's install-info file.
    type: path
    default: /usr/local/Ascend/driver/version.info
  toolkit_info:
    description: Glob patterns of the CANN toolkit install-info file; the first readable match with a version wins.
    type: list
    elements: str
    default:
      - /usr/local/Ascend/ascend-toolkit/latest/*-linux/ascend_toolkit_install.info
      - /usr/local/Ascend/cann/*-linux/ascend_toolkit_install.info
      - /usr/local/Ascend/cann-*/*-linux/ascend_toolkit_install.info
      - /usr/local/Ascend/ascend-toolkit/*/*-linux/ascend_toolkit_install.info
"""
