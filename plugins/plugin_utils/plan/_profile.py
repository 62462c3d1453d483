# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Profiles: one documented best practice as typed data.

A profile file (``profiles/<id>.yml``) holds the documented launch flags and environment
per role, with ``{placeholders}`` where the documents put host-specific values; the
planner fills them in.  This module only reads and checks the data: no inventory here.
"""

from __future__ import annotations

import dataclasses
import os
import posixpath
import re
from typing import Any, Mapping

from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import Collector

SERVER_ROLES = ("prefill", "decode", "mixed")
ROLES = SERVER_ROLES + ("router",)
# NPU devices one node offers to --tp-size: an A3 node is 8 cards = 16 dies.
NODE_DEVICES = {"A3": 16, "A2": 8}
# NPU devices per card: an A3 card carries two dies; an A2 card is one NPU. Per-card figures count cards.
CARD_DEVICES = {"A3": 2, "A2": 1}
# The KV cache transfer between prefill and decode (MemFabric) per hardware: A2 moves it over the device's RDMA,
# A3 over its default protocol (SGLang's Ascend reference and installation pages). The planner gives the
# prefill and decode servers of a PD deployment these variables unless the profile or an override sets them.
KV_TRANSFER_ENV = {"A2": {"ASCEND_MF_TRANSFER_PROTOCOL": "device_rdma"}, "A3": {}}
# The January 2026 best-practice documents (../shared/seeds): the profiles whose source names no generation.
FIRST_GENERATION = "2026-01"
DEPLOY_MODES = {"pd_separation": ("prefill", "decode"), "pd_mixed": ("mixed",)}

# Values the planner computes; a profile refers to them as "{name}".
COMPUTED = frozenset({
    "host", "port", "bootstrap_port", "nnodes", "node_rank", "dist_init_addr", "socket_ifname",
    "memfabric_store_url", "prefill_upstreams", "decode_upstreams", "worker_urls", "entry_host", "entry_port",
})
# Values that come from inventory variables, by placeholder name: the paths a server reads (the container runtime
# mounts each one, plugin_utils/plan/_container.py).
FROM_INVENTORY = {
    "model_path": "sglang_model_path",
    "draft_model_path": "sglang_draft_model_path",
    "init_expert_location": "sglang_init_expert_location",
}
# Placeholders that expand into repeated flags (one per upstream instance).
EXPANDING = frozenset({"prefill_upstreams", "decode_upstreams", "worker_urls"})
PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
ID_RE = re.compile(r"^[a-z0-9][a-z0-9_]*$")

ArgValue = Any  # str | int | float | bool | list[str | int | float]


@dataclasses.dataclass(frozen=True)
class CannEnv:
    unset: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    path_prepend: tuple[str, ...] = ()
    ld_library_path_prepend: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, list[str]]:
        return {k: list(getattr(self, k)) for k in ("unset", "sources", "path_prepend", "ld_library_path_prepend")}


@dataclasses.dataclass(frozen=True)
class RoleSpec:
    role: str
    nnodes: int
    documented_instances: int
    port: int
    bootstrap_port: int | None
    dist_init_port: int | None
    devices_per_node: int | None
    base_gpu_id: int
    env: dict[str, str]
    args: dict[str, ArgValue]
    cann: CannEnv

    def placeholders(self) -> set[str]:
        """The {names} this role's flags and environment refer to."""
        return {name for value in [*self.env.values(), *self.args.values()]
                for name in PLACEHOLDER.findall(str(value))}

    @property
    def tp_size(self) -> int | None:
        value = self.args.get("--tp-size")
        return int(value) if isinstance(value, (int, str)) and str(value).isdigit() else None

    @property
    def pp_size(self) -> int:
        """--pp-size (pipeline stages; SGLang's default 1); 0 when it is not a number (the plan refuses it)."""
        value = self.args.get("--pp-size", 1)
        return int(value) if isinstance(value, (int, str)) and str(value).isdigit() else 0

    @property
    def instance_devices(self) -> int | None:
        """The NPUs one instance uses: --tp-size x --pp-size, spread evenly over its --nnodes nodes."""
        tp = self.tp_size
        return tp * self.pp_size if tp is not None and self.pp_size else None


@dataclasses.dataclass(frozen=True)
class Profile:
    id: str
    title: str
    model: str
    hardware: str
    cards: int
    deploy_mode: str
    dataset: dict[str, Any]
    # The latency the configuration is held to: its mean TPOT, its mean TTFT (a configuration measured by its first
    # token, output 1 token), or both; 0 where it has none of that kind (a profile has at least one).
    tpot_target_ms: float
    quantization: str
    releases: dict[str, str]
    host_tuning: dict[str, Any]
    roles: dict[str, RoleSpec]
    memfabric_store_port: int | None
    bench_args: dict[str, ArgValue]
    published: dict[str, Any]
    deviations: list[dict[str, Any]]
    source: dict[str, Any]
    ttft_target_ms: float = 0.0
    # A configuration its page no longer documents (the section is gone, or the page changed it: the previous
    # configuration kept as <id>_at_<commit>): still selectable; ``reason`` says why, ``superseded_by`` names the
    # profile that documents it now, where one does.
    retired: dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def server_roles(self) -> tuple[str, ...]:
        return DEPLOY_MODES[self.deploy_mode]

    @property
    def generation(self) -> str:
        """The document generation the profile was imported from: the January best-practice documents, or the
        per-model pages read at a later date (their profiles record it with the repository, path and commit)."""
        return str(self.source.get("generation") or FIRST_GENERATION)

    def cards_used(self, hosts_per_role: dict[str, int] | None = None) -> float:
        """Cards the servers occupy: the documented deployment's, or that of ``hosts_per_role`` (role -> host
        count). The denominator of output tok/s per card: a profile that runs on part of a node (A2 Qwen3-32B
        on 4 of the 8 NPUs) is judged per card it uses, as the documents' summary tables do."""
        node = NODE_DEVICES.get(self.hardware, 0)
        devices = 0
        for role in self.server_roles:
            spec = self.roles[role]
            hosts = (hosts_per_role or {}).get(role, spec.nnodes * spec.documented_instances)
            devices += hosts * (spec.devices_per_node or node)
        return devices / CARD_DEVICES.get(self.hardware, 1)

    def placeholders(self) -> set[str]:
        """Every placeholder a launch of this profile refers to."""
        return set().union(*(spec.placeholders() for spec in self.roles.values()))


def profiles_dir() -> str:
    """The collection's profiles/ directory (plugins/plugin_utils/plan/../../../profiles)."""
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, "..", "..", "..", "profiles"))


def available_profiles(directory: str | None = None) -> list[str]:
    directory = directory or profiles_dir()
    return sorted(f[:-4] for f in os.listdir(directory) if f.endswith(".yml") and not f.startswith("_"))


def _read_yaml(path: str) -> dict[str, Any]:
    import yaml  # PyYAML ships with ansible-core; imported lazily to keep this module light

    with open(path, encoding="utf-8") as handle:
        data = yaml.safe_load(handle)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a profile must be a mapping")
    return data


def load_profile(profile_id: str, directory: str | None = None) -> Profile:
    """Read ``profiles/<id>.yml`` (following ``deployment_from``) and check it.  ``directory``: the operator's own
    profiles (sglang_profiles_dir, e.g. written by playbooks/import_profiles.yml), searched before the collection's."""
    if directory and isinstance(profile_id, str) and not os.path.exists(os.path.join(directory, f"{profile_id}.yml")):
        directory = None  # not one of the operator's: the collection's own
    directory = directory or profiles_dir()
    errors = Collector()
    if not isinstance(profile_id, str) or not ID_RE.match(profile_id):
        errors.add(f"'{profile_id}' is not a profile id (lowercase letters, digits, underscores)",
                   variable="sglang_profile")
        errors.raise_if_any()
    path = os.path.join(directory, f"{profile_id}.yml")
    if not os.path.exists(path):
        close = [p for p in available_profiles(directory) if p.split("_")[:2] == profile_id.split("_")[:2]]
        hint = f"; similar: {', '.join(close[:6])}" if close else ""
        errors.add(f"unknown profile '{profile_id}' (no {profile_id}.yml in {directory}){hint}",
                   variable="sglang_profile")
        errors.raise_if_any()
    data = _read_yaml(path)
    if data.get("alias_of"):
        # A short, stable name for one documented configuration (e.g. deepseek_r1_pd32).
        return load_profile(str(data["alias_of"]), directory)
    deployment = data
    if data.get("deployment_from"):
        # The documents reuse one deployment for several benchmark points.
        deployment = _read_yaml(os.path.join(directory, f"{data['deployment_from']}.yml"))
    profile = parse_profile(profile_id, data, deployment, errors)
    _check_env_read(profile, deployment, errors)
    errors.raise_if_any()
    return profile


def _check_env_read(profile: Profile, deployment: Mapping[str, Any], errors: Collector) -> None:
    """Refuse a name the profile sets that no reader of its release's stack lists (profiles/_env) unless an env
    deviation names it: a documented setting that does nothing misleads whoever tunes it. A release without a
    catalog (one the collection does not ship) is not checked."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _env_catalog  # it imports this module

    release = profile.releases.get("sglang", "")
    if not _env_catalog.release_known(release):
        return
    for setting in _env_catalog.unexplained(release, deployment, profile.deviations):
        role, name = setting.split(" ", 1)
        errors.add(f"profile '{profile.id}': {role} sets {name}, which no reader of sglang {release}'s stack reads "
                   "(profiles/_env): keep it only with a deviation (part: env, variable: " + name + ") saying so",
                   variable=f"roles.{role}.env.{name}")


# A kernel setting name as sysctl(8) takes it (dots or slashes), a single-line value; a CPU governor name.
SYSCTL_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./-]*")
SYSCTL_VALUE_RE = re.compile(r"[^\r\n\x00]{1,256}")
GOVERNOR_RE = re.compile(r"[a-z][a-z0-9_]{0,31}")


def _host_tuning(raw: Any, errors: Collector, pid: str) -> dict[str, Any]:
    """host_tuning: {cpu_governor: NAME, sysctl: {name: value}}; written to sysfs and 90-sglang.conf as they are."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        errors.add(f"profile '{pid}': host_tuning must be a mapping", variable="host_tuning")
        return {}
    unknown = set(raw) - {"cpu_governor", "sysctl"}
    if unknown:
        errors.add(f"profile '{pid}': unknown keys {sorted(map(str, unknown))}", variable="host_tuning")
    governor = raw.get("cpu_governor")
    if governor is not None and not (isinstance(governor, str) and GOVERNOR_RE.fullmatch(governor)):
        errors.add(f"profile '{pid}': must be a CPU governor name such as performance, got {governor!r}",
                   variable="host_tuning.cpu_governor")
    sysctl = raw.get("sysctl")
    if sysctl is not None and not isinstance(sysctl, dict):
        errors.add(f"profile '{pid}': must map kernel setting names to values", variable="host_tuning.sysctl")
    for name, value in (sysctl or {}).items() if isinstance(sysctl, dict) else ():
        # Empty parts ("vm..x", "vm/../x") would name a file outside /proc/sys where the host applies them.
        if not isinstance(name, str) or not SYSCTL_NAME_RE.fullmatch(name) or "" in re.split(r"[./]", name):
            errors.add(f"profile '{pid}': {name!r} is not a kernel setting name", variable="host_tuning.sysctl")
        elif isinstance(value, (dict, list, bool)) or value is None or not SYSCTL_VALUE_RE.fullmatch(str(value)):
            errors.add(f"profile '{pid}': must be a single-line value, got {value!r}",
                       variable=f"host_tuning.sysctl.{name}")
    return dict(raw)


def _int(value: Any, key: str, errors: Collector, pid: str, allow_none: bool = False) -> int | None:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        errors.add(f"profile '{pid}': {key} must be an integer, got {value!r}", variable=key)
        return None
    return value


def _target(value: Any, key: str, errors: Collector, pid: str) -> float:
    """A latency target in ms: a positive number, or absent (0)."""
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        errors.add(f"profile '{pid}': {key} must be a positive number of milliseconds, got {value!r}", variable=key)
        return 0.0
    return float(value)


def _retired(value: Any, errors: Collector, pid: str) -> dict[str, str]:
    """``retired``: absent, or a mapping with a non-empty ``reason`` (and an optional ``superseded_by`` id)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not isinstance(value.get("reason"), str) or not value["reason"].strip() \
            or set(value) - {"reason", "superseded_by"} \
            or not isinstance(value.get("superseded_by", ""), str):
        errors.add(f"profile '{pid}': retired must be a mapping with a reason (and superseded_by, a profile id)",
                   variable="retired")
        return {}
    return {str(k): str(v) for k, v in value.items()}


def _str_map(value: Any, key: str, errors: Collector, pid: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        errors.add(f"profile '{pid}': {key} must be a mapping", variable=key)
        return {}
    return {str(k): str(v) for k, v in value.items()}


def parse_args_map(value: Any, key: str, errors: Collector, pid: str) -> dict[str, ArgValue]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        errors.add(f"profile '{pid}': {key} must be a mapping of --flag: value", variable=key)
        return {}
    out: dict[str, ArgValue] = {}
    for flag, arg in value.items():
        if not isinstance(flag, str) or not re.match(r"^--[a-z0-9][a-z0-9-]*$", flag):
            errors.add(f"profile '{pid}': '{flag}' is not a full --flag name", variable=f"{key}.{flag}")
            continue
        if arg is False or (isinstance(arg, Mapping)):
            errors.add(f"profile '{pid}': value of {flag} must be a scalar, a list or true", variable=f"{key}.{flag}")
            continue
        out[flag] = arg
    return out


def _cann(value: Any, key: str, errors: Collector, pid: str) -> CannEnv:
    value = value or {}
    if not isinstance(value, Mapping):
        errors.add(f"profile '{pid}': {key} must be a mapping", variable=key)
        return CannEnv()
    unknown = set(value) - {"unset", "sources", "path_prepend", "ld_library_path_prepend"}
    if unknown:
        errors.add(f"profile '{pid}': unknown keys {sorted(unknown)}", variable=key)
    cann = CannEnv(**{k: tuple(str(x) for x in value.get(k) or ()) for k in
                      ("unset", "sources", "path_prepend", "ld_library_path_prepend")})
    for part in ("sources", "path_prepend", "ld_library_path_prepend"):
        for path in getattr(cann, part):
            if not in_ascend_tree(path):
                errors.add(f"profile '{pid}': {path!r} is not under the CANN/Ascend install tree "
                           f"({ASCEND_TREE}/): every server host's cann_env.sh sources or prepends it, as root, at "
                           "each start", variable=f"{key}.{part}")
    for name in cann.unset:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            errors.add(f"profile '{pid}': {name!r} is not an environment variable name", variable=f"{key}.unset")
    return cann


# Where the documents' CANN, ATB and custom-op set_env scripts and tool directories live (the toolkit, nnal, the
# driver, versioned toolkits such as 8.5.0/): a profile's CANN lines reach every server host's cann_env.sh, which
# root sources at each start, so nothing outside this tree may be named there.
ASCEND_TREE = "/usr/local/Ascend"


def in_ascend_tree(path: str) -> bool:
    """An absolute path of plain characters that stays inside ASCEND_TREE once its '..' are resolved."""
    if not re.fullmatch(r"/[A-Za-z0-9._/+-]*", path):
        return False
    return posixpath.normpath(path).startswith(ASCEND_TREE + "/")


def parse_role(pid: str, role: str, raw: Mapping[str, Any], errors: Collector) -> RoleSpec:
    key = f"roles.{role}"
    nnodes = _int(raw.get("nnodes", 1), f"{key}.nnodes", errors, pid) or 1
    if nnodes < 1:
        errors.add(f"profile '{pid}': nnodes must be >= 1", variable=f"{key}.nnodes")
    spec = RoleSpec(
        role=role,
        nnodes=nnodes,
        documented_instances=_int(raw.get("documented_instances", 1), f"{key}.documented_instances", errors, pid) or 1,
        port=_int(raw.get("port"), f"{key}.port", errors, pid) or 0,
        bootstrap_port=_int(raw.get("bootstrap_port"), f"{key}.bootstrap_port", errors, pid, allow_none=True),
        dist_init_port=_int(raw.get("dist_init_port"), f"{key}.dist_init_port", errors, pid, allow_none=True),
        devices_per_node=_int(raw.get("devices_per_node"), f"{key}.devices_per_node", errors, pid,
                              allow_none=True),
        base_gpu_id=_int(raw.get("base_gpu_id", 0), f"{key}.base_gpu_id", errors, pid) or 0,
        env=_str_map(raw.get("env"), f"{key}.env", errors, pid),
        args=parse_args_map(raw.get("args"), f"{key}.args", errors, pid),
        cann=_cann(raw.get("cann"), f"{key}.cann", errors, pid),
    )
    for name in spec.placeholders():
        if name not in COMPUTED and name not in FROM_INVENTORY:
            errors.add(f"profile '{pid}': unknown placeholder '{{{name}}}'", variable=key)
    if nnodes > 1:
        for flag, name in (("--nnodes", "nnodes"), ("--node-rank", "node_rank"),
                           ("--dist-init-addr", "dist_init_addr")):
            if spec.args.get(flag) != f"{{{name}}}":
                errors.add(f"profile '{pid}': a {nnodes}-node {role} must pass {flag} {{{name}}}",
                           variable=f"{key}.args.{flag}")
        if spec.dist_init_port is None:
            errors.add(f"profile '{pid}': a multi-node {role} needs dist_init_port", variable=f"{key}.dist_init_port")
    return spec


def parse_profile(pid: str, data: Mapping[str, Any], deployment: Mapping[str, Any], errors: Collector) -> Profile:
    if data.get("id") != pid:
        errors.add(f"profile file '{pid}.yml' declares id '{data.get('id')}'", variable="id")
    hardware = data.get("hardware")
    if hardware not in NODE_DEVICES:
        errors.add(f"profile '{pid}': hardware must be one of {sorted(NODE_DEVICES)}", variable="hardware")
    mode = data.get("deploy_mode")
    if mode not in DEPLOY_MODES:
        errors.add(f"profile '{pid}': deploy_mode must be one of {sorted(DEPLOY_MODES)}", variable="deploy_mode")
    raw_roles = deployment.get("roles") or {}
    roles: dict[str, RoleSpec] = {}
    for role, raw in raw_roles.items():
        if role not in ROLES:
            errors.add(f"profile '{pid}': unknown role '{role}'", variable=f"roles.{role}")
            continue
        roles[role] = parse_role(pid, role, raw or {}, errors)
    if mode in DEPLOY_MODES:
        for role in DEPLOY_MODES[mode]:
            if role not in roles:
                errors.add(f"profile '{pid}': {mode} needs a '{role}' role", variable=f"roles.{role}")
        for role in SERVER_ROLES:
            if role in roles and role not in DEPLOY_MODES[mode]:
                errors.add(f"profile '{pid}': role '{role}' does not belong to {mode}", variable=f"roles.{role}")
    bench = data.get("bench") or {}
    tpot = _target(data.get("tpot_target_ms"), "tpot_target_ms", errors, pid)
    ttft = _target(data.get("ttft_target_ms"), "ttft_target_ms", errors, pid)
    if "tpot_target_ms" not in data and "ttft_target_ms" not in data:
        errors.add(f"profile '{pid}': needs tpot_target_ms or ttft_target_ms (the latency its benchmark and alerts "
                   "hold it to)", variable="tpot_target_ms")
    return Profile(
        id=pid,
        title=str(data.get("title", pid)),
        model=str(data.get("model", "")),
        hardware=str(hardware),
        cards=_int(data.get("cards"), "cards", errors, pid) or 0,
        deploy_mode=str(mode),
        dataset=dict(data.get("dataset") or {}),
        tpot_target_ms=tpot,
        ttft_target_ms=ttft,
        retired=_retired(data.get("retired"), errors, pid),
        quantization=str(data.get("quantization", "")),
        releases={str(k): str(v) for k, v in (data.get("releases") or {}).items()},
        host_tuning=_host_tuning(deployment.get("host_tuning"), errors, pid),
        roles=roles,
        memfabric_store_port=_int(deployment.get("memfabric_store_port"), "memfabric_store_port", errors, pid,
                                  allow_none=True),
        bench_args=parse_args_map(bench.get("args"), "bench.args", errors, pid),
        published=dict(data.get("published") or {}),
        deviations=list(data.get("deviations") or []) + (
            [dict(d, inherited_from=data["deployment_from"]) for d in deployment.get("deviations") or []
             if d.get("part") in ("deploy", "env")] if data.get("deployment_from") else []),
        source=dict(data.get("source") or {}),
    )
