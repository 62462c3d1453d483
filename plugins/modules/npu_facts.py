#!/usr/bin/python
# Copyright: ascend.sglang contributors
# Apache License 2.0

from __future__ import annotations

DOCUMENTATION = r"""
module: npu_facts
short_description: Gather Ascend NPU facts (npu-smi, driver and CANN versions, set_env scripts)
description:
  - Runs C(npu-smi info) (found through C(PATH), then C(/usr/local/sbin), C(/usr/local/bin), C(/usr/sbin)) and
    parses it into devices in the order C(--base-gpu-id) / C(ASCEND_RT_VISIBLE_DEVICES) count them, with their
    health, HBM usage and the processes holding them.
  - Tells the hardware generation apart. C(A2) (Atlas 800I A2, 910B chips, one device per NPU, 8 per node) and
    C(A3) (Atlas 800I A3, 910_93 class, npu-smi name C(Ascend910) with two dies per NPU, 16 devices per node).
  - Reads the driver C(version.info) and the CANN toolkit C(ascend_toolkit_install.info), and reports which of
    the usual C(set_env.sh) scripts exist.
  - Read-only; never changes the host.
version_added: 0.2.0
options:
  set_env_scripts:
    description: C(set_env.sh) scripts whose presence is reported.
    type: list
    elements: path
    default:
      - /usr/local/Ascend/ascend-toolkit/set_env.sh
      - /usr/local/Ascend/cann/set_env.sh
      - /usr/local/Ascend/nnal/atb/set_env.sh
extends_documentation_fragment:
  - ascend.sglang.npu_paths
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: none
  facts:
    description: Action returns an C(ansible_facts) dictionary that will update existing host facts.
    support: full
notes:
  - C(npu-smi) usually needs root; run with C(become) where the deployment user cannot run it.
author:
  - ascend.sglang maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: Gather NPU facts
  ascend.sglang.npu_facts:
  register: npu

- name: Show the generation and the busy devices
  ansible.builtin.debug:
    msg: >-
      {{ ansible_facts.ascend_npu.generation }}:
      {{ ansible_facts.ascend_npu.devices | selectattr('processes') | map(attribute='index') | list }}
"""

RETURN = r"""
ansible_facts:
  description: The facts, under C(ascend_npu) (the same keys as below).
  returned: always
  type: dict
  contains:
    ascend_npu:
      description: C(npu_smi), C(generation), C(chip_name), C(device_count), C(npu_count), C(devices), C(processes),
        C(driver), C(toolkit), C(set_env_scripts).
      type: dict
npu_smi:
  description: C(available), C(command) (resolved path), C(error), C(version) of npu-smi.
  returned: always
  type: dict
generation:
  description: C(A2), C(A3) or null when it cannot be told from the chip names.
  returned: always
  type: str
  sample: A3
chip_name:
  description: The npu-smi name(s) of the chips.
  returned: always
  type: str
  sample: Ascend910
device_count:
  description: Devices listed (A2 NPUs, or A3 dies).
  returned: always
  type: int
  sample: 16
npu_count:
  description: NPUs (cards) listed.
  returned: always
  type: int
  sample: 8
devices:
  description: >-
    One entry per device in npu-smi order. C(index) (the device number SGLang uses), C(npu), C(chip), C(phy_id),
    C(name), C(health) (OK, Warning, Alarm, Critical...), C(bus_id), C(hbm_used_mb), C(hbm_total_mb),
    C(hbm_free_mb) and C(processes).
  returned: always
  type: list
  elements: dict
processes:
  description: The process table. C(npu), C(chip), C(pid), C(name), C(memory_mb).
  returned: always
  type: list
  elements: dict
driver:
  description: C(path), C(version) (package_version, else Version), C(error).
  returned: always
  type: dict
  sample: {path: /usr/local/Ascend/driver/version.info, version: 25.3.rc1, error: null}
toolkit:
  description: C(path) of the install-info file found, C(version), C(searched) patterns, C(error).
  returned: always
  type: dict
set_env_scripts:
  description: Script path -> whether it exists.
  returned: always
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ascend.sglang.plugins.module_utils.collect._host_probe import SET_ENV_SCRIPTS, observe_npu_facts

# Run on its own, without a plan (ansible -m ascend.sglang.npu_facts): where the driver and CANN install
# themselves, as documented in the npu_paths fragment. The playbooks never call it; they pass the plan's
# sglang_npu_* settings to sglang_preflight, whose defaults the settings table holds.
DRIVER_INFO = "/usr/local/Ascend/driver/version.info"
TOOLKIT_INFO = (
    "/usr/local/Ascend/ascend-toolkit/latest/*-linux/ascend_toolkit_install.info",
    "/usr/local/Ascend/cann/*-linux/ascend_toolkit_install.info",
    "/usr/local/Ascend/cann-*/*-linux/ascend_toolkit_install.info",
    "/usr/local/Ascend/ascend-toolkit/*/*-linux/ascend_toolkit_install.info",
)


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "npu_smi": {"type": "str", "default": "npu-smi"},
            "driver_info": {"type": "path", "default": DRIVER_INFO},
            "toolkit_info": {"type": "list", "elements": "str", "default": list(TOOLKIT_INFO)},
            "set_env_scripts": {"type": "list", "elements": "path", "default": list(SET_ENV_SCRIPTS)},
        },
        supports_check_mode=True,
    )
    facts = observe_npu_facts(module.params["npu_smi"], module.params["driver_info"], module.params["toolkit_info"],
                              module.params["set_env_scripts"])
    module.exit_json(changed=False, ansible_facts={"ascend_npu": facts}, **facts)


if __name__ == "__main__":
    main()
