# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Read-only observation of one host for the preflight / doctor checks and NPU facts.

The standard library and ansible.module_utils only; runs inside the modules on the managed host.  It
looks and never changes anything: ``npu-smi info``, install-info files, ``stat`` of paths, the
interfaces' addresses, listening TCP sockets (``/proc/net/tcp*``), systemd unit states, a
route lookup and one TCP connect per rank-0 endpoint, the router interpreter's ``importlib.metadata``
version of sglang-router, one run of the server interpreter reporting its stack (``_server_stack.PROBE_SCRIPT``),
and (doctor only) the rank-0 ``/health`` URLs.
"""

from __future__ import annotations

import concurrent.futures
import errno
import glob
import os
import re
import shlex
import shutil
import socket
import stat
import subprocess
from typing import Any, Mapping

from ansible_collections.ascend.sglang.plugins.module_utils.npu import _fabric
from ansible_collections.ascend.sglang.plugins.module_utils.checks import _weights
from ansible_collections.ascend.sglang.plugins.module_utils.http._http import http_get
from ansible_collections.ascend.sglang.plugins.module_utils.npu._npu_smi import (
    driver_version, parse_install_info, parse_npu_smi_info, toolkit_version,
)
from ansible_collections.ascend.sglang.plugins.module_utils.npu._npu_topo import format_cpu_list, parse_topo
from ansible_collections.ascend.sglang.plugins.module_utils.checks._server_stack import MODULES, PROBE_SCRIPT, parse_probe
from ansible_collections.ascend.sglang.plugins.module_utils.files._started import check_units
from ansible_collections.ascend.sglang.plugins.module_utils.files._sysctl import read_values

# The NPU tools' and install files' paths are the caller's: the plan's settings (sglang_npu_smi,
# sglang_npu_driver_info, sglang_npu_toolkit_info), whose defaults the settings table holds, or npu_facts' options.
SET_ENV_SCRIPTS = (
    "/usr/local/Ascend/ascend-toolkit/set_env.sh",
    "/usr/local/Ascend/cann/set_env.sh",
    "/usr/local/Ascend/nnal/atb/set_env.sh",
)
# Searched after $PATH (so a stand-in early in PATH wins): npu-smi lives in /usr/local/sbin.
EXTRA_BIN_DIRS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/sbin")
VERSION_SNIPPET = "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))"


def run(argv: list[str], timeout: float = 30, env: Mapping[str, str] | None = None) -> tuple[int, str, str]:
    try:
        # Not AnsibleModule.run_command: these helpers take no module object, and every call needs a timeout.
        proc = subprocess.run(  # pylint: disable=ansible-bad-function
            argv, capture_output=True, text=True, timeout=timeout, env=dict(env) if env else None, check=False)
        return proc.returncode, proc.stdout, proc.stderr
    except FileNotFoundError as exc:
        return 127, "", str(exc)
    except subprocess.TimeoutExpired:
        return 124, "", f"timed out after {timeout:g} s"
    except OSError as exc:
        return 126, "", str(exc)


def which(command: str) -> str | None:
    if os.sep in command:
        return command if os.access(command, os.X_OK) else None
    path = os.environ.get("PATH", "") + os.pathsep + os.pathsep.join(EXTRA_BIN_DIRS)
    return shutil.which(command, path=path)


def observe_npu(npu_smi: str, timeout: float = 30) -> dict[str, Any]:
    path = which(npu_smi)
    if not path:
        return {"available": False, "command": npu_smi, "error": f"{npu_smi} not found in PATH", "info": None}
    rc, out, err = run([path, "info"], timeout=timeout)
    info = parse_npu_smi_info(out)
    error = None
    if rc != 0 or not info.chips:
        text = (err or out).strip().splitlines()
        error = f"`{npu_smi} info` exit {rc}: " + (text[-1] if text else "no device listed")
    return {"available": rc == 0 and bool(info.chips), "command": path, "error": error, "info": info.as_dict()}


def observe_topo(npu_smi: str, timeout: float = 30) -> dict[str, Any]:
    """``npu-smi info -t topo``: NPU index -> the CPU list near it (none when the output has no CPU affinity)."""
    path = which(npu_smi)
    if not path:
        return {"npus": {}, "error": f"{npu_smi} not found in PATH"}
    rc, out, err = run([path, "info", "-t", "topo"], timeout=timeout)
    npus = parse_topo(out) if rc == 0 else {}
    error = None
    if not npus:
        text = (err or out).strip().splitlines()
        error = (f"`{npu_smi} info -t topo` exit {rc}: " + (text[-1] if text else "no output")) if rc != 0 else \
            f"`{npu_smi} info -t topo` shows no CPU Affinity"
    return {"npus": {str(n): format_cpu_list(cpus) for n, cpus in sorted(npus.items())}, "error": error}


def observe_governors(sysfs_dir: str) -> dict[str, str]:
    """Each CPU's frequency governor, scaling_governor path -> value (what ascend.sglang.host_tuning would read
    next; a CPU without cpufreq, a VM's, has none). Read here, in the preflight's call, it costs the deployment
    no round trip of its own."""
    out: dict[str, str] = {}
    for path in sorted(glob.glob(os.path.join(sysfs_dir, "cpu[0-9]*", "cpufreq", "scaling_governor"))):
        try:
            with open(path, encoding="ascii", errors="replace") as handle:
                out[path] = handle.read().strip()
        except OSError:
            continue
    return out


def observe_sysctl(look: Mapping[str, Any]) -> dict[str, Any]:
    """The live values of the host's kernel settings and its persisted file's text (None: absent), what
    ascend.sglang.host_tuning would read next. Read here, in the preflight's call: a host where they are the plan's
    costs the deployment no call of its own."""
    try:
        with open(str(look["conf"]), encoding="utf-8") as handle:
            conf: str | None = handle.read()
    except (OSError, UnicodeDecodeError):
        conf = None
    return {"live": read_values(str(look["dir"]), [str(name) for name in look.get("names") or []]), "conf": conf}


def observe_online_cpus(path: str = "/sys/devices/system/cpu/online") -> str | None:
    """The host's online CPUs as a CPU list (what a unit may be pinned to)."""
    try:
        with open(path, encoding="ascii") as handle:
            return handle.read().strip() or None
    except OSError:
        return None


def read_info(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return {"path": path, "values": parse_install_info(handle.read()), "error": None}
    except OSError as exc:
        return {"path": path, "values": {}, "error": exc.strerror or str(exc)}


def observe_driver(path: str) -> dict[str, Any]:
    data = read_info(path)
    return {"path": path, "version": driver_version(data["values"]), "error": data["error"]}


def observe_toolkit(patterns: list[str] | tuple[str, ...]) -> dict[str, Any]:
    for pattern in patterns:
        for path in sorted(glob.glob(pattern)):
            data = read_info(path)
            version = toolkit_version(data["values"])
            if version:
                return {"path": path, "version": version, "searched": list(patterns), "error": None}
    return {"path": None, "version": None, "searched": list(patterns), "error": "not found"}


def resolve(name: str) -> list[str]:
    """Addresses a bind name resolves to here (empty when it does not resolve)."""
    try:
        return sorted({info[4][0] for info in socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP)})
    except (OSError, UnicodeError):
        return []


def path_kind(path: str) -> str:
    try:
        if os.path.isdir(path):
            return "dir" if os.access(path, os.R_OK | os.X_OK) else "unreadable"
        if os.path.isfile(path):
            return "file" if os.access(path, os.R_OK) else "unreadable"
        return "other" if os.path.exists(path) else "missing"
    except OSError:
        return "unreadable"


def observe_nics() -> dict[str, list[str]] | None:
    """Interface name -> addresses (``ip -o addr``; falls back to the interface list alone)."""
    ip = which("ip")
    if ip:
        rc, out, _unused = run([ip, "-o", "addr", "show"], timeout=10)
        if rc == 0:
            nics: dict[str, list[str]] = {}
            for line in out.splitlines():
                match = re.match(r"\d+:\s+(\S+?)(?:@\S+)?\s+(inet6?)\s+([^\s/]+)", line)
                if match:
                    nics.setdefault(match.group(1), []).append(match.group(3))
            rc, out, _unused = run([ip, "-o", "link", "show"], timeout=10)
            for line in out.splitlines() if rc == 0 else []:
                match = re.match(r"\d+:\s+([^:@\s]+)", line)
                if match:
                    nics.setdefault(match.group(1), [])
            return nics
    try:
        return {name: [] for _unused, name in socket.if_nameindex()}
    except OSError:
        return None


def _hex_addr(text: str) -> str:
    raw = bytes.fromhex(text)
    if len(raw) == 4:
        return socket.inet_ntop(socket.AF_INET, raw[::-1])
    words = b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))
    return socket.inet_ntop(socket.AF_INET6, words)


def observe_listeners(ports: list[int]) -> list[dict[str, Any]] | None:
    """LISTEN sockets on the given ports, with the pids holding them when /proc allows."""
    wanted = {int(p) for p in ports}
    found: list[dict[str, Any]] = []
    readable = False
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii") as handle:
                lines = handle.read().splitlines()[1:]
            readable = True
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            if len(parts) < 10 or parts[3] != "0A":
                continue
            addr, _unused, port_hex = parts[1].partition(":")
            port = int(port_hex, 16)
            if port in wanted:
                found.append({"address": _hex_addr(addr), "port": port, "inode": parts[9], "pids": []})
    if not readable:
        return None
    inodes = {f"socket:[{e['inode']}]": e for e in found}
    if inodes:
        for pid_dir in glob.glob("/proc/[0-9]*"):
            try:
                fds = os.listdir(pid_dir + "/fd")
            except OSError:
                continue
            for fd in fds:
                try:
                    target = os.readlink(f"{pid_dir}/fd/{fd}")
                except OSError:
                    continue
                if target in inodes:
                    pid = int(pid_dir.rsplit("/", 1)[1])
                    if pid not in inodes[target]["pids"]:
                        inodes[target]["pids"].append(pid)
    return found


def unit_of(pid: int, containers: Mapping[str, str] | None = None) -> str | None:
    """The systemd service a process belongs to (from /proc/<pid>/cgroup), if any.  ``containers``: the
    engine's container IDs -> names (container runtime): a process in the container named after a service
    belongs to that service (the engine puts it in a cgroup of the container's, not of the unit's)."""
    try:
        with open(f"/proc/{pid}/cgroup", encoding="utf-8") as handle:
            text = handle.read()
    except OSError:
        return None
    for container_id in re.findall(r"[0-9a-f]{64}", text):
        if container_id in (containers or {}):
            return f"{containers[container_id]}.service"
    units = re.findall(r"/([^/\s]+\.service)", text)
    return units[-1] if units else None


def observe_units(names: list[str]) -> dict[str, dict[str, str]]:
    systemctl = which("systemctl")
    if not systemctl:
        return {}
    units: dict[str, dict[str, str]] = {}
    for name in names:
        rc, out, _unused = run([systemctl, "show", f"{name}.service", "-p", "LoadState", "-p", "ActiveState",
                                "-p", "SubState"], timeout=10)
        if rc != 0:
            continue
        values = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
        units[name] = {"load": values.get("LoadState", ""), "active": values.get("ActiveState", ""),
                       "sub": values.get("SubState", "")}
    return units


def route_source(address: str, port: int) -> dict[str, Any]:
    """Kernel route lookup without sending a packet (UDP connect): the source address used."""
    try:
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        with socket.socket(family, socket.SOCK_DGRAM) as sock:
            sock.connect((address, port))
            return {"source": sock.getsockname()[0], "error": None}
    except OSError as exc:
        return {"source": None, "error": exc.strerror or str(exc)}


def tcp_probe(address: str, port: int, timeout: float) -> dict[str, Any]:
    """open (accepted), refused (RST: host answers, nothing listens), timeout (dropped), unreachable, error."""
    try:
        with socket.create_connection((address, port), timeout=timeout):
            return {"result": "open", "detail": ""}
    except ConnectionRefusedError:
        return {"result": "refused", "detail": ""}
    except socket.timeout:
        return {"result": "timeout", "detail": f"{timeout:g} s"}
    except OSError as exc:
        if exc.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH):
            return {"result": "unreachable", "detail": exc.strerror or str(exc)}
        return {"result": "error", "detail": exc.strerror or str(exc)}


def _launcher_env(spec: Mapping[str, Any]) -> list[str]:
    """bash lines giving the launcher's CANN environment, then checking the interpreter is there."""
    lines = ["set +eu"]
    if spec.get("unset"):
        lines.append("unset -v " + " ".join(shlex.quote(v) for v in spec["unset"]))
    for script in spec.get("sources") or []:
        lines.append(f"[ -r {shlex.quote(script)} ] && . {shlex.quote(script)} >/dev/null 2>&1")
    if spec.get("path_prepend"):
        lines.append("export PATH=" + ":".join(shlex.quote(p) for p in spec["path_prepend"]) + ':"$PATH"')
    if spec.get("ld_library_path_prepend"):
        lines.append("export LD_LIBRARY_PATH=" + ":".join(shlex.quote(p) for p in spec["ld_library_path_prepend"])
                     + '"${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"')
    lines.append(f"command -v {shlex.quote(spec['python'])} >/dev/null || "
                 f"{{ echo 'interpreter {spec['python']} not found in PATH' >&2; exit 127; }}")
    return lines


def runtime_version(spec: Mapping[str, Any], timeout: float) -> dict[str, Any]:
    """The package version the service's interpreter imports, in the launcher's CANN environment."""
    lines = _launcher_env(spec)
    lines.append(f"exec {shlex.quote(spec['python'])} -c {shlex.quote(VERSION_SNIPPET)} {shlex.quote(spec['package'])}")
    rc, out, err = run(["bash", "-c", "\n".join(lines)], timeout=timeout)
    if rc == 0 and out.strip():
        return {"version": out.strip().splitlines()[-1], "error": None}
    text = (err or out).strip().splitlines()
    message = text[-1] if text else f"exit {rc}"
    if "PackageNotFoundError" in (err or ""):
        message = f"{spec['package']} is not installed for {spec['python']}"
    return {"version": None, "error": message}


def runtime_stack(spec: Mapping[str, Any], timeout: float) -> dict[str, Any]:
    """The server interpreter's stack (``_server_stack.PROBE_SCRIPT``) in the launcher's CANN environment, bounded by
    ``timeout``; what it printed before a timeout or a crash is kept."""
    lines = _launcher_env(spec)
    modules = " ".join(shlex.quote(m) for m in spec.get("modules") or MODULES)
    if spec.get("distributions"):
        modules = f"--distributions {modules}"
    lines.append(f"exec {shlex.quote(spec['python'])} -c {shlex.quote(PROBE_SCRIPT)} {modules}")
    try:
        # Not AnsibleModule.run_command: no module object here, and the probe needs a timeout.
        proc = subprocess.run(["bash", "-c", "\n".join(lines)],  # pylint: disable=ansible-bad-function
                              capture_output=True, text=True, timeout=timeout, check=False)
        rc, out, err = proc.returncode, proc.stdout, proc.stderr
    except subprocess.TimeoutExpired as exc:
        partial = exc.stdout or b""
        out = partial.decode("utf-8", "replace") if isinstance(partial, bytes) else partial
        rc, err = 124, f"timed out after {timeout:g} s"
    except OSError as exc:
        rc, out, err = 126, "", str(exc)
    return parse_probe(rc, out, err, str(spec["python"]))


def http_status(url: str, timeout: float) -> dict[str, Any]:
    answer = http_get(url, timeout)
    return {"status": answer.status, "error": answer.error}


def device_kind(path: str) -> str:
    try:
        return "char" if stat.S_ISCHR(os.stat(path).st_mode) else "other"
    except FileNotFoundError:
        return "missing"
    except OSError:
        return "unreadable"


def observe_container(spec: Mapping[str, Any], timeout: float) -> dict[str, Any]:
    """The container engine's version, whether it has the image (else whether the registry has it), and the
    device nodes and host paths the containers get."""
    result: dict[str, Any] = {
        "engine": which(str(spec["engine"])), "version": None, "image": "unknown", "pullable": None, "pull_error": None,
        "devices": {d: device_kind(d) for d in spec.get("devices") or []},
        "mounts": {m: path_kind(m) for m in spec.get("mounts") or []},
    }
    engine = result["engine"]
    if not engine:
        return result
    rc, out, _unused = run([engine, "--version"], timeout=timeout)
    result["version"] = out.strip().splitlines()[0] if rc == 0 and out.strip() else None
    # The running containers (full ID -> name): a planned port or device held from one of this deployment's
    # containers is the deployment's own (unit_of).
    rc, out, _unused = run([engine, "ps", "--no-trunc", "--format", "{{.ID}} {{.Names}}"], timeout=timeout)
    result["containers"] = dict(line.split(None, 1) for line in out.splitlines() if len(line.split(None, 1)) == 2) \
        if rc == 0 else {}
    rc, _unused, _err = run([engine, "image", "inspect", str(spec["image"])], timeout=timeout)
    result["image"] = "present" if rc == 0 else "absent"
    if rc != 0 and not spec.get("from_archive"):
        # Reads the manifest from the registry without pulling the layers.
        rc, _unused, err = run([engine, "manifest", "inspect", str(spec["image"])], timeout=timeout)
        result["pullable"] = rc == 0
        lines = err.strip().splitlines()
        result["pull_error"] = lines[-1][:200] if rc != 0 and lines else None
    return result


def observe_weights(req: Mapping[str, Any] | None, check_mode: bool) -> dict[str, Any] | None:
    """module_utils/checks/_weights.py for each model directory; the full digests' cache is written back unless in check
    mode (a re-run then costs a stat per file)."""
    if not req:
        return None
    full = bool(req.get("full"))
    cache = _weights.load_cache() if full else None
    out = {path: _weights.observe(path, full, cache) for path in req.get("paths") or []}
    if full and cache is not None and not check_mode and any(w["hashed"] for w in out.values()):
        try:
            _weights.save_cache(cache)
        except OSError:
            pass  # no cache: the next run hashes again
    return out


def observe(req: Mapping[str, Any], *, npu_smi: str, driver_info: str, toolkit_info: list[str] | tuple[str, ...],
            probe_timeout: float, runtime_timeout: float, hccn_tool: str, check_mode: bool = False,
            cpu_sysfs_dir: str | None = None) -> dict[str, Any]:
    """Everything ``_preflight.check_host`` reads, for the requirements of one host plan; with cpu_sysfs_dir, also
    every CPU's governor (``governors``, for host tuning).  The tools' paths and the timeouts are the plan's
    settings (the settings table holds their defaults), passed in by the preflight module."""
    observed: dict[str, Any] = {}
    if cpu_sysfs_dir:
        observed["governors"] = observe_governors(cpu_sysfs_dir)
    if req.get("sysctl"):
        observed["sysctl"] = observe_sysctl(req["sysctl"])

    def tool_run(argv: list[str]) -> tuple[int, str, str]:
        return run(argv, timeout=max(runtime_timeout, 10.0))

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        probes = {f"{p['address']}:{p['port']}": pool.submit(tcp_probe, p["address"], int(p["port"]), probe_timeout)
                  for p in req.get("probes") or []}
        runtimes = {r["key"]: pool.submit(runtime_stack if r.get("stack") else runtime_version, r, runtime_timeout)
                    for r in req.get("runtimes") or []}
        health = {h["service"]: pool.submit(http_status, h["url"], probe_timeout) for h in req.get("health") or []}
        # The NPU tools get the same bound as hccn_tool's queries (tool_run): at least 30 s.
        npu = pool.submit(observe_npu, npu_smi, max(runtime_timeout, 30.0)) if req.get("npu") else None
        topo = pool.submit(observe_topo, npu_smi, max(runtime_timeout, 30.0)) if req.get("npu") else None
        fabric_req = req.get("fabric") or {}
        fabric = (pool.submit(_fabric.observe_nics, tool_run, list(fabric_req.get("devices") or []),
                              list(fabric_req.get("queries") or []), hccn_tool)
                  if fabric_req else None)
        chips = (pool.submit(_fabric.observe_health, tool_run, list(req.get("npu_health") or []),
                             str(req.get("hardware") or ""), which(npu_smi) or npu_smi)
                 if req.get("npu_health") else None)  # found where observe_npu finds it (/usr/local/sbin)
        weights = pool.submit(observe_weights, req.get("weights"), check_mode) if req.get("weights") else None
        container = pool.submit(observe_container, req["container"], runtime_timeout) if req.get("container") else None
        # What the host answers at once, read here while the slow probes run in the pool.
        observed.update(_observe_local(req, driver_info, toolkit_info))
        observed["probes"] = {k: f.result() for k, f in probes.items()}
        observed["runtimes"] = {k: f.result() for k, f in runtimes.items()}
        observed["health"] = {k: f.result() for k, f in health.items()}
        observed["npu"] = npu.result() if npu else None
        if topo:
            observed["topo"] = topo.result()
            observed["cpus_online"] = observe_online_cpus()
        if fabric:
            observed["fabric"] = fabric.result()
        if chips:
            observed["npu_health"] = chips.result()
        if weights:
            observed["weights"] = weights.result()
        observed["container"] = container.result() if container else None
    observed["owners"] = _owners(observed)
    return observed


def _observe_local(req: Mapping[str, Any], driver_info: str, toolkit_info: list[str] | tuple[str, ...]
                   ) -> dict[str, Any]:
    """The quick observations of one host (paths, names, NICs, listeners, units, routes, driver, toolkit)."""
    local: dict[str, Any] = {}
    local["paths"] = {path: path_kind(path) for path in req.get("paths") or {}}
    local["resolved"] = {name: resolve(name) for name in req.get("names") or []}
    local["nics"] = observe_nics() if req.get("nics") else {}
    local["listeners"] = observe_listeners(list(req.get("ports") or []))
    local["units"] = observe_units(list(req.get("units") or []))
    local["started"] = check_units(list(req.get("started") or []), run, which("systemctl"))
    local["routes"] = {p["address"]: route_source(p["address"], int(p["port"])) for p in req.get("probes") or []}
    if req.get("npu"):
        local["driver"] = observe_driver(driver_info)
    if req.get("npu") or req.get("toolkit"):
        local["toolkit"] = observe_toolkit(list(toolkit_info))
    return local


def _owners(observed: Mapping[str, Any]) -> dict[str, Any]:
    """The unit (or container) of every process that listens on a planned port or holds an NPU."""
    pids: set[int] = set()
    for entry in observed["listeners"] or []:
        pids.update(entry.get("pids") or [])
    for proc in ((observed.get("npu") or {}).get("info") or {}).get("processes") or []:
        pids.add(int(proc["pid"]))
    containers = (observed.get("container") or {}).get("containers") or {}
    return {str(pid): unit_of(pid, containers) for pid in sorted(pids)}


def observe_npu_facts(npu_smi: str, driver_info: str, toolkit_info: list[str] | tuple[str, ...],
                      set_env_scripts: list[str] | tuple[str, ...] = SET_ENV_SCRIPTS) -> dict[str, Any]:
    """The ``ascend.sglang.npu_facts`` result: devices, versions, set_env scripts present."""
    npu = observe_npu(npu_smi)
    info = npu.get("info") or {}
    return {
        "npu_smi": {"available": npu["available"], "command": npu["command"], "error": npu["error"],
                    "version": info.get("version")},
        "generation": info.get("generation"),
        "chip_name": info.get("chip_name"),
        "device_count": info.get("device_count", 0),
        "npu_count": info.get("npu_count", 0),
        "devices": info.get("chips") or [],
        "processes": info.get("processes") or [],
        "driver": observe_driver(driver_info),
        "toolkit": observe_toolkit(list(toolkit_info)),
        "set_env_scripts": {path: os.path.isfile(path) for path in set_env_scripts},
    }
