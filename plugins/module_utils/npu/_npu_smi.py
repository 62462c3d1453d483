# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Parsers for what an Ascend host says about its NPUs: ``npu-smi info`` and the install-info files.

Pure and typed; no Ansible import, no I/O.  Written against published output (see
tests/fixtures/npu_smi/README.md for the sources):

* Atlas 800I A2 (910B): one row pair per NPU; the first cell of the second row is the chip
  number only (``| 0                         | 0000:C1:00.0  | ...``) and the name is ``910B3``,
  ``910B4``, ``910B2C``... ; 8 NPUs = 8 devices.
* Atlas 800I A3 (910_93 class): the name column says ``Ascend910``; every NPU shows two row
  pairs, one per die, whose second row carries ``<chip> <phy-id>`` (``| 1     15 | ...``);
  8 NPUs x 2 dies = 16 devices.
* The process table (``NPU  Chip | Process id | Process name | Process memory(MB) [| Process id
  in container]``) lists processes per NPU and chip; ``No running processes found in NPU n``.

Devices are numbered in the order npu-smi lists their dies: that is the numbering
``--base-gpu-id`` / ``ASCEND_RT_VISIBLE_DEVICES`` count in (0..15 on an A3 node, 0..7 on A2).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Mapping

HEALTH_OK = "OK"
# npu-smi health values, from least to most severe.  Anything else is treated as a fault.
HEALTH_WARNING = "Warning"
HEALTH_FAULTS = ("Alarm", "Critical")

_PAIR = re.compile(r"(\d+)\s*/\s*(\d+)")
# ``npu-smi info -t health -i N`` prints ``Health : <state>`` per chip (and the MCU); ``... -c C`` prints
# ``Health Status : <state>`` and ``Error Code : NA`` (or hex codes).  Key padded to 30 columns after a tab.
_HEALTH_LINE = re.compile(r"^\s*Health(?:\s+Status)?\s*:\s*(\S.*?)\s*$", re.M)
_ERROR_CODE = re.compile(r"^\s*Error Code\s*:[ \t]*(.*?)\s*$", re.M)
# Severity order for the worst-of rule; UNKNOWN (device absent or not started) and anything else rank worst.
_HEALTH_RANK = {HEALTH_OK.lower(): 0, HEALTH_WARNING.lower(): 1, "alarm": 2, "critical": 3}
_VERSION = re.compile(r"npu-smi\s+(\S+)")
_NO_PROCESS = re.compile(r"No running processes found in NPU\s+(\d+)", re.I)


@dataclasses.dataclass(frozen=True)
class NpuProcess:
    npu: int
    chip: int
    pid: int
    name: str
    memory_mb: int | None


@dataclasses.dataclass(frozen=True)
class Chip:
    """One device (an A2 NPU, or one die of an A3 NPU)."""

    index: int
    npu: int
    chip: int
    phy_id: int | None
    name: str
    health: str
    bus_id: str
    hbm_used_mb: int | None
    hbm_total_mb: int | None
    processes: tuple[NpuProcess, ...] = ()

    @property
    def hbm_free_mb(self) -> int | None:
        if self.hbm_used_mb is None or self.hbm_total_mb is None:
            return None
        return self.hbm_total_mb - self.hbm_used_mb


@dataclasses.dataclass(frozen=True)
class NpuSmiInfo:
    version: str | None
    chips: tuple[Chip, ...]
    processes: tuple[NpuProcess, ...]

    @property
    def generation(self) -> str | None:
        return generation_of(self.chips)

    @property
    def chip_name(self) -> str | None:
        names = sorted({c.name for c in self.chips})
        return ", ".join(names) if names else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "generation": self.generation,
            "chip_name": self.chip_name,
            "device_count": len(self.chips),
            "npu_count": len({c.npu for c in self.chips}),
            "chips": [dict(dataclasses.asdict(c), hbm_free_mb=c.hbm_free_mb) for c in self.chips],
            "processes": [dataclasses.asdict(p) for p in self.processes],
        }


def generation_of(chips: tuple[Chip, ...] | list[Chip]) -> str | None:
    """``A2`` (910B), ``A3`` (910_93 class, two dies per NPU) or None when it cannot be told."""
    if not chips:
        return None
    names = {c.name for c in chips}
    if any(re.search(r"910_?93", n) for n in names):
        return "A3"
    if all(re.search(r"910B", n, re.I) for n in names):
        return "A2"
    dies: dict[int, int] = {}
    for c in chips:
        dies[c.npu] = dies.get(c.npu, 0) + 1
    if names == {"Ascend910"} and max(dies.values()) == 2:
        return "A3"
    return None


def _cells(line: str) -> list[str] | None:
    line = line.rstrip()
    if not line.startswith("|"):
        return None
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _ints(text: str) -> list[int] | None:
    parts = text.split()
    if parts and all(p.isdigit() for p in parts):
        return [int(p) for p in parts]
    return None


def _int_or_none(text: str) -> int | None:
    text = text.strip()
    return int(text) if text.isdigit() else None


def parse_npu_smi_info(text: str) -> NpuSmiInfo:
    """``npu-smi info`` text -> devices (in listing order) and processes.

    Tolerates the 23.x-26.x column widths, the extra ``Process id in container`` column and
    output without the header (rows only).  Unknown lines are ignored.
    """
    version = None
    match = _VERSION.search(text)
    if match:
        version = match.group(1)
    chips: list[Chip] = []
    processes: list[NpuProcess] = []
    in_processes = False
    pending: tuple[int, str, str] | None = None  # (npu, name, health) of the row awaiting its chip row
    for raw in text.splitlines():
        cells = _cells(raw)
        if cells is None:
            continue
        joined = " ".join(cells)
        if "Process id" in joined and "Process name" in joined:
            in_processes = True
            continue
        if "Name" in joined and "Health" in joined:
            in_processes = False
            continue
        if in_processes:
            if _NO_PROCESS.search(joined) or len(cells) < 3:
                continue
            ids = _ints(cells[0])
            pid = _int_or_none(cells[1])
            if not ids or pid is None:
                continue
            npu, chip = ids[0], (ids[1] if len(ids) > 1 else 0)
            memory = _int_or_none(cells[3]) if len(cells) > 3 else None
            processes.append(NpuProcess(npu=npu, chip=chip, pid=pid, name=cells[2], memory_mb=memory))
            continue
        if len(cells) < 3:
            continue
        first = cells[0].split()
        if len(first) >= 2 and first[0].isdigit() and not first[1].isdigit():
            # NPU row: "<npu> <name>" | health | power temp hugepages
            pending = (int(first[0]), " ".join(first[1:]), cells[1])
            continue
        ids = _ints(cells[0])
        if ids is not None and pending is not None and len(ids) <= 2:
            # Chip row: "<chip> [<phy-id>]" | bus-id | aicore memory hbm
            pairs = _PAIR.findall(cells[2])
            used, total = (int(pairs[-1][0]), int(pairs[-1][1])) if len(pairs) >= 2 else (None, None)
            npu, name, health = pending
            chips.append(Chip(index=len(chips), npu=npu, chip=ids[0], phy_id=ids[1] if len(ids) > 1 else None,
                              name=name, health=health, bus_id=cells[1], hbm_used_mb=used, hbm_total_mb=total))
            pending = None
    by_die: dict[tuple[int, int], list[NpuProcess]] = {}
    for proc in processes:
        by_die.setdefault((proc.npu, proc.chip), []).append(proc)
    chips = [dataclasses.replace(c, processes=tuple(by_die.get((c.npu, c.chip), ()))) for c in chips]
    return NpuSmiInfo(version=version, chips=tuple(chips), processes=tuple(processes))


def parse_install_info(text: str) -> dict[str, str]:
    """``key=value`` lines of ``version.info`` / ``ascend_toolkit_install.info``."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        if "=" in line:
            key, _unused, value = line.partition("=")
            if key.strip():
                values.setdefault(key.strip(), value.strip())
    return values


def driver_version(info: Mapping[str, str]) -> str | None:
    """Driver ``version.info``: ``package_version`` when present (newer drivers), else ``Version``."""
    return info.get("package_version") or info.get("Version") or info.get("version") or None


def toolkit_version(info: Mapping[str, str]) -> str | None:
    """CANN ``ascend_toolkit_install.info``: the ``version`` field (e.g. 8.3.RC2)."""
    return info.get("version") or info.get("Version") or None


def _token_key(token: str) -> tuple[int, int, str]:
    token = token.lower()
    if token.isdigit():
        return (2, int(token), "")
    match = re.fullmatch(r"([a-z]+)(\d*)", token)
    if match:
        word, num = match.group(1), int(match.group(2) or 0)
        rank = {"alpha": 0, "a": 0, "beta": 0, "b": 0, "t": 0, "rc": 1, "post": 3}.get(word, 1)
        return (rank, num, word)
    match = re.fullmatch(r"(\d+)([a-z]+)(\d*)", token)
    if match:  # e.g. "0rc1" (PEP 440 style without a dot)
        return (2, int(match.group(1)), token)
    return (1, 0, token)


def version_key(version: str) -> list[tuple[int, int, str]]:
    """Ordering key for Ascend / Python release strings.

    ``8.0.RC2 < 8.0.0 < 8.0.1``, ``24.1.rc2 < 24.1.rc2.2 < 24.1.0``, ``0.5.6 < 0.5.6.post2``:
    an ``RCn`` token sorts before a number at the same position (CANN and the driver publish
    ``x.y.RCn`` before ``x.y.0``), ``postN`` after.
    """
    tokens = [t for t in re.split(r"[.\-_+]", version.strip()) if t]
    return [_token_key(t) for t in tokens]


def compare_versions(a: str, b: str) -> int:
    """-1, 0 or 1 as ``a`` is older than, the same as or newer than ``b``."""
    ka, kb = version_key(a), version_key(b)
    width = max(len(ka), len(kb))
    pad = (2, 0, "")
    ka += [pad] * (width - len(ka))
    kb += [pad] * (width - len(kb))
    return (ka > kb) - (ka < kb)


def normalize_release(version: str) -> str:
    """Python package release spelled the PEP 440 way for equality (``0.5.6.post2`` == ``0.5.6-post2``).

    A local version label (``0.5.6.post2+ascend1``: a site's own build of that release) counts as the release.
    """
    text = version.strip().lower().lstrip("v").split("+", 1)[0]
    text = re.sub(r"[-_]", ".", text)
    return re.sub(r"\.(post|rc|a|b|dev)\.?(\d+)", r".\1\2", text)


def parse_health(text: str) -> dict[str, str | None]:
    """``npu-smi info -t health -i N [-c C]`` -> ``{"health", "error_code"}``.

    ``health`` is the worst state printed (several ``Health`` lines for the ``-i N`` form: one per chip and
    the MCU), ``NA`` lines (an MCU seen from a container) left out unless nothing else was printed; None
    without any health line.  ``error_code`` is the ``Error Code`` value as printed (``NA``, or the hex codes
    separated by blanks), None when absent (the ``-i N`` form has none).
    """
    states = _HEALTH_LINE.findall(text or "")
    real = [s for s in states if s.upper() != "NA"]
    health = max(real, key=lambda s: _HEALTH_RANK.get(s.lower(), len(_HEALTH_RANK))) if real else None
    if health is None and states:
        health = states[0]
    code = _ERROR_CODE.search(text or "")
    return {"health": health, "error_code": code.group(1) if code else None}
