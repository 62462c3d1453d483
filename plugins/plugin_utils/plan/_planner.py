# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The planner: profile + inventory -> one record per service, per host.

Pure and typed; no Ansible import.  Everything host-specific (ranks, node counts,
dist-init addresses, ports, bootstrap ports, the MemFabric store URL, NIC variables and
the router's upstreams) is computed here and nowhere else.  Every problem found is
collected and reported at once; a plan is returned only when it is complete.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Mapping

from ansible_collections.ascend.sglang.plugins.module_utils.npu import _npu_topo
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _container
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _contract as contract
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _metrics
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _packing
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _model_sources as _sources
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _placement
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _run_settings
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _settings
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _watchdog
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import Collector
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import (
    EXPANDING, FROM_INVENTORY, KV_TRANSFER_ENV, NODE_DEVICES, PLACEHOLDER, ArgValue, CannEnv, Profile, RoleSpec,
)
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._releases import load_release_tables, tokens
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._launch_rules import check_role
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import HostPlan, InstancePlan, Plan, Service
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._topology import (
    Instance, Inventory, check_membership, split_instances,
)

# Port of the evidence endpoint the watchdog of a multi-node instance's rank 0 serves on rank 0's address
# (the unit's InvocationID, read by the other ranks' watchdogs): the settings table's default of sglang_watchdog_port.
DEFAULT_WATCHDOG_PORT = _settings.BY_NAME["sglang_watchdog_port"].default

SERVER_MODULE = "sglang.launch_server"
ROUTER_MODULE = "sglang_router.launch_router"
BENCH_MODULE = "sglang.bench_serving"

# Router used in front of PD-mixed replicas (regular mode); the documents start none.
DEFAULT_MIXED_ROUTER = RoleSpec(
    role="router", nnodes=1, documented_instances=1, port=6688, bootstrap_port=None, dist_init_port=None,
    devices_per_node=None, base_gpu_id=0, env={},
    args={"--worker-urls": "{worker_urls}", "--policy": "cache_aware", "--host": "127.0.0.1",
          "--port": "{port}"},
    cann=CannEnv(),
)


PORT_FIELDS = ("--port", "--disaggregation-bootstrap-port")
COMPUTED_HINT = {
    "--host": "set the host's sglang_host_ip",
    "--model-path": "set sglang_model_path",
    "--speculative-draft-model-path": "set sglang_draft_model_path",
    "--init-expert-location": "set sglang_init_expert_location",
    "--nnodes": "size the inventory group (hosts per instance come from the profile)",
    "--node-rank": "order the hosts in the inventory group",
    "--dist-init-addr": "order the hosts in the inventory group (rank 0 is the first host of an instance)",
}


def _fill(text: Any, values: Mapping[str, Any]) -> str:
    """Fill the profile's {placeholders}; a user value (contract.Literal) is taken as it is."""
    if isinstance(text, contract.Literal):
        return str.__str__(text)
    return PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), str(text))


def render_flags(args: Mapping[str, ArgValue], values: Mapping[str, Any],
                 expansions: Mapping[str, list[list[str]]]) -> list[list[Any]]:
    """Flag map -> ``[flag, [values...]]`` in order; ``true`` is a bare flag (no value), lists are several
    values, an expanding placeholder repeats its flag once per group."""
    flags: list[list[Any]] = []
    for flag, value in args.items():
        if value is True:
            flags.append([flag, []])
        elif isinstance(value, list):
            flags.append([flag, [_fill(v, values) for v in value]])
        else:
            text = value if isinstance(value, contract.Literal) else str(value)
            whole = None if isinstance(value, contract.Literal) else PLACEHOLDER.fullmatch(text)
            if whole and whole.group(1) in EXPANDING:
                flags.extend([flag, list(group)] for group in expansions.get(whole.group(1), []))
            else:
                flags.append([flag, [_fill(text, values)]])
    return flags


def flat(flags: list[list[Any]]) -> list[str]:
    """``[flag, [values...]]`` pairs -> argv tokens."""
    return [word for flag, words in flags for word in (flag, *words)]


def render_args(args: Mapping[str, ArgValue], values: Mapping[str, Any],
                expansions: Mapping[str, list[list[str]]]) -> list[str]:
    """Flag map -> argv tokens; ``true`` is a bare flag, lists are several values."""
    return flat(render_flags(args, values, expansions))


def _apply_overrides(spec: RoleSpec, overrides: Mapping[str, Any], errors: Collector) -> RoleSpec:
    """Per-role inventory overrides of flags and env (already checked by the contract): a value
    replaces, null removes."""
    role_over = overrides.get(spec.role) or {}
    args = dict(spec.args)
    raw_args = role_over.get("args") or {}
    removed = [f for f, v in raw_args.items() if v is None]
    kept = {f: v for f, v in raw_args.items() if v is not None}
    port, bootstrap = spec.port, spec.bootstrap_port
    for flag, value in list(kept.items()) + [(f, None) for f in removed]:
        current = str(spec.args.get(flag, ""))
        if flag in PORT_FIELDS and PLACEHOLDER.fullmatch(current):
            # A port is data of the role: move the number there, keep the computed flag.
            if not isinstance(value, int) or isinstance(value, bool) or not 0 < value < 65536:
                errors.add(f"{flag} must be a port number, got {value!r}",
                           variable=f"sglang_overrides.{spec.role}.args.{flag}")
            elif flag == "--port":
                port = value
            else:
                bootstrap = value
            kept.pop(flag, None)
        elif PLACEHOLDER.search(current):
            errors.add(f"{flag} is computed by the planner ({current}); {COMPUTED_HINT.get(flag, 'change the inventory')} "
                       "instead", variable=f"sglang_overrides.{spec.role}.args.{flag}")
            kept.pop(flag, None)
            if flag in removed:
                removed.remove(flag)
    for flag in removed:
        args.pop(flag, None)
    args.update(kept)
    env = dict(spec.env)
    for key, value in (role_over.get("env") or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return dataclasses.replace(spec, args=args, env=env, port=port, bootstrap_port=bootstrap)


def _kv_transfer(hardware: str, spec: RoleSpec, errors: Collector) -> RoleSpec:
    """A PD server's KV transfer settings for its hardware (KV_TRANSFER_ENV): added where the profile and the
    overrides leave them out; another value is refused, since P and D then cannot exchange the KV cache."""
    env = dict(spec.env)
    for name, value in KV_TRANSFER_ENV.get(hardware, {}).items():
        if name not in env:
            env[name] = value
        elif env[name] != value:
            errors.add(f"{name}={env[name]} on {hardware}: the KV cache moves between prefill and decode over "
                       f"{name}={value} on {hardware} hosts", group=spec.role,
                       variable=f"sglang_overrides.{spec.role}.env.{name}")
    return dataclasses.replace(spec, env=env)


def _computed_env(spec: RoleSpec) -> set[str]:
    return {name for name, value in spec.env.items() if PLACEHOLDER.search(str(value))}


def _check_devices(profile: Profile, spec: RoleSpec, errors: Collector) -> None:
    node = NODE_DEVICES.get(profile.hardware, 0)
    per_node = spec.devices_per_node or node
    tp = spec.tp_size
    if tp is None:
        errors.add(f"the {spec.role} launch has no numeric --tp-size", group=spec.role,
                   variable=f"roles.{spec.role}.args.--tp-size")
        return
    if per_node > node:
        errors.add(f"devices_per_node {per_node} exceeds the {node} NPUs of an {profile.hardware} node",
                   group=spec.role, variable=f"roles.{spec.role}.devices_per_node")
    if spec.base_gpu_id + per_node > node:
        errors.add(f"--base-gpu-id {spec.base_gpu_id} + {per_node} devices exceeds the {node} NPUs of an "
                   f"{profile.hardware} node", group=spec.role, variable=f"roles.{spec.role}.base_gpu_id")
    if not spec.pp_size:
        errors.add(f"the {spec.role} launch's --pp-size {spec.args.get('--pp-size')!r} is not a number",
                   group=spec.role, variable=f"roles.{spec.role}.args.--pp-size")
        return
    # Pipeline parallelism multiplies the devices of an instance: --tp-size 4 --pp-size 8 over 2 nodes is 16
    # NPUs per node, not tp / nnodes = 2.
    devices = spec.instance_devices
    used = f"--tp-size {tp} x --pp-size {spec.pp_size} = {devices} NPUs" if spec.pp_size > 1 else f"--tp-size {tp}"
    if devices != per_node * spec.nnodes:
        errors.add(f"{used} does not match {per_node} NPUs per {profile.hardware} node x {spec.nnodes} node(s) = "
                   f"{per_node * spec.nnodes}", group=spec.role, variable="--tp-size")


def _check_hardware(profile: Profile, inv: Inventory, errors: Collector) -> None:
    """An A2 profile never on hosts declared A3 (sglang_hardware) and back."""
    for role in profile.server_roles:
        for name in inv.groups[role]:
            declared = inv.hosts[name].hardware
            if declared and declared != profile.hardware:
                errors.add(f"host is an Atlas 800I {declared} but profile '{profile.id}' is for "
                           f"{profile.hardware} ({NODE_DEVICES.get(profile.hardware)} NPUs per node)",
                           group=role, host=name, variable="sglang_hardware")


def _inventory_values(profile: Profile, inv: Inventory, errors: Collector) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name in sorted(profile.placeholders() & set(FROM_INVENTORY)):
        var = FROM_INVENTORY[name]
        value = inv.variables.get(var)
        if value in (None, ""):
            errors.add(f"profile '{profile.id}' needs it ({{{name}}} in its launch flags)", variable=var)
        values[name] = value
    return values


def plan(profile: Profile, inv: Inventory, placement: _placement.Placement = _placement.HOSTS) -> Plan:
    """Compute every service of the deployment; raises PlanError listing all problems.  ``placement`` gives the
    values that depend on where the services run (plugin_utils/plan/_placement.py): the inventory hosts' by default.
    Every record of the plan is built complete and frozen: nothing is filled in after it is made."""
    errors = Collector()
    errors.findings.extend(inv.findings)
    check_membership(inv, profile.server_roles, errors)
    checked = _settings.check_one_values(inv.variables, errors)
    own_source = _sources.own_source(checked.get("sglang_model_source"), checked.get("sglang_model_path"))
    if own_source:
        errors.add(own_source, variable="sglang_model_source")
    scope = _scope(profile, inv)
    specs, overrides, monitoring = _role_specs(profile, inv, scope, checked, errors)
    inv_values = _inventory_values(profile, inv, errors)
    instances = {role: _packing.pack(profile, role, specs[role], split_instances(inv, role, specs[role].nnodes, errors),
                                     overrides, errors)
                 for role in profile.server_roles}
    releases, supported, changes = _render_for_releases(profile, inv, specs, overrides, errors)
    secret_flags = contract.check_secrets(inv.variables.get("sglang_secrets"), scope, errors)
    _check_secret_flags(secret_flags, specs, releases, errors)
    container = _container_settings(profile, inv, releases, inv_values, errors)
    preflight = contract.preflight_settings(inv.variables, errors)
    errors.raise_if_any()
    ctx = _Deployment(profile=profile, inv=inv, placement=placement, specs=specs, overrides=overrides,
                      monitoring=monitoring, secret_flags=secret_flags, inv_values=inv_values, container=container,
                      python=str(checked["sglang_python"]), router_python=str(checked["sglang_router_python"]),
                      **_memfabric_store(profile, instances, placement))
    servers = _Built()
    for role in profile.server_roles:
        for inst in instances[role]:
            _plan_server_instance(ctx, role, inst, servers, errors)
    router_spec = placement.router_spec(specs["router"]) if inv.groups["router"] and "router" in specs else None
    if router_spec is not None:
        _plan_routers(ctx, router_spec, servers)
    host_plans = _host_plans(ctx, servers)
    _check_ports(host_plans, inv, errors)
    check_hccl_timeouts(host_plans, errors)
    settings = _run_settings.resolve(checked, servers.instances, errors)
    # The stage's sources by model directory ({} when none is set): the filters and stage_weights.yml read them so.
    settings["sglang_model_source"] = _sources.by_path(checked.get("sglang_model_source"),
                                                       checked.get("sglang_model_path"))
    errors.raise_if_any()
    bench = _bench(profile, inv, inv.groups["router"], router_spec, instances, ctx.python)
    return Plan(profile=profile.id, title=profile.title, deploy_mode=profile.deploy_mode,
                source={"generation": profile.generation, **profile.source},
                releases=releases, supported_releases=supported, release_changes=changes, hosts=host_plans,
                router_upstreams={k: v for k, v in servers.upstreams.items() if v},
                bench=_bench_in(container, ctx.model_paths, bench),
                # Nodes the servers occupy, a packed replica counting as one node of its share.
                cards=profile.cards_used({role: sum(inst.nnodes for inst in instances[role])
                                          for role in profile.server_roles}),
                runtime="container" if container is not None else "host", container=container,
                hardware=profile.hardware, preflight=preflight, instances=servers.instances,
                reference_stack=_reference_stack(releases),
                monitoring={**dataclasses.asdict(monitoring), "host_dirs": dict(inv.monitoring_dirs)},
                deployment=checked.get("sglang_deployment") or profile.id, settings=settings)


def _scope(profile: Profile, inv: Inventory) -> dict[str, str]:
    """The roles this deployment runs (an override or a secret of any other is an error, not ignored)."""
    scope = {role: role for role in profile.server_roles}
    if inv.groups["router"]:
        scope["router"] = "router"
    return scope


def _role_specs(profile: Profile, inv: Inventory, scope: Mapping[str, str], checked: Mapping[str, Any],
                errors: Collector) -> tuple[dict[str, RoleSpec], dict[str, Any], _metrics.Settings]:
    """Each role's launch as this deployment runs it: the profile's, with the operator's overrides, the router's
    listen address, the KV transfer of the hardware and the metrics flags; checked role by role."""
    router_hosts = inv.groups["router"]
    computed_env = {role: _computed_env(spec) for role, spec in profile.roles.items()}
    overrides = contract.check_overrides(inv.variables.get("sglang_overrides"), scope, computed_env, errors)
    _metrics.check_overrides(overrides, errors)
    monitoring = _metrics.settings(checked, profile.tpot_target_ms, profile.published, profile.ttft_target_ms)
    specs = {role: _apply_overrides(spec, overrides, errors) for role, spec in profile.roles.items()}
    if profile.deploy_mode == "pd_separation" and not router_hosts and "router" not in inv.misnamed:
        errors.add("PD separation needs a router host in front of its prefill and decode instances", group="router")
    if router_hosts and "router" not in specs:
        specs["router"] = _apply_overrides(DEFAULT_MIXED_ROUTER, overrides, errors)
    if "router" in specs:
        specs["router"] = _router_listen(specs["router"], checked["sglang_router_listen"], overrides, errors)
    for role in ("prefill", "decode"):
        if role in specs:
            specs[role] = _kv_transfer(profile.hardware, specs[role], errors)
    # Metrics (sglang_metrics): a recorded deviation from the documented launches, added before the release check.
    for role in profile.server_roles:
        specs[role] = dataclasses.replace(specs[role], args={**specs[role].args, **_metrics.server_flags(monitoring)})
    if "router" in specs:
        mini = specs["router"].args.get("--mini-lb") is True
        specs["router"] = dataclasses.replace(specs["router"], args={
            **specs["router"].args, **_metrics.router_flags(monitoring, mini)})
    for role in profile.server_roles:
        _check_devices(profile, specs[role], errors)
        check_role(role, specs[role].args, specs[role].env, errors)
    _check_hardware(profile, inv, errors)
    return specs, overrides, monitoring


@dataclasses.dataclass(frozen=True)
class _Deployment:
    """What every service of one deployment is planned from, checked: the launches, the operator's values and the
    runtime."""
    profile: Profile
    inv: Inventory
    placement: _placement.Placement
    specs: Mapping[str, RoleSpec]
    overrides: Mapping[str, Any]
    monitoring: _metrics.Settings
    secret_flags: Mapping[str, list[str]]
    inv_values: Mapping[str, Any]
    container: _container.Settings | None
    python: str
    router_python: str
    store_url: str | None  # the MemFabric store URL the servers get (ASCEND_MF_STORE_URL)
    store: tuple[str, int] | None  # the MemFabric store's (address, port), for the peers preflight dials

    @property
    def model_paths(self) -> list[str]:
        return [str(self.inv_values[k]) for k in FROM_INVENTORY if self.inv_values.get(k)]


@dataclasses.dataclass
class _Built:
    """What the planning of the services collects, host by host, before the host plans are made from it."""
    services: dict[str, list[Service]] = dataclasses.field(default_factory=dict)  # inventory host -> its services
    cann: dict[str, dict[str, list[str]]] = dataclasses.field(default_factory=dict)  # server host -> CANN env
    upstreams: dict[str, list[dict[str, Any]]] = dataclasses.field(
        default_factory=lambda: {"prefill": [], "decode": [], "mixed": []})
    rank0_names: list[str] = dataclasses.field(default_factory=list)
    watched: list[_watchdog.WatchedWorker] = dataclasses.field(default_factory=list)  # as the router's watchdog sees them
    instances: list[InstancePlan] = dataclasses.field(default_factory=list)

    def add(self, host: str, service: Service) -> None:
        self.services.setdefault(host, []).append(service)


def _memfabric_store(profile: Profile, instances: Mapping[str, list[Instance]],
                     placement: _placement.Placement) -> dict[str, Any]:
    """The MemFabric store the first prefill instance's rank 0 serves: its URL and (address, port)."""
    first = instances["prefill"][0] if profile.memfabric_store_port and instances.get("prefill") else None
    if first is None:
        return {"store_url": None, "store": None}
    return {"store_url": f"tcp://{placement.instance_address(first)}:{profile.memfabric_store_port}",
            "store": (first.rank0.address, profile.memfabric_store_port)}


def _plan_server_instance(ctx: _Deployment, role: str, inst: Instance, built: _Built, errors: Collector) -> None:
    """Every rank of one server instance, its registration at the router and its watchdog facts."""
    # A packed replica's own NPUs and ports; the role's launch itself for an instance alone on its hosts.
    spec = ctx.placement.server_spec(
        _packing.replica_spec(ctx.profile, ctx.specs[role], inst.slot, inst.slots, errors, inst.rank0.name))
    bootstrap = (ctx.placement.bootstrap_port(spec.bootstrap_port, inst.index) if spec.bootstrap_port is not None
                 else None)
    if bootstrap is not None and bootstrap > 65535:
        overridden = "--disaggregation-bootstrap-port" in (ctx.overrides.get(role) or {}).get("args", {})
        errors.add(f"bootstrap port {spec.bootstrap_port} + instance {inst.index} = {bootstrap} is above 65535",
                   group=role, host=inst.rank0.name,
                   variable=(f"sglang_overrides.{role}.args.--disaggregation-bootstrap-port" if overridden
                             else f"roles.{role}.bootstrap_port"))
    worker_url = f"http://{ctx.placement.instance_address(inst)}:{spec.port}"
    worker = {"url": worker_url, "worker_type": WORKER_TYPES[role]}
    if bootstrap is not None:
        worker["bootstrap_port"] = bootstrap
    for rank, host in enumerate(inst.hosts):
        built.add(host.name, _server_rank(ctx, role, inst, spec, rank, bootstrap, worker, errors))
        built.cann[host.name] = _merged_cann(built.cann.get(host.name), spec.cann)
    built.rank0_names.append(f"sglang-{role}-i{inst.index}-r0")
    built.instances.append(InstancePlan(
        key=inst.key, role=role, instance=inst.index,
        ranks=[f"sglang-{role}-i{inst.index}-r{rank}" for rank in range(len(inst.hosts))],
        hosts=[host.name for host in inst.hosts], worker_url=worker_url, worker=dict(worker)))
    entry = {"instance": inst.index, "host": inst.rank0.name, "url": worker_url}
    if bootstrap is not None:
        entry["bootstrap_port"] = bootstrap
    built.upstreams[role].append(entry)
    built.watched.append(_watched_worker(role, entry, inst.nnodes))


def _server_rank(ctx: _Deployment, role: str, inst: Instance, spec: RoleSpec, rank: int, bootstrap: int | None,
                 worker: Mapping[str, Any], errors: Collector) -> Service:
    """One rank of a server instance on its host, complete."""
    host = inst.hosts[rank]
    dist_init = f"{ctx.placement.leader_address(inst)}:{spec.dist_init_port}" if spec.dist_init_port else None
    evidence_port = inst.rank0.watchdog_port or DEFAULT_WATCHDOG_PORT
    values = dict(ctx.inv_values)
    values.update(
        host=ctx.placement.own_address(host), port=spec.port, bootstrap_port=bootstrap, nnodes=inst.nnodes,
        node_rank=ctx.placement.node_rank(rank), dist_init_addr=dist_init,
        # The operator's NIC wherever given (SGLang's current pages name <network-interface> for single-node PD
        # servers too); loopback for a single-node rank without one, as the documents set it on one node.
        socket_ifname=host.nic or "lo",
        memfabric_store_url=ctx.store_url,
    )
    name = f"sglang-{role}-i{inst.index}-r{rank}"
    listens = {"http": spec.port}
    if bootstrap is not None and rank == 0:
        listens["bootstrap"] = bootstrap
    if dist_init and rank == 0:
        listens["dist_init"] = spec.dist_init_port
    if ctx.store_url and role == "prefill" and inst.index == 0 and rank == 0:
        listens["memfabric_store"] = ctx.profile.memfabric_store_port
    if inst.nnodes > 1 and rank == 0:
        listens["watchdog"] = evidence_port
    env = {k: _fill(v, values) for k, v in spec.env.items()}
    devices = _devices(spec, inst.nnodes, values)
    cpus = _pinned_cpus(host.settings.get("sglang_npu_cpus"), devices, name,
                        contract.Where("sglang_npu_cpus", role, host.name), errors)
    secret_flags = list(ctx.secret_flags.get(role, []))
    container = None
    if ctx.container is not None:
        container = _container.service_container(
            ctx.container, name, _container.npu_ids(NODE_DEVICES[ctx.profile.hardware], spec.base_gpu_id,
                                                    spec.devices_per_node),
            ctx.model_paths, list(env), spec.cann.sources, secret_flags,
            fabric=inst.nnodes > 1 or role in ("prefill", "decode"), cpus=cpus)
    return Service(
        name=name, role=role, instance=inst.index, node_rank=rank, nnodes=inst.nnodes,
        inventory_host=host.name, host=host.address, port=spec.port, bootstrap_port=bootstrap,
        dist_init_addr=dist_init,
        argv=[ctx.python, "-m", SERVER_MODULE] + render_args(spec.args, values, {}),
        env=env,
        health_url=f"http://{host.address}:{spec.port}/health" if rank == 0 else None,
        ready_url=None, instance_key=inst.key, depends_on=[], listens=listens,
        secret_flags=secret_flags,
        watchdog=_rank_watchdog(role, inst, spec.port, evidence_port),
        container=container,
        python=ctx.python if ctx.container is None else None,
        devices=devices,
        model_paths=_model_paths(spec.args, values),
        peers=_peers(role, inst, rank, spec, host.address, values, ctx.store),
        mem_fraction_static=_number(_arg_text(spec.args, "--mem-fraction-static", values)),
        worker=dict(worker) if rank == 0 else None,
        cpus=cpus,
        metrics_url=_metrics.url(host.address, spec.port) if ctx.monitoring.metrics else None,
    )


def _plan_routers(ctx: _Deployment, router_spec: RoleSpec, built: _Built) -> None:
    """One router per host of the router group, each in front of every planned server instance."""
    expansions = {
        "prefill_upstreams": [[u["url"]] + ([str(u["bootstrap_port"])] if "bootstrap_port" in u else [])
                              for u in built.upstreams["prefill"]],
        "decode_upstreams": [[u["url"]] for u in built.upstreams["decode"]],
        "worker_urls": [[u["url"] for u in built.upstreams["mixed"]]] if built.upstreams["mixed"] else [],
    }
    for index, name in enumerate(ctx.inv.groups["router"]):
        svc = _router(ctx, router_spec, index, ctx.inv.hosts[name], expansions, built)
        built.instances.append(InstancePlan(
            key=svc.instance_key, role="router", instance=index, ranks=[svc.name], hosts=[name], mini_lb=svc.mini_lb,
            router_url=f"http://{svc.host}:{svc.port}"))
        built.add(name, svc)


def _router(ctx: _Deployment, router_spec: RoleSpec, index: int, host: Any,
            expansions: Mapping[str, list[list[str]]], built: _Built) -> Service:
    """One router on its host, complete."""
    mini_lb = router_spec.args.get("--mini-lb") is True
    metrics_port = _metrics.router_metrics_port(ctx.monitoring, mini_lb)
    values = dict(ctx.inv_values, port=router_spec.port, host=ctx.placement.own_address(host),
                  metrics_port=metrics_port, metrics_host=ctx.placement.metrics_host(host))
    flags = render_flags(router_spec.args, values, expansions)
    head = [ctx.router_python, "-m", ROUTER_MODULE]
    argv = head + flat(flags)
    bind = str(router_spec.args.get("--host", "127.0.0.1"))
    probe = "127.0.0.1" if bind in ("0.0.0.0", "::") else _fill(bind, values)
    name = f"sglang-router-i{index}"
    env = {k: _fill(v, values) for k, v in router_spec.env.items()}
    secret_flags = list(ctx.secret_flags.get("router", []))
    return Service(
        name=name, role="router", instance=index, node_rank=0, nnodes=1,
        inventory_host=host.name, host=probe, port=router_spec.port, bootstrap_port=None, dist_init_addr=None,
        argv=argv, env=env,
        health_url=f"http://{probe}:{router_spec.port}/health",
        # The Python mini load balancer has no readiness endpoint; the Rust router does.
        ready_url=None if mini_lb else f"http://{probe}:{router_spec.port}/readiness",
        instance_key=f"router-i{index}", depends_on=list(built.rank0_names),
        listens={"http": router_spec.port, **({"metrics": metrics_port} if metrics_port else {})},
        secret_flags=secret_flags,
        watchdog=_watchdog.RouterWatch(router_url=None if mini_lb else f"http://{probe}:{router_spec.port}",
                                       workers=tuple(built.watched)),
        # No NPU, no driver, no model: the router only forwards requests.
        container=(_container.service_container(ctx.container, name, None, (), list(env), (), secret_flags)
                   if ctx.container is not None else None),
        peers=_peers("router", None, 0, router_spec, probe, values, None), mini_lb=mini_lb,
        # The workers at start, read from a file by the launcher: with a worker API, every deploy applies the planned
        # list through it, and a change of the list alone restarts nothing. --mini-lb has no API: the list stays in
        # the launcher, and a change of it restarts the router.
        boot_workers=None if mini_lb else _worker_span(router_spec.args, flags, len(head)),
        python=ctx.router_python if ctx.container is None else None,
        metrics_url=(_metrics.url(host.address, metrics_port) if ctx.monitoring.metrics and metrics_port
                     else None),
    )


def _worker_span(args: Mapping[str, ArgValue], flags: list[list[Any]], offset: int) -> list[int] | None:
    """[start, end) of the router's argv tokens that list its workers (the flags of the expanding placeholders:
    --prefill, --decode, --worker-urls), when they form one run of flags; None when there is none, or when another
    flag sits between them (the documented order is kept, and such a router restarts on a change of its list).
    ``flags``: render_flags() of ``args``; ``offset``: the tokens before them (interpreter, -m, module)."""
    listing = set()
    for flag, value in args.items():
        whole = None if isinstance(value, contract.Literal) else PLACEHOLDER.fullmatch(str(value))
        if whole and whole.group(1) in EXPANDING:
            listing.add(flag)
    start: int | None = None
    end: int | None = None
    position = offset
    for flag, words in flags:
        width = 1 + len(words)
        if flag in listing:
            if end is not None and position != end:
                return None
            start = position if start is None else start
            end = position + width
        position += width
    return [start, end] if start is not None and end is not None else None


def _host_plans(ctx: _Deployment, built: _Built) -> dict[str, HostPlan]:
    """Each host's plan, complete: its services, its tuning and CANN environment (server hosts), its settings."""
    out: dict[str, HostPlan] = {}
    for name, services in built.services.items():
        server = name in built.cann
        out[name] = HostPlan(
            host_tuning=dict(ctx.profile.host_tuning) if server else {}, cann=built.cann.get(name, {}),
            services=services,
            settings=(dict(ctx.inv.hosts[name].settings) if name in ctx.inv.hosts
                      else _settings.defaults(_settings.HOST)))
    return out


# What sglang_router_listen puts into the router's --host: the documented launch binds loopback (the profile's own
# value is kept), {host} is the router host's sglang_host_ip.
ROUTER_LISTEN_HOST = {"host_ip": "{host}", "any": "0.0.0.0"}


def _router_listen(spec: RoleSpec, listen: str, overrides: Mapping[str, Any], errors: Collector) -> RoleSpec:
    """The router's --host from sglang_router_listen; an override of --host besides it is refused (two sources of
    one value)."""
    if listen not in ROUTER_LISTEN_HOST:
        return spec
    if "--host" in ((overrides.get("router") or {}).get("args") or {}):
        errors.add(f"sglang_router_listen is {listen} and sglang_overrides.router.args.--host is set too: keep one "
                   "(sglang_router_listen)", group="router", variable="sglang_router_listen")
        return spec
    return dataclasses.replace(spec, args={**spec.args, "--host": ROUTER_LISTEN_HOST[listen]})


# Every rank of an instance must wait as long for its peers: ranks with other timeouts fail in ways that are hard
# to read (one gives up on a link set-up the others still wait for). HCCL_CONNECT_TIMEOUT is 120..7200 s.
HCCL_TIMEOUTS = ("HCCL_CONNECT_TIMEOUT", "HCCL_EXEC_TIMEOUT")


def check_hccl_timeouts(hosts: Mapping[str, HostPlan], errors: Collector) -> None:
    """The HCCL timeouts of the ranks of each instance are equal (profile env or sglang_overrides)."""
    ranks: dict[str, list[Service]] = {}
    for host_plan in hosts.values():
        for svc in host_plan.services:
            ranks.setdefault(svc.instance_key, []).append(svc)
    for key, services in ranks.items():
        for var in HCCL_TIMEOUTS:
            values = {svc.inventory_host: svc.env.get(var) for svc in services}
            if len(set(values.values())) > 1:
                shown = ", ".join(f"{host}: {value if value is not None else 'unset'}" for host, value in values.items())
                errors.add(f"the ranks of instance {key} must use one {var}, got {shown}",
                           group=services[0].role, host=services[0].inventory_host,
                           variable=f"sglang_overrides.{services[0].role}.env.{var}")


def _container_settings(profile: Profile, inv: Inventory, releases: Mapping[str, str], inv_values: Mapping[str, Any],
                        errors: Collector) -> _container.Settings | None:
    """sglang_runtime: container -> the checked settings, the image defaulting to the documented image of the
    plan's SGLang release for the profile's hardware (profiles/_releases.yml); host -> None."""
    if _container.runtime(inv.variables, errors) != "container":
        return None
    release = releases.get("sglang", "")
    stack = load_release_tables()["sglang"].stack(release)
    default = stack.images.get(profile.hardware) if stack else None
    documented = [r for r, s in load_release_tables()["sglang"].stacks.items() if s.images.get(profile.hardware)]
    why = (f"no container image is documented for SGLang {release} on {profile.hardware} (profile '{profile.id}'): "
           f"set sglang_container_image to an image with SGLang {release}"
           + (f", or sglang_release to {' / '.join(documented)} if the profile's flags allow it" if documented else ""))
    _container.check_mount_paths(inv_values, errors)
    return _container.check_settings(inv.variables, default, why, errors)


def _bench_in(settings: _container.Settings | None, model_paths: list[str],
              bench: dict[str, Any] | None) -> dict[str, Any] | None:
    """In the container runtime the benchmark runs in the image too: the engine command before its argv."""
    if bench is None or settings is None:
        return bench
    return {**bench, "container": _container.bench_prefix(settings, model_paths)}


WORKER_TYPES = {"prefill": "prefill", "decode": "decode", "mixed": "regular"}


def _arg_text(args: Mapping[str, ArgValue], flag: str, values: Mapping[str, Any]) -> str | None:
    """What a flag's value renders to in the argv (the first of several); None when absent or bare."""
    value = args.get(flag)
    if value is None or value is True:
        return None
    if isinstance(value, list):
        return _fill(value[0], values) if value else None
    return _fill(value, values)


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


def _pinned_cpus(near: Mapping[int, str] | None, devices: list[int], name: str, where: contract.Where,
                 errors: Collector) -> str | None:
    """The CPUs a server rank is pinned to: those near each of its NPUs (sglang_npu_cpus of its host, as
    ``npu-smi info -t topo`` gives them); None when the host sets none."""
    if not near or not devices:
        return None
    missing = [d for d in devices if d not in near]
    if missing:
        where.add(errors, f"has no CPUs for NPU {', '.join(map(str, missing))} of {name} (NPUs {devices[0]}-"
                          f"{devices[-1]}): give every NPU of the host, as `npu-smi info -t topo` lists them")
        return None
    return _npu_topo.cpus_near(near, devices)


def _devices(spec: RoleSpec, nnodes: int, values: Mapping[str, Any]) -> list[int]:
    """The NPUs a server rank uses: --tp-size x --pp-size / nnodes of them from its --base-gpu-id (SGLang's
    default 0)."""
    try:
        first = int(_arg_text(spec.args, "--base-gpu-id", values) or 0)
    except ValueError:
        first = 0
    return list(range(first, first + max((spec.instance_devices or 1) // max(nnodes, 1), 1)))


def _model_paths(args: Mapping[str, ArgValue], values: Mapping[str, Any]) -> list[dict[str, str]]:
    """The model, its config and quantization description, the draft model and the expert distribution a server
    reads from disk."""
    out: list[dict[str, str]] = []

    def add(flag: str, path: str, kind: str, what: str) -> None:
        out.append({"flag": flag, "path": path, "kind": kind, "what": what})

    model = _arg_text(args, "--model-path", values)
    if model:
        add("--model-path", model, "dir", "--model-path")
        add("--model-path", model.rstrip("/") + "/config.json", "file", "--model-path config.json")
        if (_arg_text(args, "--quantization", values) or "").lower() == "modelslim":
            add("--quantization", model.rstrip("/") + "/quant_model_description.json", "file",
                "--quantization modelslim needs the model's quant_model_description.json")
    draft = _arg_text(args, "--speculative-draft-model-path", values)
    if draft:
        algo = _arg_text(args, "--speculative-algorithm", values) or "speculative decoding"
        add("--speculative-draft-model-path", draft, "dir", f"--speculative-draft-model-path ({algo} draft model)")
        add("--speculative-draft-model-path", draft.rstrip("/") + "/config.json", "file",
            f"{algo} draft model config.json")
    experts = _arg_text(args, "--init-expert-location", values)
    if experts and experts != "trivial":
        add("--init-expert-location", experts, "file", "--init-expert-location")
    return out


def _split_addr(addr: str) -> tuple[str, int] | None:
    """``host:port`` / ``tcp://host:port`` / ``[v6]:port`` -> (host, port)."""
    text = re.sub(r"^[a-z]+://", "", addr.strip())
    match = re.fullmatch(r"\[([^\]]+)\]:(\d+)", text) or re.fullmatch(r"([^:/]+):(\d+)", text)
    return (match.group(1), int(match.group(2))) if match else None


def _peers(role: str, inst: Instance | None, rank: int, spec: RoleSpec, own: str, values: Mapping[str, Any],
           store: tuple[str, int] | None) -> list[dict[str, Any]]:
    """The endpoints of other hosts a service dials at start: a rank > 0 its rank 0's dist-init port; a service
    with ASCEND_MF_STORE_URL the MemFabric store (unless it serves it)."""
    out: list[dict[str, Any]] = []
    if inst is not None and rank > 0 and spec.dist_init_port:
        out.append({"address": inst.rank0.address, "port": spec.dist_init_port,
                    "purpose": f"dist-init of {role} instance {inst.index} rank 0"})
    raw = spec.env.get("ASCEND_MF_STORE_URL")
    if raw is not None:
        # The planned store, or a URL written in the profile or sglang_overrides as it is.
        target = store if str(raw) == "{memfabric_store_url}" else _split_addr(_fill(raw, values))
        if target and target[0] != own:
            out.append({"address": target[0], "port": target[1], "purpose": "MemFabric store (ASCEND_MF_STORE_URL)"})
    return out


def _reference_stack(releases: Mapping[str, str]) -> dict[str, Any] | None:
    stack = load_release_tables()["sglang"].stack(str(releases.get("sglang") or ""))
    return stack.as_dict() if stack else None


def _rank_watchdog(role: str, inst: Instance, port: int, evidence_port: int) -> _watchdog.RankWatch:
    """A rank's watchdog facts; in a multi-node instance, rank 0's watchdog serves its unit's InvocationID on
    ``evidence`` (rank 0's address and the planned port) and every other rank's watchdog reads it there."""
    evidence = None
    if inst.nnodes > 1:
        evidence = _watchdog.Evidence(address=inst.rank0.address, port=evidence_port,
                                      url=f"http://{inst.rank0.address}:{evidence_port}/rank0")
    return _watchdog.RankWatch(
        instance_label=f"{role} instance {inst.index}",
        health_url=f"http://{inst.rank0.address}:{port}/health_generate",
        members=tuple(_watchdog.Member(host=h.name, service=f"sglang-{role}-i{inst.index}-r{r}", node_rank=r)
                      for r, h in enumerate(inst.hosts)),
        evidence=evidence)


def _watched_worker(role: str, entry: Mapping[str, Any], nnodes: int) -> _watchdog.WatchedWorker:
    return _watchdog.WatchedWorker(
        instance_label=f"{role} instance {entry['instance']}", nnodes=nnodes, url=entry["url"],
        worker_type=WORKER_TYPES[role], health_url=entry["url"] + "/health_generate",
        bootstrap_port=entry.get("bootstrap_port"))


def _merged_cann(current: Mapping[str, list[str]] | None, cann: CannEnv) -> dict[str, list[str]]:
    """A host's CANN environment with one more server's: every script and variable once, in first-seen order."""
    merged = {key: list(items) for key, items in (current or {k: [] for k in cann.as_dict()}).items()}
    for key, items in cann.as_dict().items():
        for item in items:
            if item not in merged[key]:
                merged[key].append(item)
    return merged


# The variable that moves a port of a kind (the other kinds are the profile's or sglang_overrides' ports).
_PORT_VARIABLES = {"watchdog": "sglang_watchdog_port", "metrics": "sglang_router_metrics_port"}


def _check_ports(hosts: Mapping[str, HostPlan], inv: Inventory, errors: Collector) -> None:
    """Ports are per address: two inventory names for one machine share its ports."""
    used: dict[str, dict[int, str]] = {}
    kinds: dict[str, dict[int, str]] = {}
    for name, host in hosts.items():
        taken = used.setdefault(inv.hosts[name].address_key, {})
        owner = kinds.setdefault(inv.hosts[name].address_key, {})  # what listens there: "http", "watchdog", ...
        for svc in host.services:
            for what, port in svc.listens.items():
                if port in taken:
                    errors.add(f"port {port} is used twice on address {inv.hosts[name].address}: {taken[port]} and "
                               f"{svc.name} {what}", group=svc.role, host=name,
                               variable=_PORT_VARIABLES.get(what, _PORT_VARIABLES.get(owner.get(port, ""), "port")))
                owner.setdefault(port, what)
                taken.setdefault(port, f"{svc.name} {what} of host '{name}'")


def _check_secret_flags(secret_flags: Mapping[str, list[str]], specs: Mapping[str, RoleSpec],
                        releases: Mapping[str, str], errors: Collector) -> None:
    """A secret flag is an option of the chosen release, and not also given in the clear."""
    tables = load_release_tables()
    for role, flags in secret_flags.items():
        package = "sglang_router" if role == "router" else "sglang"
        table = tables[package]
        accepted = table.flags(releases[package]) if table.known(releases.get(package, "")) else None
        for flag in flags:
            where = f"sglang_secrets.{role}.{flag}"
            if accepted is not None and flag not in accepted:
                errors.add(f"{table.package} {releases[package]} has no option {flag}{_did_you_mean(flag, accepted)}",
                           group=role, variable=where)
            if role in specs and flag in specs[role].args:
                errors.add(f"{flag} is also set in the profile or sglang_overrides: give it in one place",
                           group=role, variable=where)


def _did_you_mean(flag: str, accepted: frozenset[str]) -> str:
    """The hint naming the release's nearest option to an unknown one ("; did you mean --x?"), empty when none is
    close (as for a misspelt variable, plugin_utils/plan/_settings.py)."""
    hint = contract.nearest(flag, accepted)
    return f"; did you mean {hint}?" if hint else ""


def _render_for_releases(profile: Profile, inv: Inventory, specs: dict[str, RoleSpec],
                         overrides: Mapping[str, Any], errors: Collector
                         ) -> tuple[dict[str, str], dict[str, list[str]], list[dict[str, str]]]:
    """Pick each package's release (profile target, or the inventory's override) and rewrite the
    documented flags of every role into that release's spelling, in place in ``specs``."""
    tables = load_release_tables()
    releases: dict[str, str] = {}
    supported: dict[str, list[str]] = {}
    changes: list[dict[str, str]] = []
    for package, variable, roles in (("sglang", "sglang_release", profile.server_roles),
                                     ("sglang_router", "sglang_router_release", ("router",))):
        table = tables[package]
        present = [r for r in roles if r in specs]
        flags = set().union(set(), *(tokens(specs[r].args) for r in present))
        supported[package] = table.supported(flags)
        chosen = str(inv.variables.get(variable) or profile.releases.get(package) or table.reference)
        releases[package] = chosen
        if not table.known(chosen):
            errors.add(f"{table.package} {chosen} is not a release this collection renders for; profile "
                       f"'{profile.id}' supports: {', '.join(supported[package])}", variable=variable)
            continue
        accepted = table.flags(chosen)
        for role in present:
            args, notes = table.apply(role, specs[role].args, chosen, variable, errors)
            specs[role] = dataclasses.replace(specs[role], args=args)
            changes += notes
            overridden = (overrides.get(role) or {}).get("args") or {} if isinstance(overrides.get(role), Mapping) else {}
            for flag in args:
                if flag not in accepted:
                    where = f"sglang_overrides.{role}.args.{flag}" if flag in overridden else f"roles.{role}.args.{flag}"
                    errors.add(f"{table.package} {chosen} has no option {flag}"
                               f"{_did_you_mean(flag, accepted) or ' (a typo, or a flag of another release?)'}",
                               group=role, variable=where)
    return releases, supported, changes


def _bench(profile: Profile, inv: Inventory, router_hosts: list[str], router_spec: RoleSpec | None,
           instances: Mapping[str, list[Instance]], python: str) -> dict[str, Any] | None:
    """The documented benchmark, aimed at the deployment's entry point."""
    if not profile.bench_args:
        return None
    if router_hosts and router_spec is not None:
        host, port = router_hosts[0], router_spec.port
        bind = str(router_spec.args.get("--host", "127.0.0.1"))
        address = "127.0.0.1" if bind in ("0.0.0.0", "::") else bind
    else:
        first = instances["mixed"][0]
        host, port, address = first.rank0.name, profile.roles["mixed"].port, first.rank0.address
    values = {"entry_host": address, "entry_port": port}
    flags = render_flags(profile.bench_args, values, {})
    # The structured form is what the operator's overrides apply to (module_utils/bench/_bench.py); argv, shown to the
    # operator, is built from it.
    return {"host": host, "address": address, "port": port, "python": python, "module": BENCH_MODULE,
            "flags": flags, "argv": bench_argv(python, BENCH_MODULE, flags), "container": None}


def bench_argv(python: str, module: str, flags: list[list[Any]]) -> list[str]:
    """The benchmark's command of its structured form: ``python -m module`` and the flags in order."""
    return [python, "-m", module] + flat(flags)
