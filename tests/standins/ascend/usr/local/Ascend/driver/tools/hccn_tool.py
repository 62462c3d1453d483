"""Test stand-in of hccn_tool (ascend.sglang tests), run by ./hccn_tool, which answers the common queries itself
from the state this program flattens (flatten()): the NPU RoCE NIC queries a preflight makes, printed as the
real tool prints them (tests/fixtures/hccn_tool/README.md gives the sources: published output and the tool's
published source for the messages, streams and exit codes).  Standard library only.

State in $ASCEND_STANDIN_DIR (default /etc/ascend-standin):
  shape        "a2" (devices 0..7) or "a3" (0..15), as for the stand-in npu-smi; default a3
  hccn.json    {"devices": {"0": {"ip": "10.90.0.1", "netmask": "255.255.0.0", "link": "UP",
                                  "net_health": "Success", "tls": 0}, ...},
                "busy": {"0": 2}}
               A device missing from "devices" or with "ip": null has no IP; a missing key takes the unfavourable
               value (link DOWN, net health Init, tls 1).  Optional per device: "tls_preconfigured" (default 1),
               "tls_alarm_days" (default 60).  "busy": how many more calls on that device answer that the tool
               is busy, decremented under a file lock (the lock files hccn.lock and hccn-dev<N>.lock are made
               in the directory: it must be writable, or hold them already).
  fabric.json  {"10.90.0.17": "sgm-decode-0", ...}: device IP -> network address (name or IP) of the host that
               owns it.  A ping sends real ICMP echoes there; an IP missing here never answers.

Supported: hccn_tool -i N -link -g | -net_health -g | -ip -g | -tls -g | -ping -g address X
Like the real tool, a second query on a device while one runs there answers that the tool is busy.
"""

from __future__ import annotations

import errno
# ipaddress, secrets and tempfile are imported where used: every query starts a process, and the preflight
# makes dozens per host.
import fcntl
import json
import os
import socket
import struct
import sys
import time

STATE_DIR = os.environ.get("ASCEND_STANDIN_DIR") or "/etc/ascend-standin"
SUPPORTED = ("hccn_tool stand-in supports only: hccn_tool -i N -link -g | -net_health -g | -ip -g | -tls -g"
             " | -ping -g address X")
# Strings of the net health table of the real tool; it prints nothing else.
NET_HEALTH = ("Success", "Socket fail", "Receive timeout", "Unreachable", "Time exceeded", "Fault", "Init",
              "Thread error", "Detect ip set", "Unknown")
# The real tool exits with its error code truncated to a byte: UDA_MAJOR_CMD_DEV_ID_ERR 0x1004,
# UDA_PARAM_IP_INVALID_ERR 0x2006, UDA_TOOL_SYS_BUSY_ERR 0x300B, UDA_DSMI_EXE_ERR 0x4001,
# UDA_DSMI_IPCONF_NOT_PRESET_ERR 0x400D.
RC_DEVICE_ID, RC_BAD_IP, RC_BUSY, RC_EXE, RC_NO_IP = 0x04, 0x06, 0x0B, 0x01, 0x0D
RC_STANDIN = 2  # the test environment, not the fabric, is broken
PACKETS = 3
PACKET_TIMEOUT = 1.0
BUSY = "hccn_tool is busy, please try again."


class StandinError(Exception):
    """A broken test setup (unreadable state, no ICMP socket): exit 2, never a fabric verdict."""


def out(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def err(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def read_json(name: str) -> dict:
    path = os.path.join(STATE_DIR, name)
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise StandinError(f"hccn_tool stand-in: cannot read {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise StandinError(f"hccn_tool stand-in: {path} is not a JSON object")
    return data


def device_count() -> int:
    try:
        with open(os.path.join(STATE_DIR, "shape"), encoding="utf-8") as handle:
            shape = handle.read().strip().lower()
    except OSError:
        shape = "a3"
    return 8 if shape == "a2" else 16


def open_lock(name: str):
    """A lock file of the state directory; read-only when it exists but the caller may not write there."""
    path = os.path.join(STATE_DIR, name)
    try:
        return open(path, "a", encoding="utf-8")
    except PermissionError:
        try:
            return open(path, encoding="utf-8")
        except OSError as exc:
            raise StandinError(f"hccn_tool stand-in: cannot open the lock {path}: {exc}") from exc
    except OSError as exc:
        raise StandinError(f"hccn_tool stand-in: cannot open the lock {path}: {exc}") from exc


def take_busy(device: int) -> bool:
    """True when this call is one of the device's remaining busy answers (the count goes down by one)."""
    path = os.path.join(STATE_DIR, "hccn.json")
    with open_lock("hccn.lock") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        state = read_json("hccn.json")
        busy = state.get("busy") or {}
        left = busy.get(str(device), 0) if isinstance(busy, dict) else None
        if isinstance(left, bool) or not isinstance(left, int):
            raise StandinError(f"hccn_tool stand-in: {path}: \"busy\" must map device ids to whole numbers")
        if left <= 0:
            return False
        busy[str(device)] = left - 1
        state["busy"] = busy
        # Atomic replace: a reader never sees a half-written file.
        import tempfile  # pylint: disable=import-outside-toplevel
        fd, tmp = tempfile.mkstemp(dir=STATE_DIR, prefix=".hccn.", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(state, handle, indent=1, sort_keys=True)
            os.chmod(tmp, os.stat(path).st_mode & 0o777)  # mkstemp makes 0600: keep what the test wrote
            os.replace(tmp, path)
        except OSError as exc:
            os.unlink(tmp)
            raise StandinError(f"hccn_tool stand-in: cannot write {path}: {exc}") from exc
        return True


def hold_device(device: int):
    """The device's query lock, or None when another query holds it (the real tool then answers busy)."""
    handle = open_lock(f"hccn-dev{device}.lock")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        handle.close()
        if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES):
            return None
        raise StandinError(f"hccn_tool stand-in: cannot lock device {device}: {exc}") from exc
    return handle


def device_state(device: int) -> dict:
    devices = read_json("hccn.json").get("devices") or {}
    state = devices.get(str(device))
    return state if isinstance(state, dict) else {}


def has_ip(state: dict) -> bool:
    return bool(state.get("ip"))


def query_link(device: int, state: dict) -> int:
    link = state.get("link", "DOWN")
    if link not in ("UP", "DOWN"):
        raise StandinError(f"hccn_tool stand-in: device {device} link must be UP or DOWN, not {link!r}")
    out(f"link status: {link}")
    return 0


def query_net_health(device: int, state: dict) -> int:
    health = state.get("net_health", "Init")
    if health not in NET_HEALTH:
        raise StandinError(f"hccn_tool stand-in: device {device} net_health must be one of {NET_HEALTH}")
    out(f"net health status: {health}")
    return 0


def query_ip(device: int, state: dict) -> int:
    if not has_ip(state):
        err("Get ipconf failed, because no ip was preset there!")
        return RC_NO_IP
    if not state.get("netmask"):
        raise StandinError(f"hccn_tool stand-in: device {device} has an ip but no netmask")
    out(f"ipaddr:{state['ip']}")
    out(f"netmask:{state['netmask']}")
    return 0


def number(device: int, state: dict, key: str, default: int) -> int:
    value = state.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise StandinError(f"hccn_tool stand-in: device {device} {key} must be a whole number, not {value!r}")
    return value


def query_tls(device: int, state: dict) -> int:
    switch = number(device, state, "tls", 1)
    preset = number(device, state, "tls_preconfigured", 1)
    alarm = number(device, state, "tls_alarm_days", 60)
    out(f"dev_id:{device}, tls switch[{switch}](0:disable, 1:enable), tls preconfigured[{preset}]"
        f"(0:non-preset, 1:preset), tls alarm time threshold[{alarm}]days")
    return 0


def checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    total = (total >> 16) + (total & 0xFFFF)
    total += total >> 16
    return ~total & 0xFFFF


def open_icmp() -> tuple[socket.socket, bool]:
    """(socket, raw): an unprivileged ICMP datagram socket where ping_group_range allows it, else a raw one."""
    reasons = []
    for kind, name in ((socket.SOCK_DGRAM, "SOCK_DGRAM"), (socket.SOCK_RAW, "SOCK_RAW")):
        try:
            return socket.socket(socket.AF_INET, kind, socket.IPPROTO_ICMP), kind == socket.SOCK_RAW
        except OSError as exc:
            reasons.append(f"{name}: {exc}")
    raise StandinError("hccn_tool stand-in: cannot open an ICMP socket (" + "; ".join(reasons) + ")")


def resolve(host: str) -> str | None:
    try:
        infos = socket.getaddrinfo(host, None, socket.AF_INET, socket.SOCK_RAW)
    except (OSError, UnicodeError):
        return None  # a host that does not resolve is unreachable
    return infos[0][4][0] if infos else None


def echo(sock: socket.socket, raw: bool, address: str, seq: int, token: bytes) -> float | None:
    """Round trip in ms of one ICMP echo, None after PACKET_TIMEOUT without the matching reply."""
    ident = os.getpid() & 0xFFFF  # a datagram socket gets its id from the kernel: replies match on seq+token
    header = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
    packet = struct.pack("!BBHHH", 8, 0, checksum(header + token), ident, seq) + token
    start = time.perf_counter()
    deadline = start + PACKET_TIMEOUT
    try:
        sock.sendto(packet, (address, 0))
    except OSError:
        time.sleep(PACKET_TIMEOUT)  # no route: the tool still waits its timeout
        return None
    for _unused in range(10000):  # bounded; every pass either returns or consumes a datagram
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            return None
        sock.settimeout(remaining)
        try:
            data = sock.recv(4096)
        except (socket.timeout, InterruptedError):
            continue
        if raw:
            data = data[(data[0] & 0x0F) * 4:] if data else b""
        if len(data) >= 8 and data[0] == 0 and struct.unpack("!H", data[6:8])[0] == seq and data[8:] == token:
            return (time.perf_counter() - start) * 1000.0
    return None


def query_ping(device: int, state: dict, target: str) -> int:
    try:
        import ipaddress  # pylint: disable=import-outside-toplevel
        ipaddress.IPv4Address(target)
    except ValueError:
        err("The ip address you configured is invalid!")
        return RC_BAD_IP
    host = read_json("fabric.json").get(target)
    lines = [f"device {device} PING {target}"]
    received = 0
    address = resolve(str(host)) if host and state.get("link") == "UP" and has_ip(state) else None
    if address is None:
        # No link, no local address or nobody owns the target: every packet waits out its timeout.
        for seq in range(PACKETS):
            time.sleep(PACKET_TIMEOUT)
            lines.append(f"recv time out seq={seq}")
    else:
        sock, raw = open_icmp()
        import secrets  # pylint: disable=import-outside-toplevel
        token = secrets.token_bytes(16)
        with sock:
            for seq in range(PACKETS):
                rtt = echo(sock, raw, address, seq, token)
                if rtt is None:
                    lines.append(f"recv time out seq={seq}")
                else:
                    received += 1
                    lines.append(f"recv seq={seq},time={rtt:.6f}ms")
    loss = (PACKETS - received) * 100.0 / PACKETS
    lines.append(f"{PACKETS} packets transmitted, {received} received, {loss:.2f}% packet loss")
    out("\n".join(lines))  # the real tool prints the device's answer in one piece, after the last packet
    if received < PACKETS:
        err("Command execute failed!")  # any lost packet makes the real tool fail after printing
        return RC_EXE
    return 0


def flatten() -> int:
    """hccn.flat for ./hccn_tool: a first line naming the hccn.json and shape it was made from (size, mtime, inode:
    what `stat -c '%s %y %i'` prints), then per device "device, link, net health, ip, netmask, tls switch, tls
    preconfigured, tls alarm days, busy answers left", tab-separated ("-" for no ip). Exits 2 (and writes nothing)
    on a state the real queries would refuse: ./hccn_tool then asks main(), which says why."""
    import subprocess  # pylint: disable=import-outside-toplevel
    import tempfile  # pylint: disable=import-outside-toplevel
    sources = [os.path.join(STATE_DIR, name) for name in ("hccn.json", "shape")]
    key = subprocess.run(["stat", "-c", "%s %y %i", *sources], capture_output=True, text=True, check=False)
    state = read_json("hccn.json")
    busy = state.get("busy") or {}
    lines = [" ".join(key.stdout.split()) if key.returncode == 0 else "none"]
    for device in range(device_count()):
        dev = device_state(device)
        link, health = dev.get("link", "DOWN"), dev.get("net_health", "Init")
        left = busy.get(str(device), 0) if isinstance(busy, dict) else None
        if (link not in ("UP", "DOWN") or health not in NET_HEALTH or (has_ip(dev) and not dev.get("netmask"))
                or isinstance(left, bool) or not isinstance(left, int)):
            return RC_STANDIN
        lines.append("\t".join(str(v) for v in (
            device, link, health, dev["ip"] if has_ip(dev) else "-", dev.get("netmask") or "-",
            number(device, dev, "tls", 1), number(device, dev, "tls_preconfigured", 1),
            number(device, dev, "tls_alarm_days", 60), left)))
    fd, tmp = tempfile.mkstemp(dir=STATE_DIR, prefix=".hccn.", suffix=".flat")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    os.replace(tmp, os.path.join(STATE_DIR, "hccn.flat"))
    return 0


def main(argv: list[str]) -> int:
    if argv[1:] == ["--flatten"]:
        return flatten()
    queries = {"-link": query_link, "-net_health": query_net_health, "-ip": query_ip, "-tls": query_tls}
    if len(argv) < 5 or argv[1] != "-i" or argv[4] != "-g" or (argv[3] not in queries and argv[3] != "-ping"):
        err(SUPPORTED)
        return 1
    if argv[3] == "-ping":
        if len(argv) != 7 or argv[5] != "address":
            err(SUPPORTED)
            return 1
    elif len(argv) != 5:
        err(SUPPORTED)
        return 1
    text = argv[2]
    if not (text.isascii() and text.isdigit() and len(text) <= 2 and int(text) < device_count()):
        err("Get invalid device id.")
        return RC_DEVICE_ID
    device = int(text)
    if take_busy(device):
        out(BUSY)
        return RC_BUSY
    held = hold_device(device)
    if held is None:
        out(BUSY)
        return RC_BUSY
    with held:
        state = device_state(device)
        if argv[3] == "-ping":
            return query_ping(device, state, argv[6])
        return queries[argv[3]](device, state)


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except StandinError as exc:
        err(str(exc))
        sys.exit(RC_STANDIN)
