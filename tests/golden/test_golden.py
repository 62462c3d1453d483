"""Golden tests: every profile renders exactly what its documented script runs.

For each profile the documented bash script is executed (see seeddoc.py) once per host
of an inventory shaped like the documented one, after the profile's recorded deviations
were applied to the seed text; the planner renders the same inventory.  Every server
argv, environment, sourced CANN script, PATH prefix, sysctl and the router and
benchmark argv must then be equal, flag by flag.
"""

from __future__ import annotations

import pytest

import seeddoc as sd
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _planner, _profile, _topology
from ansible_collections.ascend.sglang.plugins.plugin_utils.importer._import_script import (
    HostRun, Launch, Layout, bench_argv, flag_groups, substitute_placeholders)

# The January documents' profiles (the seeds' sections); the current pages' are checked against the pages
# (test_upstream_pages.py).
PROFILES = [p for p in _profile.available_profiles()
            if _profile.load_profile(p).generation == _profile.FIRST_GENERATION]
SECTIONS = {s.title: s for s in sd.load_sections()}
ALIASES = {"deepseek_r1_pd32"}


def golden_layout(profile: _profile.Profile) -> Layout:
    lay = Layout(prefill=[], decode=[], mixed=[], router=None)
    for role, prefix in (("prefill", "10.0.1"), ("decode", "10.0.2"), ("mixed", "10.0.3")):
        spec = profile.roles.get(role)
        if not spec:
            continue
        count = spec.nnodes * spec.documented_instances
        # Documented single-host PD-mixed servers bind and are benchmarked on loopback.
        hosts = ["127.0.0.1"] if role == "mixed" and count == 1 else [f"{prefix}.{i + 1}" for i in range(count)]
        setattr(lay, role, hosts)
        setattr(lay, f"{role}_nnodes", spec.nnodes)
    if profile.deploy_mode == "pd_separation":
        lay.router = "10.0.9.1"
    return lay


def golden_inventory(lay: Layout, server_vars: dict | None = None,
                     deployment_vars: dict | None = None) -> _topology.Inventory:
    """The documented layout as an inventory; ``server_vars``: more variables of every server host;
    ``deployment_vars``: more variables of the deployment."""
    groups: dict[str, list[str]] = {"prefill": [], "decode": [], "mixed": [], "router": []}
    hostvars: dict[str, dict[str, str]] = {}
    for role in ("prefill", "decode", "mixed"):
        # The documents set lo on a single node and the host's NIC across nodes: an operator who gives no
        # sglang_nic on a single-node host gets lo; one given is used (test_planner.py).
        nic = {"sglang_nic": lay.nic} if getattr(lay, f"{role}_nnodes") > 1 else {}
        for i, address in enumerate(getattr(lay, role)):
            name = f"{role}{i}"
            groups[role].append(name)
            hostvars[name] = {"ansible_host": f"192.0.2.{len(hostvars) + 1}", "sglang_host_ip": address,
                              **nic, **(server_vars or {})}
    if lay.router:
        groups["router"].append("router0")
        hostvars["router0"] = {"sglang_host_ip": lay.router}
    variables = {"sglang_model_path": lay.model_path, "sglang_draft_model_path": lay.draft_model_path,
                 "sglang_init_expert_location": "/models/expert_distribution.pt", **(deployment_vars or {})}
    return _topology.build_inventory(groups, hostvars, variables)


def seed_fixes(profile: _profile.Profile, part: str) -> list[tuple[str, str]]:
    return [(d["seed"], d["rendered"]) for d in profile.deviations if d["part"] == part]


def deployment_section(profile: _profile.Profile) -> sd.Section:
    section = SECTIONS[profile.source["section"]]
    if section.reuses_deployment:
        donor = _profile.load_profile(_raw(profile.id)["deployment_from"])
        return SECTIONS[donor.source["section"]]
    return section


def _raw(pid: str) -> dict:
    return _profile._read_yaml(f"{_profile.profiles_dir()}/{pid}.yml")


def seed_runs(profile: _profile.Profile, lay: Layout) -> dict[str, HostRun]:
    section = deployment_section(profile)
    fixed = sd.apply_text_fixes(section.deploy, seed_fixes(profile, "deploy"), profile.id)
    parts = {key: substitute_placeholders(text, lay) for key, text in sd.script_parts(fixed).items()}
    runs = {}
    for role in ("prefill", "decode", "mixed"):
        for address in getattr(lay, role):
            runs[address] = sd.run_script(parts.get(role, parts.get("all")), address)
    if lay.router:
        runs[lay.router] = sd.run_script(parts.get("decode", parts.get("all")), lay.router)
    return runs


def the_launch(run: HostRun, module: str, where: str) -> Launch:
    found = [launch for launch in run.launches if launch.module == module]
    assert len(found) == 1, f"{where}: the documented script launches {len(found)} x {module} on this host"
    return found[0]


# The one deviation every launch gets unless sglang_metrics is false (docs/docsite/rst/monitoring.rst): each server exports
# Prometheus metrics on its port, a Rust router (not the --mini-lb Python balancer, which has no exporter) on its host's
# address at sglang_router_metrics_port (default 29000, the router's own default port).
def metrics_flags(role: str, seed_argv: list[str], address: str) -> list[str]:
    if role != "router":
        return ["--enable-metrics"]
    return [] if "--mini-lb" in seed_argv else ["--prometheus-host", address, "--prometheus-port", "29000"]


@pytest.mark.parametrize("metrics", [True, False], ids=["metrics", "documented"])
@pytest.mark.parametrize("pid", [p for p in PROFILES if p not in ALIASES])
def test_profile_renders_the_documented_commands(pid: str, metrics: bool) -> None:
    """With sglang_metrics false, the documented commands exactly; by default, those plus the metrics flags."""
    profile = _profile.load_profile(pid)
    lay = golden_layout(profile)
    plan = _planner.plan(profile, golden_inventory(lay, deployment_vars={"sglang_metrics": metrics}))
    runs = seed_runs(profile, lay)
    servers = 0
    for host, host_plan in plan.hosts.items():
        for svc in host_plan.services:
            where = f"{pid} {svc.name} on {svc.host}"
            run = runs[svc.host if svc.role != "router" else lay.router]
            if svc.role == "router":
                seed = the_launch(run, "sglang_router.launch_router", where)
                assert svc.argv[1:3] == ["-m", "sglang_router.launch_router"]
                extra = metrics_flags("router", seed.argv, lay.router) if metrics else []
                assert flag_groups(svc.argv[3:]) == flag_groups(seed.argv + extra), where
                # The router gets its own variables only; each must be what the script exports there.
                for key, value in svc.env.items():
                    assert seed.env.get(key) == value, f"{where}: env {key}"
                continue
            servers += 1
            seed = the_launch(run, "sglang.launch_server", where)
            assert svc.argv[1:3] == ["-m", "sglang.launch_server"]
            extra = metrics_flags(svc.role, seed.argv, svc.host) if metrics else []
            assert flag_groups(svc.argv[3:]) == flag_groups(seed.argv + extra), where
            assert svc.env == seed.env, where
            assert host_plan.cann["sources"] == seed.sources, where
            assert sorted(host_plan.cann["unset"]) == sorted(set(seed.unset)), where
            assert host_plan.cann["path_prepend"] == seed.path_prepend, where
            assert host_plan.cann["ld_library_path_prepend"] == seed.ld_library_path_prepend, where
            assert host_plan.host_tuning.get("sysctl", {}) == run.sysctl, where
            assert host_plan.host_tuning.get("cpu_governor") == run.governor, where
    assert servers == sum(len(getattr(lay, r)) for r in ("prefill", "decode", "mixed"))


@pytest.mark.parametrize("pid", [p for p in PROFILES if p not in ALIASES])
def test_bench_is_the_documented_command(pid: str) -> None:
    profile = _profile.load_profile(pid)
    lay = golden_layout(profile)
    plan = _planner.plan(profile, golden_inventory(lay))
    section = SECTIONS[profile.source["section"]]
    seed = bench_argv(substitute_placeholders(
        sd.apply_text_fixes(section.bench, seed_fixes(profile, "bench"), pid), lay))
    assert plan.bench is not None
    assert plan.bench["argv"][1:3] == ["-m", "sglang.bench_serving"]
    assert flag_groups(plan.bench["argv"][3:]) == flag_groups(seed)


def test_every_documented_section_has_one_profile() -> None:
    titles = [_profile.load_profile(p).source["section"] for p in PROFILES if p not in ALIASES]
    assert sorted(titles) == sorted(SECTIONS), "profiles and documented sections differ"
    assert len(titles) == len(set(titles)) == 40


@pytest.mark.parametrize("pid", PROFILES)
def test_deviations_are_recorded_with_reasons(pid: str) -> None:
    raw = _raw(pid)
    for dev in raw.get("deviations") or []:
        assert set(dev) >= {"part", "seed", "rendered", "reason"}, dev
        assert dev["part"] in ("deploy", "bench", "env"), dev
        # An env deviation keeps the documented setting (NAME=value) and says nothing reads it: rendered = seed.
        assert (dev["seed"] == dev["rendered"]) if dev["part"] == "env" else (dev["seed"] != dev["rendered"]), dev
        assert len(dev["reason"].split()) >= 4, f"{pid}: give a real reason for {dev['seed']!r}"
