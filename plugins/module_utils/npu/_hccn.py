# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Parsers for what ``hccn_tool`` (the NPU RoCE NIC tool of the Ascend driver) prints, and ``/etc/hccn.conf``.

Private to the collection; runs on the managed host.  Pure parsers plus one bounded retry helper: no Ansible
import, standard library only, imports on Python 3.11.  Written against published output and the tool's
published source (see tests/fixtures/hccn_tool/README.md):

* ``-link -g``: ``link status: UP`` / ``link status: DOWN``
* ``-net_health -g``: ``net health status: Success`` (else ``Socket fail``, ``Receive timeout``, ``Unreachable``,
  ``Time exceeded``, ``Fault``, ``Init``, ``Thread error``, ``Detect ip set``, ``Unknown``)
* ``-ip -g``: ``ipaddr:<ip>`` and ``netmask:<mask>``; no address set: ``Get ipconf failed, because no ip was
  preset there!`` on stderr
* ``-tls -g``: ``dev_id:0, tls switch[0](0:disable, 1:enable), tls preconfigured[1](0:non-preset, 1:preset),
  tls alarm time threshold[60]days`` (older drivers omit ``tls preconfigured``), then certificate blocks
* ``-ping -g address <ip>``: ``device 3 PING <ip>``, one ``recv seq=N,time=X ms`` or ``recv time out seq=N``
  line per packet, ``3 packets transmitted, 2 received, 33.33% packet loss``
* any query while another runs on the device: ``hccn_tool is busy, please try again.``
"""

from __future__ import annotations

import re
import time
from typing import Any, Callable

_LINK = re.compile(r"^\s*link status\s*:\s*(\S+)", re.M | re.I)
_NET_HEALTH = re.compile(r"^\s*net health status\s*:?\s*(\S.*?)\s*$", re.M | re.I)
# Anchored at the line start so the ``vnic ipaddr:`` lines of ``-vnic -g`` never count.
_IPADDR = re.compile(r"^\s*ipaddr\s*:\s*(\S+)", re.M | re.I)
_NETMASK = re.compile(r"^\s*netmask\s*:\s*(\S+)", re.M | re.I)
_NO_IP = re.compile(r"^.*no ip was preset.*$", re.M | re.I)
_TLS_SWITCH = re.compile(r"tls switch\s*\[\s*(\d+)\s*\]", re.I)
_TLS_PRESET = re.compile(r"tls preconfigured\s*\[\s*(\d+)\s*\]", re.I)
_TLS_ALARM = re.compile(r"tls alarm time threshold\s*\[\s*(\d+)\s*\]", re.I)
_PING_SUMMARY = re.compile(r"(\d+)\s+packets transmitted,\s*(\d+)\s+received,\s*([\d.]+)%\s*packet loss", re.I)
# ``seq=N`` on the RoCE ping; the newer tool line prints ``seq:N``.  A non-numeric seq (a typo in a published
# example reads ``seq=O``) is a timeout whose number is unknown: it is counted by the summary, not listed here.
_PING_TIMEOUT = re.compile(r"recv time out seq\s*[=:]\s*(\d+)", re.I)
_BUSY = "hccn_tool is busy"
_CONF_LINE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_]*?)_(\d+)\s*=\s*(.*?)\s*$")

Runner = Callable[[list[str]], tuple[int, str, str]]


def parse_link(text: str) -> str | None:
    """``UP``, ``DOWN`` (or whatever word the tool printed); None when there is no ``link status`` line."""
    match = _LINK.search(text or "")
    return match.group(1) if match else None


def parse_net_health(text: str) -> str | None:
    """The status after ``net health status:`` (``Success`` is the only healthy one); None without that line."""
    match = _NET_HEALTH.search(text or "")
    return match.group(1) if match else None


def parse_ip(text: str) -> dict[str, str | None]:
    """``{"address", "netmask", "error"}``; ``error`` is the tool's message when no IP is set, else
    ``no ipaddr line`` when the output has no address at all.  The first port's pair counts."""
    text = text or ""
    address = _IPADDR.search(text)
    netmask = _NETMASK.search(text)
    error = None
    if address is None:
        no_ip = _NO_IP.search(text)
        error = no_ip.group(0).strip() if no_ip else "no ipaddr line"
    return {"address": address.group(1) if address else None,
            "netmask": netmask.group(1) if netmask else None,
            "error": error}


def _first_int(pattern: re.Pattern, text: str) -> int | None:
    match = pattern.search(text)
    return int(match.group(1)) if match else None


def parse_tls(text: str) -> dict[str, int | None]:
    """``{"switch", "preconfigured", "alarm_days"}`` of the first device line; None for a missing field."""
    text = text or ""
    return {"switch": _first_int(_TLS_SWITCH, text),
            "preconfigured": _first_int(_TLS_PRESET, text),
            "alarm_days": _first_int(_TLS_ALARM, text)}


def parse_ping(text: str) -> dict[str, Any] | None:
    """``{"transmitted", "received", "loss_pct", "timeouts": [seq, ...]}``; None without the summary line
    (the tool failed before pinging, e.g. an invalid address)."""
    text = text or ""
    summary = _PING_SUMMARY.search(text)
    if summary is None:
        return None
    return {"transmitted": int(summary.group(1)),
            "received": int(summary.group(2)),
            "loss_pct": float(summary.group(3)),
            "timeouts": [int(seq) for seq in _PING_TIMEOUT.findall(text)]}


def is_busy(text: str) -> bool:
    """The tool refused because another query runs on the device (try again later)."""
    return _BUSY in (text or "").lower()


def parse_hccn_conf(text: str) -> dict[int, dict[str, str]]:
    """``/etc/hccn.conf`` (``address_0=...``, ``netmask_0=...``, ``netdetect_0=...``...) -> device -> keys
    without the ``_<i>`` suffix.  Comments, blank lines and anything else are ignored; a repeated key keeps
    its last value, as a later write of the tool overrides an earlier one."""
    devices: dict[int, dict[str, str]] = {}
    for line in (text or "").splitlines():
        if line.lstrip().startswith("#"):
            continue
        match = _CONF_LINE.match(line)
        if match:
            key, device, value = match.group(1), int(match.group(2)), match.group(3)
            devices.setdefault(device, {})[key] = value
    return devices


def device_query(run: Runner, tool: str, device: int, args: list[str] | tuple[str, ...], retries: int = 5,
                 pause: float = 0.2, sleep: Callable[[float], Any] = time.sleep) -> tuple[int, str, str]:
    """Runs ``[tool, "-i", device, *args]`` through ``run(argv) -> (rc, stdout, stderr)``.

    While the tool answers that it is busy, tries again at most ``retries`` more times, pausing ``pause``
    seconds, doubling each time.  Returns the last answer (which may still be the busy one).  The tool
    refuses concurrent queries on one device: callers run the queries of a device one after the other."""
    argv = [tool, "-i", str(device), *args]
    rc, out, err = run(argv)
    delay = pause
    for _attempt in range(max(0, retries)):
        if not (is_busy(out) or is_busy(err)):
            break
        sleep(delay)
        delay *= 2
        rc, out, err = run(argv)
    return rc, out, err
