"""A router with a worker API learns a change of the planned instances through that API, not through a restart
(plugin_utils/plan/_planner.py records which argv tokens list its workers at start, plugin_utils/targets/_host_files.py
writes them to <name>.workers, outside the files whose change restarts it); a --mini-lb router keeps them in its
launcher. Pure Python on real plans; the real launcher and the real decision: tests/integration/test_render_files_deploy.py."""

from __future__ import annotations

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import typed_plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.report import _plan_table
from ansible_collections.ascend.sglang.plugins.plugin_utils.targets._host_files import (
    SERVICE_KINDS, host_files, launch_argv)

from tests.unit.plans import make_plan

PACKED = "qwen3_32b_a3_2c_mixed_3k5_1k5_50ms"  # PD-mixed replicas behind the Rust router (regular mode)
PD_API = "deepseek_r1_a3_16c_pd_3k5_1k5_50ms_2026_11"  # PD separation behind the Rust router
PD_MINI = "deepseek_r1_a3_16c_pd_2k_2k_50ms"  # PD separation behind the mini load balancer


def router_of(plan):
    return next(s for h in plan.hosts.values() for s in h.services if s.role == "router")


def test_the_workers_at_start_are_one_run_of_the_routers_argv() -> None:
    two = typed_plan(make_plan(PACKED, host_vars={"sglang_instances_per_host": 2}, mixed=1, router=1)[1])
    four = typed_plan(make_plan(PACKED, host_vars={"sglang_instances_per_host": 4}, mixed=1, router=1)[1])
    r2, r4 = router_of(two), router_of(four)
    start, end = r2.boot_workers
    assert r2.argv[start:end] == ["--worker-urls", "http://10.0.1.1:7239", "http://10.0.1.1:8239"]
    assert r4.argv[slice(*r4.boot_workers)][0] == "--worker-urls" and len(r4.argv[slice(*r4.boot_workers)]) == 5
    # Outside the run, the two argv are the same: what the launcher holds does not change with the instances.
    assert launch_argv(r2) == launch_argv(r4) and None in launch_argv(r2)
    # PD separation: the prefill (with their bootstrap ports) and decode workers, in the documented order.
    pd = router_of(typed_plan(make_plan(PD_API, prefill=1, decode=1, router=1)[1]))
    assert pd.argv[slice(*pd.boot_workers)] == ["--prefill", "http://10.0.1.1:8000", "8998", "--decode",
                                                "http://10.0.2.1:8001"]
    # --mini-lb has no worker API: its list stays in the launcher.
    mini = router_of(typed_plan(make_plan(PD_MINI, prefill=1, decode=1, router=1)[1]))
    assert mini.mini_lb and mini.boot_workers is None and None not in launch_argv(mini)


def test_the_workers_file_is_outside_the_files_that_restart_the_router() -> None:
    plan = typed_plan(make_plan(PACKED, host_vars={"sglang_instances_per_host": 2}, mixed=1, router=1)[1])
    router = router_of(plan)
    files = {f.kind: f for f in host_files(plan.hosts["router0"], {"sglang_etc_dir": "/e"})}
    workers = files["router_workers"]
    assert "router_workers" not in SERVICE_KINDS and workers.service == router.name
    assert (workers.dir, workers.name, workers.mode) == ("sglang_etc_dir", router.name + ".workers", "0644")
    assert workers.content == "--worker-urls\nhttp://10.0.1.1:7239\nhttp://10.0.1.1:8239\n"
    launcher = files["launcher"].variables
    assert launcher["sglang_tpl_workers_file"] == f"/e/{router.name}.workers"
    assert launcher["sglang_tpl_argv"] == launch_argv(router)
    # The unit's start record does not list it: a changed list leaves no restart pending either.
    assert not [p for p in files["unit"].variables["sglang_tpl_record"]["files"] if p.endswith(".workers")]


def test_the_plan_says_how_a_change_of_instances_reaches_each_router() -> None:
    api = typed_plan(make_plan(PACKED, host_vars={"sglang_instances_per_host": 2}, mixed=1, router=1)[1])
    mini = typed_plan(make_plan(PD_MINI, prefill=1, decode=1, router=1)[1])
    assert [r["membership"] for r in _plan_table.routers(api)] == ["api"]
    assert [r["membership"] for r in _plan_table.routers(mini)] == ["restart"]
    assert "a change of instances goes through its worker API, no restart" in _plan_table.lines(api)[-1]
    assert "a change of instances restarts it" in _plan_table.lines(mini)[-1]
