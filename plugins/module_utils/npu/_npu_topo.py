# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The CPU affinity of the NPUs: ``npu-smi info -t topo`` and Linux CPU lists.

Pure and typed; no Ansible import, no I/O.  Written against published output (tests/fixtures/npu_smi/README.md):
a header row of ``NPU<n>`` columns ending with ``CPU Affinity``, one row per NPU starting ``NPU<n>`` whose last
cell is the CPU list near that NPU (``144-167``), then a legend.  Output without that column, or a row whose last
cell is not a CPU list (``NA``), gives no affinity for that NPU: its services run unpinned.
"""

from __future__ import annotations

import re
from typing import Iterable, Mapping

# A Linux CPU list as the kernel prints it (/sys/.../cpulist, Cpus_allowed_list) and systemd's CPUAffinity= takes.
CPU_LIST = re.compile(r"[0-9]{1,5}(?:-[0-9]{1,5})?(?:,[0-9]{1,5}(?:-[0-9]{1,5})?)*")
_ROW = re.compile(r"^\s*NPU(\d+)\s+(.*\S)\s*$")
MAX_CPU = 65535


def parse_cpu_list(text: str) -> frozenset[int]:
    """'0-23,48-71' -> the CPUs; raises ValueError on anything that is not a CPU list (a reversed range too)."""
    text = str(text).strip()
    if not CPU_LIST.fullmatch(text):
        raise ValueError(f"{text!r} is not a CPU list (e.g. 0-23,48-71)")
    cpus: set[int] = set()
    for part in text.split(","):
        low, dash, high = part.partition("-")
        first, last = int(low), int(high if dash else low)
        if last < first or last > MAX_CPU:
            raise ValueError(f"{part!r} of {text!r} is not a CPU range")
        cpus.update(range(first, last + 1))
    return frozenset(cpus)


def runs(numbers: Iterable[int]) -> list[str]:
    """The numbers, sorted, as runs of consecutive ones: [0, 1, 2, 5, 7, 8] -> ['0-2', '5', '7-8']."""
    spans: list[list[int]] = []
    for number in sorted(set(numbers)):
        if spans and number == spans[-1][1] + 1:
            spans[-1][1] = number
        else:
            spans.append([number, number])
    return [f"{first}-{last}" if last != first else str(first) for first, last in spans]


def format_cpu_list(cpus: Iterable[int]) -> str:
    """The CPUs as the shortest sorted CPU list ('0-23,48-71')."""
    return ",".join(runs(cpus))


def cpus_near(near: Mapping[int, str], devices: Iterable[int]) -> str:
    """The CPU list of every CPU near one of these devices; ``near``: device index -> CPU list (each device in it)."""
    return format_cpu_list(cpu for device in devices for cpu in parse_cpu_list(near[device]))


def parse_topo(text: str) -> dict[int, frozenset[int]]:
    """``npu-smi info -t topo`` -> NPU index -> the CPUs of its ``CPU Affinity`` cell; empty when the output has no
    such column.  An NPU whose cell is not a CPU list is left out."""
    lines = (text or "").splitlines()
    if not any("CPU Affinity" in line for line in lines):
        return {}
    out: dict[int, frozenset[int]] = {}
    for line in lines:
        row = _ROW.match(line)
        if not row:
            continue
        last = row.group(2).split()[-1]
        try:
            out[int(row.group(1))] = parse_cpu_list(last)
        except ValueError:
            continue
    return out
