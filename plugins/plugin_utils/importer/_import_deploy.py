# Copyright: ascend.sglang contributors
# Apache License 2.0
"""A documented deployment script -> the roles, host tuning and MemFabric port of a profile.

Pure; no Ansible import.  The inverse of the planner: the script runs (``_import_script``) once per host of
a sentinel inventory shaped like the documented one, and every value the planner computes is turned back
into its placeholder, checked against what the planner would compute for that host:

    --host <own address>                 -> {host}          --port N     -> {port}, roles.<r>.port N
    --disaggregation-bootstrap-port B+i  -> {bootstrap_port}, roles.<r>.bootstrap_port B
    --nnodes / --node-rank               -> {nnodes} / {node_rank}
    --dist-init-addr <rank 0>:P          -> {dist_init_addr}, roles.<r>.dist_init_port P
    *_SOCKET_IFNAME lo (one node) / NIC  -> {socket_ifname}
    ASCEND_MF_STORE_URL tcp://<prefill 0>:P -> {memfabric_store_url}, memfabric_store_port P
    --prefill/--decode/--worker-urls of every instance's rank 0 -> {prefill_upstreams} ...
    model, draft model, expert location paths -> {model_path}, {draft_model_path}, {init_expert_location}

A value that names a host address in any other way, differs between the instances or ranks of a role, or
contradicts the computed one is refused naming the document line.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Mapping

from ansible_collections.ascend.sglang.plugins.plugin_utils.importer._import_doc import ImportRefusal, Lines
from ansible_collections.ascend.sglang.plugins.plugin_utils.importer._import_script import (
    ROUTER_MODULE, SERVER_MODULE, HostRun, Launch, Layout, flag_groups, logical_lines, run_script, script_parts,
    substitute_placeholders, vet_script)
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import ASCEND_TREE, NODE_DEVICES, in_ascend_tree
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._releases import load_release_tables

ROLE_PREFIX = {"prefill": "10.0.1", "decode": "10.0.2", "mixed": "10.0.3"}
ROUTER_ADDRESS = "10.0.9.1"
STRANGER = "10.0.9.9"  # an address the documented host lists do not name
CANDIDATES = 8  # hosts per role tried when finding which hosts a script serves
# Values that would be left over from the document's own placeholders.
_UNFILLED = re.compile(r"your (prefill|decode) ip|\bxxx\b|<[a-z-]+>|\b[PD]_?IP\d*\b|\bIP\d+\b")
_ADDRESS = re.compile(r"\b10\.0\.[1239]\.\d+\b")
# Server flags whose value is the operator's, not the document's: the placeholder the planner fills from the inventory.
INVENTORY_PATH_FLAGS = {"--model-path": "{model_path}", "--speculative-draft-model-path": "{draft_model_path}"}


@dataclasses.dataclass
class Deployment:
    roles: dict[str, dict[str, Any]]
    host_tuning: dict[str, Any]
    memfabric_store_port: int | None
    deploy_mode: str


def _launch_role(launch: Launch) -> str:
    groups = dict(flag_groups(launch.argv))
    mode = (groups.get("--disaggregation-mode") or [""])[0]
    return mode if mode in ("prefill", "decode") else "mixed"


def _int_flag(launch: Launch, flag: str, default: int) -> int:
    values = dict(flag_groups(launch.argv)).get(flag)
    return int(values[0]) if values and re.fullmatch(r"\d+", values[0]) else default


class _Script:
    """The section's script (after the recorded deviations), its parts and their line numbers."""

    def __init__(self, lines: Lines, where: str) -> None:
        self.lines, self.where = lines, where
        vet_script(lines, where)
        self.parts = script_parts(lines.text)

    def line_of(self, *needles: str) -> str:
        """"<document> line N (`the line`)" of the first line holding one of ``needles``."""
        for needle in needles:
            number = self.lines.line_of(needle) if needle else None
            if number:
                return self.line_of_number(number)
        return self.where

    def line_setting(self, key: str, value: str, lay: Layout) -> str:
        """The line that sets ``key`` to what the run recorded (the document may set it on several lines)."""
        for number, text in self.lines.numbered():
            if f"{key}=" in text and f"{key}={value}" in substitute_placeholders(text, lay).replace('"', ""):
                return self.line_of_number(number)
        return self.line_of(f"{key}=", key)

    def line_of_number(self, number: int) -> str:
        text = " ".join(self.lines.numbered()[number - self.lines.first][1].split())
        return f"{self.where} line {number} ({text[:100]}{'...' if len(text) > 100 else ''})"

    def run(self, part: str, lay: Layout, address: str) -> HostRun:
        text = self.parts.get(part, self.parts.get("all", ""))
        return run_script(substitute_placeholders(text, lay), address, f"{self.where} ({part} script)")


def _candidates() -> Layout:
    return Layout(prefill=[f"{ROLE_PREFIX['prefill']}.{i + 1}" for i in range(CANDIDATES)],
                  decode=[f"{ROLE_PREFIX['decode']}.{i + 1}" for i in range(CANDIDATES)],
                  mixed=[f"{ROLE_PREFIX['mixed']}.{i + 1}" for i in range(CANDIDATES)], router=None)


def discover_layout(script: _Script) -> Layout:
    """How many hosts each role has, and their nodes per instance: which sentinel hosts launch a server."""
    cand = _candidates()
    counts: dict[str, int] = {}
    nnodes: dict[str, int] = {}
    router = False
    part_roles = {"prefill": ("prefill",), "decode": ("decode",)} if "all" not in script.parts else \
        {"all": ("prefill", "decode", "mixed")}
    for part, roles in part_roles.items():
        stranger = script.run(part, cand, STRANGER)
        router = router or bool(stranger.of(ROUTER_MODULE))
        servers = stranger.of(SERVER_MODULE)
        if servers:
            # The script serves whatever host runs it (no host list): one instance of --nnodes hosts.
            role = _launch_role(servers[0])
            counts[role] = _int_flag(servers[0], "--nnodes", 1)
            nnodes[role] = counts[role]
            continue
        for role in roles:
            served = []
            for address in getattr(cand, role):
                run = script.run(part, cand, address)
                router = router or bool(run.of(ROUTER_MODULE))
                launched = [launch for launch in run.of(SERVER_MODULE) if _launch_role(launch) == role]
                strays = [_launch_role(launch) for launch in run.of(SERVER_MODULE) if _launch_role(launch) != role]
                if strays and len(part_roles) == 1 and "all" in part_roles and not launched:
                    raise ImportRefusal(f"{script.line_of('--disaggregation-mode ' + strays[0], SERVER_MODULE)}: "
                                        f"a host of the document's {role} host list starts a {strays[0]} server")
                if len(run.of(SERVER_MODULE)) > 1:
                    raise ImportRefusal(
                        f"{script.line_of(SERVER_MODULE)}: {role} host {getattr(cand, role).index(address) + 1} of "
                        f"the document's host lists would start {len(run.of(SERVER_MODULE))} servers (do two host "
                        "lists name the same hosts?); a host runs one server")
                if not launched:
                    # A role's hosts are the first of its host list: the first host not served ends them.
                    break
                served.append(address)
                nnodes[role] = max(nnodes.get(role, 1), _int_flag(launched[0], "--nnodes", 1))
            if served:
                counts[role] = len(served)
    if not counts:
        raise ImportRefusal(f"{script.line_of(SERVER_MODULE)}: the deployment starts no sglang.launch_server")
    lay = Layout(prefill=[], decode=[], mixed=[], router=ROUTER_ADDRESS if router else None)
    for role, count in counts.items():
        n = nnodes.get(role, 1)
        if count % n:
            raise ImportRefusal(f"{script.line_of('--nnodes')}: {count} {role} host(s) are not whole instances of "
                                f"{n} nodes")
        # Documented single-host PD-mixed servers bind (and are benchmarked) on loopback.
        hosts = ["127.0.0.1"] if role == "mixed" and count == 1 else \
            [f"{ROLE_PREFIX[role]}.{i + 1}" for i in range(count)]
        setattr(lay, role, hosts)
        setattr(lay, f"{role}_nnodes", n)
    return lay


_CATALOGS: dict[str, frozenset[str]] = {}


# The benchmark's catalogs are per SGLang release (the package that ships sglang.bench_serving).
BENCH = "bench_serving"


def known_flags(package: str) -> frozenset[str]:
    """Every long option some supported release of ``package`` (sglang, sglang_router, or the benchmark,
    ``bench_serving``) accepts."""
    if package not in _CATALOGS:
        table = load_release_tables()["sglang" if package == BENCH else package]
        read = table.bench_flags if package == BENCH else table.flags
        _CATALOGS[package] = frozenset().union(*(read(release) for release in table.releases))
    return _CATALOGS[package]


def check_flag(flag: str, package: str, where: str) -> None:
    """A flag no supported release knows is refused: an abbreviation argparse happens to accept (--tp) breaks
    as soon as a release adds a flag with the same prefix, and a typo would fail on the host."""
    catalog = known_flags(package)
    if flag in catalog:
        return
    close = sorted(f for f in catalog if f.startswith(flag))
    hint = f" (an abbreviation of {', '.join(close[:3])}?)" if close else ""
    what = "an argument of sglang.bench_serving in any supported sglang" if package == BENCH else \
        f"a flag of any supported {package}"
    raise ImportRefusal(f"{where}: {flag} is not {what} release{hint}; record the intended flag as a deviation")


def scalar(text: str) -> Any:
    """A documented flag value as the profiles write it: integers as numbers, everything else as text."""
    return int(text) if re.fullmatch(r"-?\d+", text) else text


@dataclasses.dataclass
class _Where:
    role: str
    instance: int
    rank: int
    nnodes: int
    address: str
    rank0: str


def _server_args(launch: Launch, at: _Where, lay: Layout, script: _Script, facts: dict[str, Any]) -> dict[str, Any]:
    args: dict[str, Any] = {}
    paths = {v: f"{{{k}}}" for k, v in lay.inventory_values().items()}
    for flag, values in flag_groups(launch.argv):
        where = script.line_of(f"{flag} ", flag)
        check_flag(flag, "sglang", where)
        if flag in args:
            raise ImportRefusal(f"{where}: {flag} is given twice in one command; record which one is meant as a "
                                "deviation")
        if len(values) > 1 and values[0].startswith(("{", "[")) and any(v.endswith(("}", "]")) for v in values[1:]):
            # {"key": true} unquoted: bash splits it into words, and the release's parser reads several values
            # (or rejects them) where the page means one JSON value.
            raise ImportRefusal(f"{where}: {flag} {' '.join(values)} is JSON that bash splits into "
                                f"{len(values)} words; record the quoted value as a deviation")
        value: Any
        if flag == "--host":
            if values != [at.address]:
                raise ImportRefusal(f"{where}: --host {' '.join(values)} on rank {at.rank} of {at.role} instance "
                                    f"{at.instance}: a server binds its own host address")
            value = "{host}"
        elif flag in ("--port", "--disaggregation-bootstrap-port"):
            if len(values) != 1 or not values[0].isdigit():
                raise ImportRefusal(f"{where}: {flag} {' '.join(values)} is not a port number")
            key = "port" if flag == "--port" else "bootstrap_port"
            facts.setdefault(key, {})[(at.instance, at.rank)] = int(values[0])
            value = f"{{{key}}}"
        elif flag == "--nnodes":
            if values != [str(at.nnodes)]:
                raise ImportRefusal(f"{where}: --nnodes {' '.join(values)}, but the document runs this {at.role} "
                                    f"instance on {at.nnodes} host(s)")
            value = "{nnodes}"
        elif flag == "--node-rank":
            if values != [str(at.rank)]:
                raise ImportRefusal(f"{where}: --node-rank {' '.join(values)} on rank {at.rank} of the {at.role} "
                                    "instance")
            value = "{node_rank}"
        elif flag == "--dist-init-addr":
            match = re.fullmatch(r"(.+):(\d+)", values[0]) if len(values) == 1 else None
            if not match or match.group(1) != at.rank0:
                raise ImportRefusal(f"{where}: --dist-init-addr {' '.join(values)} is not the instance's rank-0 "
                                    "host and a port (a lab address or a placeholder the importer cannot resolve)")
            facts.setdefault("dist_init_port", {})[(at.instance, at.rank)] = int(match.group(2))
            value = "{dist_init_addr}"
        elif flag in INVENTORY_PATH_FLAGS:
            # The weights are the operator's (sglang_model_path, sglang_draft_model_path), wherever the document
            # keeps its own: a path of the author's machine, /path/to/draft-model-weights, a hub id.
            if len(values) != 1:
                raise ImportRefusal(f"{where}: {flag} {' '.join(values)} is not one path")
            value = INVENTORY_PATH_FLAGS[flag]
        elif not values:
            value = True
        else:
            mapped = [paths.get(v, v) for v in values]
            for v in mapped:
                if _ADDRESS.search(v) or _UNFILLED.search(v):
                    raise ImportRefusal(f"{where}: {flag} {' '.join(values)} names a host or a placeholder the "
                                        "planner cannot compute")
            value = scalar(mapped[0]) if len(mapped) == 1 else [scalar(v) for v in mapped]
        args[flag] = value
    return args


def _server_env(launch: Launch, at: _Where, lay: Layout, script: _Script, store: str | None,
                facts: dict[str, Any]) -> dict[str, str]:
    env: dict[str, str] = {}
    for key, value in sorted(launch.env.items()):
        where = script.line_setting(key, value, lay)
        if key.endswith("SOCKET_IFNAME"):
            expected = "lo" if at.nnodes == 1 else lay.nic
            # The current pages ask for the host NIC (<network-interface>) on one-node instances too: the planner
            # fills {socket_ifname} with the host's sglang_nic where the inventory gives one, else lo, as the
            # January documents' one-node scripts did. A concrete other value is still refused.
            if value != expected and not (at.nnodes == 1 and value == lay.nic):
                shown = "the document's NIC placeholder" if value == lay.nic else value
                raise ImportRefusal(
                    f"{where}: {key} is {shown} on a {at.nnodes}-node {at.role} instance: the planner binds HCCL/GLOO "
                    f"to the host NIC (sglang_nic{', else lo' if at.nnodes == 1 else ''}); record a deviation if "
                    "the document means it")
            env[key] = "{socket_ifname}"
            continue
        if key == "ASCEND_MF_STORE_URL":
            match = re.fullmatch(r"tcp://(.+):(\d+)", value)
            if not match or match.group(1) != store:
                raise ImportRefusal(f"{where}: {key}={value}: the MemFabric store is served by the first prefill "
                                    "instance's rank 0")
            facts.setdefault("memfabric_store_port", set()).add(int(match.group(2)))
            env[key] = "{memfabric_store_url}"
            continue
        if _ADDRESS.search(value) or _UNFILLED.search(value):
            raise ImportRefusal(f"{where}: {key}={value} names a host or a placeholder the planner cannot compute")
        # A path the inventory supplies, as an item of a path list (PYTHONPATH=$DRAFT_MODEL_PATH:$PYTHONPATH: the
        # draft model's own modelling code), is its placeholder, as on the command line.
        paths = {v: f"{{{k}}}" for k, v in lay.inventory_values().items()}
        env[key] = ":".join(paths.get(item, item) for item in value.split(":"))
    return env


def _cann(launch: Launch, script: _Script) -> dict[str, list[str]]:
    # A document is untrusted input: what it sources reaches every server host's cann_env.sh, which root sources
    # at each start. Only the CANN/Ascend install tree's scripts and directories are taken.
    for path in (*launch.sources, *launch.path_prepend, *launch.ld_library_path_prepend):
        if not in_ascend_tree(path):
            line = script.line_of(f"source {path}", path, path.rsplit("/", 1)[-1])
            raise ImportRefusal(f"{line}: {path} is not under the CANN/Ascend install tree ({ASCEND_TREE}/): a "
                                "profile sources or prepends nothing else on the servers' hosts")
    unset = list(dict.fromkeys(launch.unset))
    out = {"unset": unset, "sources": list(launch.sources), "path_prepend": list(launch.path_prepend),
           "ld_library_path_prepend": list(launch.ld_library_path_prepend)}
    return {k: v for k, v in out.items() if v}


def _one(values: Mapping[Any, Any], what: str, where: str) -> Any:
    distinct = list(dict.fromkeys(values.values()))
    if len(distinct) != 1:
        raise ImportRefusal(f"{where}: {what} differs between the instances or ranks of the role ({distinct})")
    return distinct[0]


def import_deployment(lines: Lines, where: str, hardware: str) -> Deployment:
    """Roles, host tuning and MemFabric port of one (deviation-fixed) deployment script."""
    script = _Script(lines, where)
    lay = discover_layout(script)
    runs: dict[str, HostRun] = {}
    for role in ("prefill", "decode", "mixed"):
        part = role if role in script.parts else "all"
        for address in getattr(lay, role):
            runs[address] = script.run(part, lay, address)
    store = lay.rank0("prefill")[0] if lay.prefill else None
    roles: dict[str, dict[str, Any]] = {}
    tuning: dict[str, Any] = {}
    store_ports: set[int] = set()
    for role in ("prefill", "decode", "mixed"):
        hosts = getattr(lay, role)
        if not hosts:
            continue
        n = getattr(lay, f"{role}_nnodes")
        facts: dict[str, Any] = {}
        seen, tuning = _role_launches(script, lay, runs, role, store, facts, tuning)
        _same_on_every_host(script, role, hosts, seen)
        roles[role] = _role_spec(script, role, n, len(hosts), facts, seen[0], hardware)
        store_ports |= facts.get("memfabric_store_port", set())
    if len(store_ports) > 1:
        raise ImportRefusal(f"{script.line_of('ASCEND_MF_STORE_URL')}: the roles name different MemFabric store "
                            f"ports {sorted(store_ports)}")
    if lay.router:
        roles["router"] = _router(lay, runs, roles, script)
    mode = "pd_separation" if "prefill" in roles or "decode" in roles else "pd_mixed"
    if mode == "pd_separation" and not ("prefill" in roles and "decode" in roles):
        raise ImportRefusal(f"{script.line_of('--disaggregation-mode')}: PD separation needs prefill and decode "
                            "servers; the document starts only one of them")
    return Deployment(roles=roles, host_tuning=tuning, memfabric_store_port=next(iter(store_ports), None),
                      deploy_mode=mode)


def _role_launches(script: _Script, lay: Layout, runs: dict[str, HostRun], role: str, store: str | None,
                   facts: dict[str, Any], tuning: dict[str, Any]) -> "tuple[list[Any], dict[str, Any]]":
    """The flags, environment and CANN lines of the role's server on each of its hosts (collecting ``facts``), and
    the host tuning, which every host must share."""
    hosts = getattr(lay, role)
    n = getattr(lay, f"{role}_nnodes")
    seen: list[tuple[dict[str, Any], dict[str, str], dict[str, list[str]]]] = []
    for index, address in enumerate(hosts):
        instance, rank = divmod(index, n)
        run = runs[address]
        launches = [launch for launch in run.of(SERVER_MODULE) if _launch_role(launch) == role]
        if len(launches) != 1:
            raise ImportRefusal(f"{script.line_of(SERVER_MODULE)}: {role} host {address} starts "
                                f"{len(launches)} {role} servers")
        at = _Where(role, instance, rank, n, address, hosts[instance * n])
        args = _server_args(launches[0], at, lay, script, facts)
        env = _server_env(launches[0], at, lay, script, store, facts)
        seen.append((args, env, _cann(launches[0], script)))
        host_tuning = _host_tuning(run)
        if tuning and host_tuning != tuning:
            raise ImportRefusal(f"{script.line_of('sysctl', 'scaling_governor')}: host tuning differs between "
                                "hosts")
        tuning = host_tuning
    return seen, tuning


def _same_on_every_host(script: _Script, role: str, hosts: list[str], seen: list[Any]) -> None:
    """Refuses a role whose servers' flags, environment or CANN lines differ between its hosts."""
    first = seen[0]
    for index, other in enumerate(seen[1:], 1):
        for name, mine, theirs in (("flags", first[0], other[0]), ("environment", first[1], other[1]),
                                   ("CANN lines", first[2], other[2])):
            if list(mine.items()) != list(theirs.items()):
                diff = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
                raise ImportRefusal(f"{script.line_of(*(diff[:1] or [SERVER_MODULE]))}: the {role} servers' "
                                    f"{name} differ between hosts {hosts[0]} and {hosts[index]} ({diff})")


def _role_spec(script: _Script, role: str, n: int, host_count: int, facts: dict[str, Any], first: Any,
               hardware: str) -> dict[str, Any]:
    """One role of the profile from its first host's server and the facts every host gave."""
    args, env, cann = first
    spec: dict[str, Any] = {"nnodes": n, "documented_instances": host_count // n}
    if "port" not in facts:
        raise ImportRefusal(f"{script.line_of(SERVER_MODULE)}: the {role} server has no --port")
    spec["port"] = _one(facts["port"], "--port", script.line_of("--port"))
    if "bootstrap_port" in facts:
        base = facts["bootstrap_port"][(0, 0)]
        for (instance, _rank), port in facts["bootstrap_port"].items():
            if port != base + instance:
                raise ImportRefusal(f"{script.line_of('--disaggregation-bootstrap-port')}: instance {instance} "
                                    f"uses bootstrap port {port}; the planner gives instance i port {base}+i")
        spec["bootstrap_port"] = base
    if "dist_init_port" in facts:
        spec["dist_init_port"] = _one(facts["dist_init_port"], "--dist-init-addr port",
                                      script.line_of("--dist-init-addr"))
    tp, pp = args.get("--tp-size"), args.get("--pp-size", 1)
    if isinstance(tp, int) and isinstance(pp, int) and tp * pp // n < NODE_DEVICES.get(hardware, 0):
        spec["devices_per_node"] = tp * pp // n  # pipeline stages multiply an instance's devices
    if isinstance(args.get("--base-gpu-id"), int) and args["--base-gpu-id"]:
        spec["base_gpu_id"] = args["--base-gpu-id"]
    spec["cann"] = cann
    spec["env"] = dict(sorted(env.items()))
    spec["args"] = args
    return spec


def _host_tuning(run: HostRun) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if run.governor:
        out["cpu_governor"] = run.governor
    if run.sysctl:
        out["sysctl"] = dict(run.sysctl)
    return out


def _router(lay: Layout, runs: dict[str, HostRun], roles: dict[str, dict[str, Any]],
            script: _Script) -> dict[str, Any]:
    part = "decode" if "decode" in script.parts else "all"
    run = script.run(part, lay, lay.router or ROUTER_ADDRESS)
    launches = run.of(ROUTER_MODULE)
    where = script.line_of(ROUTER_MODULE)
    if len(launches) != 1:
        raise ImportRefusal(f"{where}: the router host starts {len(launches)} routers")
    launch = launches[0]
    expected = {
        "--prefill": [[f"http://{a}:{roles['prefill']['port']}", str(roles["prefill"].get("bootstrap_port", 0) + i)]
                      for i, a in enumerate(lay.rank0("prefill"))] if "prefill" in roles else [],
        "--decode": [[f"http://{a}:{roles['decode']['port']}"] for a in lay.rank0("decode")] if "decode" in roles
        else [],
        "--worker-urls": [[f"http://{a}:{roles['mixed']['port']}" for a in lay.rank0("mixed")]] if "mixed" in roles
        else [],
    }
    args, seen, port = _router_args(launch, script)
    _check_upstreams(script, seen, expected, where)
    if port is None:
        raise ImportRefusal(f"{where}: the router has no --port")
    # The router gets the variables the script exports for it alone: after the last server launch.
    env = {k: launch.env[k] for k in _exported_after_servers(script) if k in launch.env}
    for key, value in env.items():
        if _ADDRESS.search(value) or _UNFILLED.search(value):
            raise ImportRefusal(f"{script.line_of(key + '=')}: {key}={value} names a host the planner cannot compute")
    out: dict[str, Any] = {"port": port}
    if env:
        out["env"] = env
    out["args"] = args
    return out


def _router_args(launch: Launch, script: _Script) -> "tuple[dict[str, Any], dict[str, list[list[str]]], int | None]":
    """The router's flags as the profile keeps them (upstreams and port as placeholders), the upstreams given, and
    the port."""
    placeholder = {"--prefill": "{prefill_upstreams}", "--decode": "{decode_upstreams}",
                   "--worker-urls": "{worker_urls}"}
    args: dict[str, Any] = {}
    seen: dict[str, list[list[str]]] = {}
    port = None
    last = None
    for flag, values in flag_groups(launch.argv):
        line = script.line_of(f"{flag} ", flag)
        check_flag(flag, "sglang_router", line)
        if flag in placeholder:
            if flag in seen and last != flag:
                raise ImportRefusal(f"{line}: the {flag} upstreams are not given together")
            seen.setdefault(flag, []).append(values)
            args[flag] = placeholder[flag]
        elif flag in args:
            raise ImportRefusal(f"{line}: {flag} is given twice to the router")
        elif flag == "--port":
            port = int(values[0]) if len(values) == 1 and values[0].isdigit() else None
            if port is None:
                raise ImportRefusal(f"{line}: router --port {' '.join(values)} is not a port number")
            args[flag] = "{port}"
        elif not values:
            args[flag] = True
        else:
            for v in values:
                if _ADDRESS.search(v) or _UNFILLED.search(v):
                    raise ImportRefusal(f"{line}: router {flag} {' '.join(values)} names a host the planner cannot "
                                        "compute")
            args[flag] = scalar(values[0]) if len(values) == 1 else [scalar(v) for v in values]
        last = flag
    return args, seen, port


def _check_upstreams(script: _Script, seen: dict[str, list[list[str]]], expected: dict[str, list[list[str]]],
                     where: str) -> None:
    """Refuses router upstreams other than the documented instances' rank 0, in order."""
    for flag, groups in seen.items():
        if groups != expected[flag]:
            first = next((i for i, group in enumerate(groups)
                          if i >= len(expected[flag]) or group != expected[flag][i]), len(groups))
            numbers = [n for n, text in script.lines.numbered() if f"{flag} http" in text]
            where_ = script.line_of_number(numbers[min(first, len(numbers) - 1)]) if numbers else where
            raise ImportRefusal(f"{where_}: the router's {flag} upstreams "
                                f"{[' '.join(g) for g in groups]} are not the documented instances' rank 0 "
                                f"({[' '.join(g) for g in expected[flag]]})")


def _exported_after_servers(script: _Script) -> list[str]:
    names: list[str] = []
    for _number, text in logical_lines(script.lines):
        text = text.strip()
        if SERVER_MODULE in text:
            names = []
        elif ROUTER_MODULE in text:
            break
        else:
            match = re.match(r"^export ([A-Za-z_][A-Za-z0-9_]*)=", text)
            if match:
                names.append(match.group(1))
    return sorted(dict.fromkeys(names))
