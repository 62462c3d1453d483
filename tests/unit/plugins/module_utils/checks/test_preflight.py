"""Preflight / doctor for one host: what the host probe must look at (requirements) and every check together
(check_host) on healthy hosts, by mode.  Pure Python, no host, no Ansible.

Host plans come from the real planner; observed facts from the npu-smi fixtures plus hand-made values
(tests/unit/preflight_hosts.py). Each check family has its own tests (test_npu_checks.py, test_software_checks.py,
test_file_checks.py, test_network_checks.py, test_doctor_checks.py, test_fabric_checks.py); the aggregated table
is the controller's (tests/unit/plugins/plugin_utils/report/test_preflight_report.py).
"""

from __future__ import annotations

import pytest

from ansible_collections.ascend.sglang.plugins.module_utils.checks._preflight import check_host, requirements
from ansible_collections.ascend.sglang.tests.unit.plans import make_plan
from ansible_collections.ascend.sglang.tests.unit.preflight_hosts import ctx_of, healthy, problems


def test_requirements_probe_rank0_endpoints_only_from_peers(pd32):
    profile, p = pd32
    ctx = ctx_of(profile, p)
    decode1 = requirements(p["hosts"]["decode1"], ctx)
    decode0 = requirements(p["hosts"]["decode0"], ctx)
    prefill0 = requirements(p["hosts"]["prefill0"], ctx)
    assert {(t["address"], t["port"]) for t in decode1["probes"]} == {("10.0.2.1", 5000), ("10.0.1.1", 24669)}
    assert {(t["address"], t["port"]) for t in decode0["probes"]} == {("10.0.1.1", 24669)}
    assert prefill0["probes"] == []  # the store is its own
    assert set(prefill0["ports"]) == {8000, 8998, 24669}
    # make_plan gives every host sglang_nic: the single-node prefill rank runs HCCL/GLOO on it too.
    assert decode1["nics"] == ["ens1"] and prefill0["nics"] == ["ens1"]
    assert "/models/m/quant_model_description.json" in prefill0["paths"]
    router = requirements(p["hosts"]["router0"], ctx)
    assert router["npu"] is False and [r["package"] for r in router["runtimes"]] == ["sglang-router"]


@pytest.mark.parametrize("host", ["prefill0", "prefill1", "decode0", "decode1", "router0"])
def test_healthy_a3_hosts_pass(pd32, host):
    profile, p = pd32
    ctx = ctx_of(profile, p)
    findings = check_host(host, p["hosts"][host], healthy(p["hosts"][host], ctx), ctx)
    assert problems(findings) == []
    assert findings and all(f.host == host for f in findings)


def test_healthy_a2_host_passes(a2mixed):
    profile, p = a2mixed
    ctx = ctx_of(profile, p)
    obs = healthy(p["hosts"]["mixed0"], ctx, "a2_910b3_x8_healthy.txt")
    assert problems(check_host("mixed0", p["hosts"]["mixed0"], obs, ctx)) == []


def test_runtime_installed_by_the_roles_is_not_checked_before_start():
    """With sglang_server_install the role installs the runtime after preflight: only looked at (the install's
    decision), no failure."""
    import dataclasses as _dc

    from ansible_collections.ascend.sglang.plugins.module_utils.checks import _preflight as pf

    argv = ["/opt/sglang/bin/python3", "-m", "sglang.launch_server"]
    host_plan = {"services": [{"name": "sglang-mixed-i0-r0", "role": "mixed", "argv": argv, "python": argv[0]}]}
    ctx = pf.Context(releases={"sglang": "0.5.7"}, installed_by_roles=frozenset({"sglang"}))
    assert [r["distributions"] for r in pf.requirements(host_plan, ctx)["runtimes"]] == [True]
    doctor = _dc.replace(ctx, mode="doctor")
    assert [r["package"] for r in pf.requirements(host_plan, doctor)["runtimes"]] == ["sglang"]


def test_a_stack_the_roles_install_is_looked_at_in_its_virtualenv_and_checked_as_stack_mode_would():
    """Preflight on a host whose sglang the roles install: the server interpreter is probed with every installed
    distribution (deploy.yml's stack play leaves the host out where nothing is to install), its stack checked as
    stack mode does, apart from preflight's own findings."""
    import dataclasses

    from ansible_collections.ascend.sglang.plugins.module_utils.checks import _preflight as pf

    argv = ["/opt/sglang/bin/python3", "-m", "sglang.launch_server"]
    service = {"name": "sglang-mixed-i0-r0", "role": "mixed", "argv": argv, "python": argv[0]}
    host_plan = {"services": [service]}
    ctx = pf.Context(releases={"sglang": "0.5.7"}, installed_by_roles=frozenset({"sglang"}))
    req = pf.requirements(host_plan, ctx)
    assert [(r["python"], r["distributions"]) for r in req["runtimes"]] == [("/opt/sglang/bin/python3", True)]
    stack = {"python": "3.11.6", "packages": {"sglang": {"distribution": "sglang", "version": "0.5.7"}},
             "runtime": {"imports": {"torch": "ModuleNotFoundError: No module named 'torch'"}}, "error": None}
    observed = {"runtimes": {req["runtimes"][0]["key"]: {"version": "0.5.7", "error": None, "stack": stack}}}
    # Preflight's findings say the roles install it; the look's are stack mode's (here: torch does not import).
    assert [f.check for f in pf.check_host("h", host_plan, observed, ctx) if f.check.startswith(("runtime", "stack"))
            and f.severity != "ok"] == []
    looked = pf.looked_stack("h", host_plan, req, observed, ctx)
    assert [(f.check, f.severity) for f in looked if f.severity != "ok"] == [("stack_import", "fail")]
    # A stack the roles do not install is preflight's own check (no look apart); doctor looks at none.
    own = dataclasses.replace(ctx, installed_by_roles=frozenset())
    assert [r.get("distributions") for r in pf.requirements(host_plan, own)["runtimes"]] == [None]
    assert pf.looked_stack("h", host_plan, pf.requirements(host_plan, own), observed, own) is None
    doctor = dataclasses.replace(ctx, mode="doctor")
    assert pf.looked_stack("h", host_plan, pf.requirements(host_plan, doctor), observed, doctor) is None


def test_the_fabric_is_looked_at_where_services_talk_to_other_hosts(pd32):
    """PD servers and ranks of multi-node instances: their NPUs' NICs with the enabled queries; routers and single-node
    mixed servers: none. Off checks are not asked; stack mode looks at the stack alone."""
    profile, p = pd32
    ctx = ctx_of(profile, p)
    req = requirements(p["hosts"]["decode1"], ctx)
    assert req["fabric"] == {"devices": list(range(16)), "queries": ["link", "net_health", "ip", "tls"]}
    assert req["weights"] == {"paths": ["/models/m"], "full": False}
    assert requirements(p["hosts"]["router0"], ctx)["fabric"] is None
    some_off = ctx_of(profile, p, preflight={"checks": {"npu_tls": "off", "npu_link": "off"}, "weights": "full"})
    req = requirements(p["hosts"]["prefill0"], some_off)
    assert req["fabric"]["queries"] == ["net_health", "ip"] and req["weights"]["full"]
    assert "fabric" not in requirements(p["hosts"]["decode1"], ctx_of(profile, p, mode="stack"))
    mixed_profile, mixed = make_plan("qwen3_32b_a3_2c_mixed_2k_2k_50ms", mixed=1, router=1)
    assert requirements(mixed["hosts"]["mixed0"], ctx_of(mixed_profile, mixed))["fabric"] is None
