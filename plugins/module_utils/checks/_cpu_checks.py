# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The host check of CPU pinning (``cpu_affinity``): each server rank pinned to the CPUs near its NPUs.

The CPUs come from the inventory (``sglang_npu_cpus``, so that render mode writes the units deployment writes); this
check compares them with what the host says, ``npu-smi info -t topo`` (module_utils/npu/_npu_topo.py) and its online
CPUs:
- pinned to CPUs the host does not have: fail (systemd could not start the unit);
- pinned elsewhere than the topology says, or unpinned where the topology knows the CPUs: warn, with the exact
  ``sglang_npu_cpus`` to set;
- unpinned on a host whose topology gives no CPU affinity: warn (it runs unpinned).
The topology is read only where it has one row per device ``npu-smi info`` lists (A2: one device per NPU).

Private to the collection; pure, no Ansible import. Runs on the managed host through ``_preflight.check_host``.
"""

from __future__ import annotations

from typing import Any, Mapping

from ansible_collections.ascend.sglang.plugins.module_utils.checks._fabric_checks import span
from ansible_collections.ascend.sglang.plugins.module_utils.checks._findings import FAIL, OK, WARN, Findings
from ansible_collections.ascend.sglang.plugins.module_utils.npu._npu_topo import cpus_near, format_cpu_list, parse_cpu_list
from ansible_collections.ascend.sglang.plugins.module_utils.checks._preflight_inputs import devices, services

CHECK = "cpu_affinity"
FIX_PINNED = "correct sglang_npu_cpus for this host: `npu-smi info -t topo` lists the CPUs near each NPU"


def _table(npus: Mapping[int, str]) -> str:
    return "{" + ", ".join(f"{n}: '{cpus}'" for n, cpus in sorted(npus.items())) + "}"


def check_cpu_affinity(out: Findings, host_plan: Mapping[str, Any], observed: Mapping[str, Any]) -> None:
    topo = observed.get("topo")
    if not isinstance(topo, Mapping):
        return  # an older probe, or no NPU on this host
    near = {int(n): str(c) for n, c in (topo.get("npus") or {}).items()}
    chips = (((observed.get("npu") or {}).get("info") or {}).get("chips")) or []
    topo_error = topo.get("error")
    if near and chips and len(near) != len(chips):
        # One row per NPU card where npu-smi info lists two dies per card (A3?): rows are not devices; unmapped.
        topo_error = (f"npu-smi info -t topo lists {len(near)} NPUs for the {len(chips)} devices of npu-smi info: "
                      "its rows are not the devices --base-gpu-id counts")
        near = {}
    online_text = str(observed.get("cpus_online") or "")
    try:
        online = parse_cpu_list(online_text) if online_text else None
    except ValueError:
        online = None
    fix_set = f"set sglang_npu_cpus: {_table(near)} for this host (its group's vars when its hosts are alike)"
    for svc in services(host_plan):
        used = devices(svc)
        if not used:
            continue
        name = str(svc.get("name"))
        pinned = str(svc.get("cpus") or "")
        known = all(d in near for d in used)
        nearby = cpus_near(near, used) if known else None
        expected = f"pinned to the CPUs near {span(used, 'NPU')}" + (f" ({nearby})" if nearby else "")
        if pinned:
            cpus = parse_cpu_list(pinned)
            if online is not None and not cpus & online:
                out.add(CHECK, FAIL, f"pinned to CPUs {pinned}, none of them online (online: {online_text})", expected,
                        FIX_PINNED, service=name)
            elif online is not None and not cpus <= online:
                out.add(CHECK, WARN, f"pinned to CPUs {pinned}, of which {format_cpu_list(cpus - online)} are not "
                                     f"online (online: {online_text})", expected, FIX_PINNED, service=name)
            elif nearby is not None and nearby != pinned:
                out.add(CHECK, WARN, f"pinned to CPUs {pinned}; npu-smi info -t topo puts {nearby} near "
                                     f"{span(used, 'NPU')}", expected, fix_set, service=name)
            else:
                unverified = "" if nearby else " (npu-smi info -t topo gives none to compare)"
                out.add(CHECK, OK, f"pinned to CPUs {pinned}{unverified}", expected, service=name)
        elif nearby is not None:
            out.add(CHECK, WARN, f"runs unpinned; npu-smi info -t topo puts CPUs {nearby} near {span(used, 'NPU')}",
                    expected, fix_set, service=name)
        else:
            why = topo_error or f"npu-smi info -t topo gives no CPU affinity for {span(used, 'NPU')}"
            out.add(CHECK, WARN, f"runs unpinned: {why}", expected,
                    "nothing to do where the NPUs are equally near every CPU; otherwise set sglang_npu_cpus "
                    "(NPU index -> CPU list) from the server's documentation", service=name)
