#!/usr/bin/python
# Copyright: ascend.sglang contributors
# Apache License 2.0
# Runs on the managed host.  The action plugin of the same name fills host_plan, hardware, releases,
# preflight and stack_reference from the controller's plan (hostvars['localhost'].sglang_plan).

from __future__ import annotations

DOCUMENTATION = r"""
module: sglang_preflight
short_description: Check one host against its part of the SGLang plan before (or while) it serves
description:
  - Looks at the host, read-only, and returns one finding per check and subject, each with C(severity)
    (C(ok), C(warn), C(fail)), C(found), C(expected) and C(fix). Never fails because of a finding; the
    aggregation step (M(ascend.sglang.sglang_preflight_report)) decides.
  - "Server hosts: NPU generation vs the profile's C(hardware); enough devices for each service (C(--tp-size) /
    nnodes from C(--base-gpu-id)); device health; no foreign process on them; free HBM; driver and CANN toolkit
    present (and at least the minimum versions when given); C(cpu_affinity): the CPUs each server is pinned to
    (C(sglang_npu_cpus)) against C(npu-smi info -t topo) and the host's online CPUs (pinned to CPUs the host does
    not have fails; unpinned, or pinned elsewhere than the topology says, warns with the value to set)."
  - "All hosts: the CANN scripts of the host plan exist; the model directory has C(config.json)
    (C(quant_model_description.json) with C(--quantization modelslim)), the draft model directory
    (C(--speculative-draft-model-path)), C(--init-expert-location); the HCCL/GLOO NIC of multi-node services exists
    and carries the service address; every port the host will listen on is free (or held by this deployment's own
    unit); rank-0 dist-init and MemFabric store endpoints answer TCP (see notes); the interpreter of each service
    imports sglang / sglang-router at the planned release."
  - "Server hosts, one run of the server interpreter (C(sglang_python), CANN environment sourced, bounded by
    I(runtime_timeout)): the versions of sglang, torch, torch_npu, transformers, sgl_kernel_npu, deep_ep and
    mf_adapter (C(importlib.metadata); only torch and torch_npu are imported), C(torch.npu.is_available()) and
    C(torch.npu.device_count()). Findings: an import error (its text), torch and torch_npu of different
    major.minor, deep-ep built for another CANN than the host's toolkit, fewer NPUs visible than the host's
    services use (C(--base-gpu-id) counted), versions other than the reference environment (I(stack_policy))."
  - "Fabric, NPU health and weights (each at the level of I(preflight), the plan's C(sglang_preflight_checks)):
    for each NPU a service talking to other hosts uses (ranks of multi-node instances, prefill and decode servers),
    C(hccn_tool -i N -link -g), C(-net_health -g), C(-ip -g) (equal to C(address_N) of C(/etc/hccn.conf), which
    must exist) and C(-tls -g) (compared across hosts by M(ascend.sglang.sglang_preflight_report)), one device's
    queries after the other with retries on C(hccn_tool is busy); C(npu-smi info -t health -i N -c C) for each chip
    a server uses; each model directory's files, sizes, small files' digests and the shards its safetensors index
    names (with C(full) weights, every file's digest, cached by size, mtime and inode in
    C(/var/cache/sglang/weights-digests.json), not written in check mode)."
  - "C(ping) mode runs the pings the controller planned for this host (I(pings), from the filter
    ascend.sglang.sglang_ping_plan): C(hccn_tool -i N -ping -g address <peer device IP>); any loss is a finding
    naming both ends."
  - In C(doctor) mode also the systemd state of every planned service and the rank-0 C(/health) answer.
  - "Usually called through the action plugin of the same name, which fills in the plan's part and, where the task
    does not give them, the tool paths, timeouts, versions and stack policy from the plan's settings
    (C(sglang_plan.settings), the settings table's defaults filled in): O(min_driver_version), O(min_cann_version),
    O(min_hbm_free_ratio), O(npu_smi), O(driver_info), O(toolkit_info), O(probe_timeout), O(runtime_timeout),
    O(stack_policy), O(hccn_tool)."
version_added: 0.2.0
options:
  host_plan:
    description:
      - This host's entry of the plan (C(cann), C(services)). Filled by the action plugin.
      - "The checks read each service's planned C(devices), C(model_paths), C(peers) and C(mem_fraction_static),
        never its argv."
    type: dict
  hostname:
    description: The inventory name reported in the findings. Filled by the action plugin.
    type: str
  profile:
    description: Profile id (for messages).
    type: str
  hardware:
    description: Hardware generation the profile targets (C(A2) or C(A3)), the plan's C(hardware), filled by the action.
    type: str
    choices: [A2, A3]
  releases:
    description: Planned releases (C(sglang), C(sglang_router)).
    type: dict
    default: {}
  mode:
    description:
      - C(preflight) (before start) or C(doctor) (a running or planned cluster).
      - "C(stack) checks the server interpreter's stack alone (its release, imports, torch_npu vs torch, visible
        NPUs, deep-ep vs the host's CANN, the reference environment): deploy.yml runs it right after the roles
        installed the stack (C(sglang_server_install)), before any file of a service is written."
      - C(ping) runs I(pings) only.
    type: str
    choices: [preflight, doctor, stack, ping]
    default: preflight
  min_driver_version:
    description:
      - Minimum NPU driver version (e.g. C(25.2.0)).
      - Unset, the driver (Ascend HDK) that the CANN release of the planned SGLang release needs, where
        I(stack_reference) names one (C(driver)); otherwise presence only.
    type: str
  min_cann_version:
    description: Minimum CANN toolkit version (e.g. C(8.3.RC1)); none checks presence only.
    type: str
  min_hbm_free_ratio:
    description: Free HBM a used device must have, as a fraction of its total. Default the service's C(--mem-fraction-static), else 0.8.
    type: float
  probe_timeout:
    description: Seconds for each TCP probe and health request (the plan's C(sglang_preflight_probe_timeout)).
    type: float
    required: true
  runtime_timeout:
    description: Seconds for each interpreter's report (the server's stack, the router's release; the CANN scripts are sourced first)
      and for each NPU tool call (C(npu-smi) at least 30, C(hccn_tool) at least 10); the plan's
      C(sglang_preflight_runtime_timeout).
    type: float
    required: true
  stack_reference:
    description:
      - "The reference environment of the planned SGLang release (C(profiles/_releases.yml) C(stacks)): C(release),
        C(cann), C(driver) (the Ascend HDK that CANN needs, or C(unknown)), C(packages), C(source). Filled by the
        action plugin from the plan's C(reference_stack)."
    type: dict
  stack_policy:
    description:
      - How a server stack that differs from I(stack_reference) counts. C(warn), C(fail), or C(off) (not compared).
      - The stack's other checks (torch_npu vs torch, deep-ep vs the host's CANN, visible NPUs, imports) fail regardless.
      - The plan's C(sglang_preflight_stack).
    type: str
    choices: [warn, fail, "off"]
    required: true
  preflight:
    description:
      - The plan's preflight settings (C(checks) - check name to C(fail), C(warn) or C(off); C(weights) - C(quick) or
        C(full)), filled by the action plugin from C(sglang_plan.preflight). Missing checks count as C(fail).
    type: dict
  hccn_tool:
    description: The NPU driver's RoCE NIC tool (the plan's C(sglang_hccn_tool)).
    type: path
    required: true
  npu_smi:
    description:
      - The npu-smi command, a name looked up in C(PATH) (then the driver's tool directories) or a path, so a stand-in
        can be placed there; the plan's C(sglang_npu_smi).
    type: str
    required: true
  driver_info:
    description: The driver's install-info file (the plan's C(sglang_npu_driver_info)).
    type: path
    required: true
  toolkit_info:
    description:
      - Glob patterns of the CANN toolkit install-info file; the first readable match with a version wins (the plan's
        C(sglang_npu_toolkit_info)).
    type: list
    elements: str
    required: true
  pings:
    description:
      - C(ping) mode, the pings of this host (C(device), C(address), C(peer), C(peer_device), C(why)).
    type: list
    elements: dict
    default: []
  cpu_sysfs_dir:
    description:
      - Also read every CPU's frequency governor under this sysfs CPU directory (C(observed.governors), path ->
        value), read-only. The deployment's host tuning then writes those that differ without reading them again.
    type: path
  installed_by_roles:
    description:
      - Packages (C(sglang), C(sglang-router)) the deployment's roles install before they start the services
        (C(sglang_server_install), C(sglang_router_install)); before start their runtime is not checked.
      - In C(preflight) mode, a server interpreter whose C(sglang) the roles install is still looked at as it is
        now, with every installed distribution (C(observed.runtimes)), and its stack checked as C(stack) mode
        would (returned as C(stack)). The deployment leaves out of its install a host where nothing is to install,
        and reports these checks for it.
    type: list
    elements: str
    default: []
  runtime_record:
    description:
      - On a host with a server, also read this file, the record of what the host's servers were deployed with
        (C(runtime.json) in C(sglang_generation_dir), which deploy.yml writes once they are healthy), and return its
        text as C(runtime_record). deploy.yml tells an upgrade from a deploy with it, without a module run of its
        own. A host without a server (a router's) has no record and ignores it.
      - The action fills it in, in C(preflight) mode, from the plan's C(sglang_generation_dir).
    type: path
attributes:
  check_mode:
    description: Can run in check_mode and return changed status prediction without modifying target.
    support: full
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: none
notes:
  - "Rank-0 reachability before start: nothing listens on the dist-init or store port yet, so the probe is a plain
    TCP connect. A refusal (RST) proves the address is routed and the host answers on that path, and counts as
    reachable; a timeout means packets are dropped (firewall, wrong address) and fails; in C(doctor) mode a
    refusal is a warning (rank 0 should be listening). A firewall that rejects with RST or ICMP port-unreachable
    cannot be told from a closed port; that case surfaces only at start."
  - A port or device held by a process of this deployment's own systemd unit (from C(/proc/<pid>/cgroup)) is not a
    finding, so the check passes on a second run against a running cluster.
  - C(npu-smi) and the port holders in C(/proc/*/fd) need root for full answers; run with C(become).
author:
  - ascend.sglang maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: Check this host against the plan (the plan's part and its settings filled by the action plugin)
  ascend.sglang.sglang_preflight:
    mode: preflight
  register: sglang_preflight_result

- name: The same with a CANN version of its own (a task's option wins over the plan's setting)
  ascend.sglang.sglang_preflight:
    mode: preflight
    min_cann_version: 8.3.RC1
  register: sglang_preflight_result
"""

RETURN = r"""
findings:
  description: One per check and subject. C(host), C(check), C(severity) (ok, warn, fail), C(found), C(expected), C(fix), C(service).
  returned: always
  type: list
  elements: dict
  sample:
    - {host: a3-decode-1, check: device_idle, severity: fail, service: sglang-decode-i0-r1,
       found: "device 3 (NPU 1 chip 1) held by pid 990711 python (7746 MB)", expected: no process on the device,
       fix: "stop it (e.g. `kill 990711`) or move the service to free devices (--base-gpu-id)"}
status:
  description: Worst severity of the host, C(ok), C(warnings) or C(failures).
  returned: always
  type: str
observed:
  description: What was looked at (npu, driver, toolkit, paths, nics, listeners, units, routes, probes, runtimes, owners,
    fabric, npu_health, weights; C(pings) in ping mode), with the raw output of hccn_tool and npu-smi.
  returned: always
  type: dict
requirements:
  description: What the host plan asked to look at.
  returned: always
  type: dict
stack:
  description: The checks of C(stack) mode (C(findings), C(status)) on the server stack as it is now, on a host whose
    stack the roles install (see O(installed_by_roles)).
  returned: in preflight mode, on a host whose C(sglang) the roles install
  type: dict
runtime_record:
  description: The text of O(runtime_record); none where the file is missing or cannot be read (a first deploy).
  returned: when O(runtime_record) is given, on a host with a server
  type: str
install_settings:
  description: With C(stack), the host's own values of the install's settings (C(sglang_server_packages),
    C(sglang_server_stack), C(sglang_wheelhouse), C(sglang_server_venv), ...) as the roles evaluate them (added by
    the action).
  returned: with stack, for the settings the host sets
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ascend.sglang.plugins.module_utils.checks import _checks
from ansible_collections.ascend.sglang.plugins.module_utils.npu._fabric import run_pings
from ansible_collections.ascend.sglang.plugins.module_utils.checks._fabric_checks import check_pings
from ansible_collections.ascend.sglang.plugins.module_utils.collect._host_probe import observe, run
from ansible_collections.ascend.sglang.plugins.module_utils.checks._findings import STATUS_WORDS, Context, Finding, worst
from ansible_collections.ascend.sglang.plugins.module_utils.checks._preflight import check_host, looked_stack, requirements
from ansible_collections.ascend.sglang.plugins.module_utils.checks._preflight_inputs import fabric_devices, is_server_host


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "host_plan": {"type": "dict"},
            "hostname": {"type": "str"},
            "profile": {"type": "str"},
            "hardware": {"type": "str", "choices": ["A2", "A3"]},
            "releases": {"type": "dict", "default": {}},
            "mode": {"type": "str", "choices": ["preflight", "doctor", "stack", "ping"], "default": "preflight"},
            "min_driver_version": {"type": "str"},
            "min_cann_version": {"type": "str"},
            "min_hbm_free_ratio": {"type": "float"},
            # The settings' values (sglang_plan.settings): their defaults are the settings table's, none here.
            "npu_smi": {"type": "str", "required": True},
            "driver_info": {"type": "path", "required": True},
            "toolkit_info": {"type": "list", "elements": "str", "required": True},
            "probe_timeout": {"type": "float", "required": True},
            "runtime_timeout": {"type": "float", "required": True},
            "installed_by_roles": {"type": "list", "elements": "str", "default": []},
            "stack_reference": {"type": "dict"},
            "stack_policy": {"type": "str", "choices": ["warn", "fail", "off"], "required": True},
            "preflight": {"type": "dict"},
            "hccn_tool": {"type": "path", "required": True},
            "pings": {"type": "list", "elements": "dict", "default": []},
            "cpu_sysfs_dir": {"type": "path"},
            "runtime_record": {"type": "path"},
        },
        supports_check_mode=True,
    )
    p = module.params
    host_plan = p["host_plan"] or {}
    hostname = p["hostname"] or module.params.get("hostname") or "localhost"
    if p["mode"] == "ping":
        ping(module, hostname, host_plan)
    ctx = Context(mode=p["mode"], hardware=p["hardware"], releases=dict(p["releases"] or {}),
                  min_driver_version=p["min_driver_version"], min_cann_version=p["min_cann_version"],
                  min_hbm_free_ratio=p["min_hbm_free_ratio"], profile=p["profile"],
                  installed_by_roles=frozenset(p["installed_by_roles"]),
                  stack_reference=p["stack_reference"], stack_policy=p["stack_policy"],
                  preflight=p["preflight"] or {})
    req = requirements(host_plan, ctx)
    observed = observe(req, npu_smi=p["npu_smi"], driver_info=p["driver_info"], toolkit_info=p["toolkit_info"],
                       probe_timeout=p["probe_timeout"], runtime_timeout=p["runtime_timeout"],
                       hccn_tool=p["hccn_tool"], check_mode=module.check_mode,
                       cpu_sysfs_dir=p["cpu_sysfs_dir"] if p["mode"] == "preflight" else None)
    findings = check_host(hostname, host_plan, observed, ctx)
    extra = {}
    looked = looked_stack(hostname, host_plan, req, observed, ctx)
    if looked is not None:
        # The stack checks of the stack as it is now (a host whose install has nothing to do leaves deploy.yml's
        # stack play: its stack report reads these).
        extra["stack"] = {"findings": [f.as_dict() for f in looked], "status": STATUS_WORDS[worst(looked)]}
    if p["runtime_record"] and is_server_host(host_plan):
        extra["runtime_record"] = read_record(p["runtime_record"])
    module.exit_json(changed=False, findings=[f.as_dict() for f in findings], status=STATUS_WORDS[worst(findings)],
                     observed=observed, requirements=req, **extra)


def read_record(path: str) -> str | None:
    """The text of the record of what the host's servers run; None where there is none to read (a first deploy, or
    a file deploy.yml cannot read: it then treats the host as one without a record, as it did when it read it with
    a task of its own)."""
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return None


def ping(module: AnsibleModule, hostname: str, host_plan: dict) -> None:
    """Mode ping: the pings the controller planned for this host (plugins/plugin_utils/rollout/_fleet_checks.py)."""
    p = module.params
    level = _checks.level(p["preflight"], "npu_ping")
    results = run_pings(lambda argv: run(argv, timeout=max(p["runtime_timeout"], 10.0)), p["pings"], p["hccn_tool"])
    findings: list[Finding] = []
    check_pings(lambda *a, **k: findings.append(Finding(hostname, *a, **k)), results, fabric_devices(host_plan), level)
    module.exit_json(changed=False, findings=[f.as_dict() for f in findings], status=STATUS_WORDS[worst(findings)],
                     observed={"pings": results})


if __name__ == "__main__":
    main()
