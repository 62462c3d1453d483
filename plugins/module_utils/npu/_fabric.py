# Copyright: ascend.sglang contributors
# Apache License 2.0
"""What the host's NPU NICs (RoCE) and chips say, for the devices its services use: the observations of the
fabric checks (module_utils/checks/_checks.py), and the pings of the controller's ping plan.

Private to the collection; runs on the managed host (module sglang_preflight). The tool refuses concurrent
queries on one device ("hccn_tool is busy"): a device's queries run one after the other, with retries; the
devices run in parallel, as many at a time as there are devices (each is a separate NIC).
"""

from __future__ import annotations

import concurrent.futures
import os
from typing import Any, Callable, Iterable, Mapping

from ansible_collections.ascend.sglang.plugins.module_utils.npu import _hccn
from ansible_collections.ascend.sglang.plugins.module_utils.npu._npu_smi import parse_health

HCCN_CONF = "/etc/hccn.conf"
# hccn_tool argument per query, and the parser of its output.
QUERIES = {
    "link": (["-link", "-g"], _hccn.parse_link),
    "net_health": (["-net_health", "-g"], _hccn.parse_net_health),
    "ip": (["-ip", "-g"], _hccn.parse_ip),
    "tls": (["-tls", "-g"], _hccn.parse_tls),
}
# Bound of the raw output kept per query (the forensics bundle keeps it; a runaway tool cannot swamp a result).
RAW_MAX = 2000

Runner = Callable[[list[str]], "tuple[int, str, str]"]


def _raw(rc: int, out: str, err: str) -> str:
    text = (out or "") + (("\n" + err) if err and err.strip() else "")
    return (text.strip() or f"(no output, exit {rc})")[:RAW_MAX]


def _device(run: Runner, tool: str, device: int, queries: Iterable[str]) -> dict[str, Any]:
    got: dict[str, Any] = {}
    for name in queries:
        args, parse = QUERIES[name]
        rc, out, err = _hccn.device_query(run, tool, device, args)
        got[name] = {"rc": rc, "value": parse(out + "\n" + err), "raw": _raw(rc, out, err),
                     "busy": _hccn.is_busy(out) or _hccn.is_busy(err)}
    return got


def read_conf(path: str = HCCN_CONF) -> tuple[dict[int, dict[str, str]] | None, str | None]:
    """(/etc/hccn.conf by device, None) or (None, why it could not be read)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return _hccn.parse_hccn_conf(handle.read()), None
    except FileNotFoundError:
        return None, "missing"
    except OSError as exc:
        return None, f"unreadable ({exc.strerror or exc})"


def observe_nics(run: Runner, devices: list[int], queries: Iterable[str], tool: str,
                 conf_path: str = HCCN_CONF) -> dict[str, Any]:
    """hccn_tool's answers for each device (queries among link, net_health, ip, tls) and /etc/hccn.conf."""
    conf, conf_error = read_conf(conf_path)
    out: dict[str, Any] = {"tool": tool, "available": os.access(tool, os.X_OK), "conf": conf,
                           "conf_error": conf_error, "devices": {}}
    queries = [q for q in queries if q in QUERIES]
    if not out["available"] or not devices or not queries:
        return out
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(devices)) as pool:
        futures = {device: pool.submit(_device, run, tool, device, queries) for device in devices}
        out["devices"] = {str(device): future.result() for device, future in futures.items()}
    return out


def chip_of(device: int, hardware: str) -> tuple[int, int]:
    """npu-smi's (NPU id, chip) of a device as --base-gpu-id counts them: an A3 card holds two dies."""
    return (device // 2, device % 2) if hardware == "A3" else (device, 0)


def observe_health(run: Runner, devices: list[int], hardware: str, npu_smi: str) -> dict[str, Any]:
    """``npu-smi info -t health -i N -c C`` for each device's chip."""

    def one(device: int) -> dict[str, Any]:
        npu, chip = chip_of(device, hardware)
        rc, out, err = run([npu_smi, "info", "-t", "health", "-i", str(npu), "-c", str(chip)])
        return dict(parse_health(out), rc=rc, npu=npu, chip=chip, raw=_raw(rc, out, err))

    if not devices:
        return {}
    # npu-smi talks to the driver's management channel: a few at a time.
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(4, len(devices))) as pool:
        return {str(device): result for device, result in zip(devices, pool.map(one, devices))}


def run_pings(run: Runner, pings: list[Mapping[str, Any]], tool: str) -> list[dict[str, Any]]:
    """Each ping of the plan ({device, address, ...}): the device's pings one after the other, devices in parallel.
    Returns the pings in order, each with ``result`` (parse_ping, None when the tool printed no summary) and
    ``raw``."""
    by_device: dict[int, list[int]] = {}
    for index, ping in enumerate(pings):
        by_device.setdefault(int(ping["device"]), []).append(index)
    results: list[dict[str, Any]] = [dict(p) for p in pings]
    if not os.access(tool, os.X_OK):
        for item in results:
            item.update(result=None, raw=f"{tool} not found or not executable", rc=127)
        return results

    def device_pings(device: int) -> None:
        for index in by_device[device]:
            rc, out, err = _hccn.device_query(run, tool, device, ["-ping", "-g", "address",
                                                                  str(results[index]["address"])])
            results[index].update(rc=rc, result=_hccn.parse_ping(out), raw=_raw(rc, out, err))

    if by_device:
        with concurrent.futures.ThreadPoolExecutor(max_workers=len(by_device)) as pool:
            list(pool.map(device_pings, sorted(by_device)))
    return results
