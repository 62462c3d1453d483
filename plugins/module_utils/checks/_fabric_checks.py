# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The host's own findings of the fabric, NPU health and weights checks (module_utils/checks/_checks.py), from what
module_utils/npu/_fabric.py and _weights.py observed. Pure, no I/O. The findings that compare hosts (the TLS switch,
the weights of the ranks of one instance, the pings) are the controller's (plugins/plugin_utils/rollout/_fleet_checks.py).

Each function takes ``add(check, severity, found, expected, fix="", service=None)`` (the preflight's collector) and
the check's level (fail | warn | off): a problem is a finding of that severity, an off check adds nothing. Devices
with the same finding are reported on one line, naming the devices and the services that use them.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

from ansible_collections.ascend.sglang.plugins.module_utils.npu._npu_topo import runs

Add = Callable[..., None]
OK = "ok"


def span(devices: Iterable[int], noun: str = "device") -> str:
    """'device 3', 'devices 0-15', 'devices 0-3, 6, 9-10' (``noun`` NPU: 'NPUs 0-3')."""
    items = sorted({int(d) for d in devices})
    return f"{noun} {items[0]}" if len(items) == 1 else f"{noun}s " + ", ".join(runs(items))


class Grouped:
    """Findings of one check gathered per (severity, found, expected, fix), reported one line per group."""

    def __init__(self, add: Add, check: str, users: Mapping[int, list[str]]) -> None:
        self.add, self.check, self.users = add, check, users
        self.groups: dict[tuple[str, str, str, str], list[int]] = {}

    def put(self, device: int, severity: str, found: str, expected: str, fix: str = "") -> None:
        self.groups.setdefault((severity, found, expected, fix), []).append(int(device))

    def emit(self) -> None:
        for (severity, found, expected, fix), devices in self.groups.items():
            services = sorted({name for d in devices for name in self.users.get(d, [])})
            self.add(self.check, severity, f"{span(devices)}: {found}", expected, fix,
                     service=", ".join(services) or None)


def check_nics(add: Add, fabric: Mapping[str, Any] | None, users: Mapping[int, list[str]],
               levels: Mapping[str, str]) -> None:
    """link UP, net health Success, an IP equal to /etc/hccn.conf's (which must exist when the host's services
    talk to other hosts), per device the host's fabric services use. users: device -> those services."""
    if not fabric or not users:
        return
    tool = fabric.get("tool")
    enabled = [check for check in ("npu_link", "npu_net_health", "npu_ip") if levels.get(check, "fail") != "off"]
    if not fabric.get("available"):
        if enabled:
            worst = "fail" if any(levels.get(c, "fail") == "fail" for c in enabled) else "warn"
            add(enabled[0], worst, f"{tool} not found or not executable", "hccn_tool of the NPU driver",
                "install the NPU driver's tools (hccn_tool) or set sglang_hccn_tool to where it is")
        return
    devices = fabric.get("devices") or {}
    conf = fabric.get("conf")
    link = Grouped(add, "npu_link", users)
    health = Grouped(add, "npu_net_health", users)
    ipg = Grouped(add, "npu_ip", users)
    if levels.get("npu_ip", "fail") != "off" and conf is None:
        add("npu_ip", levels["npu_ip"], f"/etc/hccn.conf {fabric.get('conf_error') or 'missing'}",
            "/etc/hccn.conf with address_N / netmask_N of every NPU (HCCL and the KV transfer read it)",
            "configure the NPU NICs (hccn_tool -i N -ip -s address A netmask M) so that the driver writes "
            "/etc/hccn.conf; in containers it is mounted read-only")
    for key in sorted(users, key=int):
        got = devices.get(str(key)) or {}
        _one_state(link, key, got.get("link"), levels.get("npu_link", "fail"), "link status", "UP", LINK_FIX)
        _one_state(health, key, got.get("net_health"), levels.get("npu_net_health", "fail"), "net health status",
                   "Success", HEALTH_FIX)
        _one_ip(ipg, key, got.get("ip"), conf, levels.get("npu_ip", "fail"))
    for group in (link, health, ipg):
        group.emit()


def _busy(result: Mapping[str, Any]) -> bool:
    return bool(result.get("busy"))


LINK_FIX = ("check the NPU's cable, optical module and switch port (hccn_tool -i N -link -g; -optical -g), "
            "then rerun")
HEALTH_FIX = ("the NPU cannot reach its detect address: check its IP, netdetect address and gateway "
              "(hccn_tool -i N -netdetect -g, -gateway -g) and the switch")


def _one_state(group: Grouped, device: int, result: Mapping[str, Any] | None, level: str, label: str, good: str,
               fix: str) -> None:
    """A query whose answer is one word: ``good`` (UP, Success) or a finding at the check's level."""
    if level == "off" or result is None:
        return
    value = result.get("value")
    if value == good:
        group.put(device, OK, f"{label}: {good}", good)
    elif _busy(result):
        group.put(device, "warn", "hccn_tool stayed busy", f"{label}: {good}", "rerun preflight")
    else:
        group.put(device, level, f"{label}: {value}" if value else result.get("raw", "no answer"), good, fix)


def _one_ip(group: Grouped, device: int, result: Mapping[str, Any] | None, conf: Mapping[int, Any] | None,
            level: str) -> None:
    if level == "off" or result is None:
        return
    value = result.get("value") or {}
    address = value.get("address")
    planned = ((conf or {}).get(int(device)) or {}).get("address")
    if _busy(result):
        group.put(device, "warn", "hccn_tool stayed busy", "an IP", "rerun preflight")
    elif not address:
        group.put(device, level, f"no IP ({value.get('error') or 'no ipaddr line'})",
                  "the NPU's IP (address_N of /etc/hccn.conf)",
                  "set it: hccn_tool -i N -ip -s address A netmask M (then /etc/hccn.conf holds it)")
    elif conf is not None and planned != address:
        group.put(device, level, f"ipaddr {address}, /etc/hccn.conf address_{device}={planned or 'unset'}",
                  "the same address", "the NIC and /etc/hccn.conf disagree: set the address again with "
                  "hccn_tool -i N -ip -s, or correct /etc/hccn.conf, then rerun")
    else:
        group.put(device, OK, "ipaddr as in /etc/hccn.conf" if conf is not None else f"ipaddr {address}",
                  "an IP")


def check_health(add: Add, health: Mapping[str, Any] | None, users: Mapping[int, list[str]], level: str) -> None:
    """npu-smi's health of each chip the host's servers use: Warning warns, anything but OK is the level's."""
    if level == "off" or not users:
        return
    group = Grouped(add, "npu_health", users)
    for key in sorted(users, key=int):
        got = (health or {}).get(str(key))
        if got is None:
            continue
        value = str(got.get("health") or "")
        where = f"NPU {got.get('npu')} chip {got.get('chip')}"
        code = got.get("error_code")
        detail = f" (error code {code})" if code and code not in ("NA", "0") else ""
        fix = (f"`npu-smi info -t health -i {got.get('npu')} -c {got.get('chip')}` names the alarm: clear it, "
               "reset or replace the NPU, or move the service off it (--base-gpu-id)")
        if value == "OK":
            group.put(key, OK, "Health Status: OK", "OK")
        elif value == "Warning":
            group.put(key, "warn", f"{where}: Warning{detail}", "OK", fix)
        else:
            group.put(key, level, f"{where}: {value or got.get('raw', 'no answer')}{detail}", "OK", fix)
    group.emit()


def check_weights(add: Add, weights: Mapping[str, Any] | None, users: Mapping[str, list[str]], level: str) -> None:
    """The model directories of this host: complete (every shard its index names exists), and walkable.
    users: directory -> the services that load it."""
    if level == "off":
        return
    for path in sorted(weights or {}):
        got = weights[path] or {}
        services = ", ".join(users.get(path, [])) or None
        if not got.get("exists"):
            continue  # the model check reports a missing directory
        if got.get("error"):
            add("weights", "warn", f"{path}: {got['error']}", "a model directory", "check sglang_model_path",
                service=services)
            continue
        index = got.get("index")
        files = len(got.get("files") or {})
        if index and index.get("error"):
            add("weights", level, f"{path}/{index['index']} {index['error']}", "a readable safetensors index",
                "copy the model again (the index is damaged)", service=services)
        elif index and index.get("missing"):
            missing = index["missing"]
            shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
            add("weights", level, f"{path}: {len(missing)} of the {index['shards']} shards {index['index']} names "
                f"are missing: {shown}", "every shard of the index", "the copy is incomplete: copy the missing "
                "shards from a complete copy (and compare sizes: rsync -c)", service=services)
        else:
            shards = f", {index['shards']} shards as indexed" if index else ""
            add("weights", OK, f"{path}: {files} files{shards}", "complete", service=services)


def check_pings(add: Add, results: Iterable[Mapping[str, Any]], users: Mapping[int, list[str]], level: str) -> None:
    """The pings of the controller's ping plan from this host (module_utils/npu/_fabric.py run_pings): any loss, or no
    answer from the tool, names this host's device and the peer's."""
    if level == "off":
        return
    group = Grouped(add, "npu_ping", users)
    for ping in results:
        result = ping.get("result")
        peer = f"the same device of {ping.get('peer')} ({ping.get('why')})"
        if result is None:
            group.put(ping["device"], level, f"to {peer}: no ping summary ({str(ping.get('raw', ''))[:120]})",
                      "0.00% packet loss", "run the ping by hand: hccn_tool -i N -ping -g address <peer device IP>")
        elif result["loss_pct"] > 0 or result["received"] < result["transmitted"]:
            group.put(ping["device"], level,
                      f"to {peer}: {result['transmitted']} packets transmitted, {result['received']} received, "
                      f"{result['loss_pct']:.2f}% packet loss", "0.00% packet loss",
                      f"the NPUs cannot reach each other: check both ends' IP and netmask (hccn_tool -i N -ip -g), "
                      f"the switch ports and VLAN between this host and {ping.get('peer')}, then rerun")
        else:
            group.put(ping["device"], OK, f"to {peer}: 0.00% packet loss", "0.00% packet loss")
    group.emit()
