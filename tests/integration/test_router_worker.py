"""The sglang_router_worker module against the real sglang-router 0.3.0 on loopback.

Two stand-in servers (tests/standins, prefill and decode) and the real router (installed by
tests/validation/setup_parsers.sh under .cache/parsers/router-0.3.0) listen on 127.0.0.1 only. The module
takes the prefill worker out and puts it back, twelve times over. The router itself fails a share of these
changes, more of them the busier the machine (see plugins/module_utils/http/_router_workers.py), some after the change took
effect. What must hold whatever the share: every change ends in the wanted state, every job failure the
router logs is one the module reported (it waits for each of its jobs to settle), and the router still
routes requests to the worker at the end.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path

import pytest
from local import free_ports, stop_processes
from test_playbooks import adhoc

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _settings as table

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
ROUTER_PYTHON = ROOT / ".cache" / "parsers" / "router-0.3.0" / "bin" / "python"
STANDIN = ROOT / "tests" / "standins" / "sglang" / "sglang" / "launch_server.py"
CYCLES = 12
pytestmark = pytest.mark.ansible


def get_json(url: str) -> tuple[int, dict]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=5) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        return e.code, {}
    except ValueError:  # not JSON
        return 200, {}
    except OSError:
        return -1, {}


def post_json(url: str, body: dict) -> tuple[int, dict]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with opener.open(req, timeout=30) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        return e.code, {}


def wait_for(what: str, check, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.3)
    raise AssertionError(f"{what} not reached within {seconds} s")


@pytest.fixture(scope="module")
def pd_router(tmp_path_factory):
    if not ROUTER_PYTHON.exists():
        if os.environ.get("SGLANG_PARSERS_REQUIRED") == "1":
            pytest.fail(f"sglang-router 0.3.0 is not installed in {ROUTER_PYTHON.parent.parent}: run "
                        "tests/validation/setup_parsers.sh")
        pytest.skip("sglang-router 0.3.0 not installed (tests/validation/setup_parsers.sh)")
    state = tmp_path_factory.mktemp("standin")
    env = dict(os.environ, SGLANG_STANDIN_STATE_DIR=str(state), SGLANG_STANDIN_STARTUP_DELAY="0",
               NO_PROXY="*", no_proxy="*")
    # The router's Prometheus exporter too: its default (0.0.0.0:29000) is taken by any other router on the machine.
    p_port, d_port, boot, r_port, m_port = free_ports(5)
    procs = [
        subprocess.Popen([sys.executable, str(STANDIN), "--host", "127.0.0.1", "--port", str(p_port),
                          "--disaggregation-mode", "prefill", "--disaggregation-bootstrap-port", str(boot)],
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
        subprocess.Popen([sys.executable, str(STANDIN), "--host", "127.0.0.1", "--port", str(d_port),
                          "--disaggregation-mode", "decode"],
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
    ]
    log = open(state / "router.log", "w")
    procs.append(subprocess.Popen(
        [str(ROUTER_PYTHON), "-m", "sglang_router.launch_router", "--pd-disaggregation", "--policy", "round_robin",
         "--prefill", f"http://127.0.0.1:{p_port}", str(boot), "--decode", f"http://127.0.0.1:{d_port}",
         "--host", "127.0.0.1", "--port", str(r_port), "--prometheus-host", "127.0.0.1",
         "--prometheus-port", str(m_port)],
        env=env, stdout=log, stderr=subprocess.STDOUT))
    base = f"http://127.0.0.1:{r_port}"
    log_path = state / "router.log"

    def started() -> bool:
        for proc in procs:  # a process that died (a port taken meanwhile, say) is named at once, with the log
            if proc.poll() is not None:
                raise AssertionError(f"{proc.args} exited with {proc.returncode}; router log:\n"
                                     + router_log(log_path)[-3000:])
        # Both start-up registrations ended, either way (the router role's way of making a failed one good
        # follows).
        events = router_events(log_path)
        return get_json(base + "/health")[0] == 200 and events["started"] >= 2 and \
            events["started"] == events["completed"] + events["failed"]

    try:
        # Bounded generously: a busy 2-core machine starts the router in seconds, but the bound is no measurement.
        wait_for("the router's start-up registrations settled", started, seconds=300)
        # A start-up registration the router failed is made good the way the router role does it.
        for url, kind, port in ((f"http://127.0.0.1:{p_port}", "prefill", boot), (f"http://127.0.0.1:{d_port}", "decode", None)):
            res = run_module({"router_url": base, "url": url, "worker_type": kind, "bootstrap_port": port})
            assert not res.get("failed"), res
        yield {"base": base, "prefill": f"http://127.0.0.1:{p_port}", "decode": f"http://127.0.0.1:{d_port}",
               "bootstrap_port": boot, "log": log_path,
               "prefill_requests": state / f"pid-{procs[0].pid}.requests.jsonl"}
    finally:
        stop_processes(procs)
        log.close()


def router_log(log: Path) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", log.read_text(errors="replace"))  # without colours


def failed_jobs(log: Path) -> list[str]:
    """The router's "Failed job" lines, worded as the module reports them ("<type> failed: <message>")."""
    return [f"{kind} failed: {message}"
            for kind, message in re.findall(r"Failed job: type=(\w+), worker=\S+, error=(.*)$", router_log(log), re.M)]


def router_events(log: Path) -> dict[str, int]:
    """Counts of the router's workflow events (sglang-router 0.3.0 log lines)."""
    text = router_log(log)
    return {"started": text.count("Workflow started"), "completed": text.count("Workflow completed"),
            "failed": len(re.findall(r"ERROR .*Workflow failed", text)),
            "failed_jobs": text.count("Failed job: type=")}


def workflows_settled(log: Path) -> bool:
    """Every workflow the router started has completed or failed, and each failure was logged as a failed job."""
    ev = router_events(log)
    return ev["started"] == ev["completed"] + ev["failed"] == ev["completed"] + ev["failed_jobs"]


# The table's default of sglang_restart_router_timeout, which restart.yml passes as wait_timeout.
WAIT_TIMEOUT = table.BY_NAME["sglang_restart_router_timeout"].default


def run_module(args: dict, check: bool = False, module: str = "sglang_router_worker") -> dict:
    if module == "sglang_router_worker":
        args = {"wait_timeout": WAIT_TIMEOUT, **args}  # required: the playbooks pass the plan's value
    return adhoc(module, args, *(["--check"] if check else []))


def test_out_and_back_in_repeatedly(pd_router, tmp_path) -> None:
    failed_before = len(failed_jobs(pd_router["log"]))
    # One playbook, one task looping over the changes: each result is the module's, in order.
    out = tmp_path / "results.json"
    (tmp_path / "cycle.yml").write_text(json.dumps([{
        "hosts": "localhost", "gather_facts": False, "connection": "local",
        "vars": {"ansible_python_interpreter": sys.executable},
        "tasks": [
            {"name": "Out and back in", "register": "r", "loop": ["absent", "present"] * CYCLES,
             "ascend.sglang.sglang_router_worker": {
                 "router_url": pd_router["base"], "url": pd_router["prefill"], "worker_type": "prefill",
                 "bootstrap_port": pd_router["bootstrap_port"], "state": "{{ item }}",
                 "wait_timeout": WAIT_TIMEOUT}},
            {"name": "Save", "ansible.builtin.copy": {"content": "{{ r.results | to_json }}", "dest": str(out),
                                                      "mode": "0644"}},
        ]}]))
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", NO_PROXY="*", no_proxy="*")
    proc = subprocess.run([str(BIN / "ansible-playbook"), "-i", "localhost,", str(tmp_path / "cycle.yml")], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=1800, check=False)
    log = pd_router["log"]
    assert proc.returncode == 0, proc.stdout[-4000:] + log.read_text(errors="replace")[-3000:]
    results = json.loads(out.read_text())
    assert [r["item"] for r in results] == ["absent", "present"] * CYCLES
    reported = []
    for n, res in enumerate(results):
        # Every change was sent, ended in the wanted state, and needed a submission per reported failure at most
        # (a removal that failed after it took effect needs none).
        assert res["changed"] and 1 <= res["attempts"] and len(res["job_failures"]) <= res["attempts"], (n, res)
        reported += res["job_failures"]
        if res["item"] == "absent":
            assert res["worker"] == {}, (n, res)
        else:
            worker = res["worker"]
            assert worker["is_healthy"] and worker["worker_type"] == "prefill", (n, res)
            assert worker["bootstrap_port"] == pd_router["bootstrap_port"], (n, res)
    listed = {w["url"]: w for w in get_json(pd_router["base"] + "/workers")[1]["workers"]}
    assert listed[pd_router["prefill"]]["is_healthy"] and len(listed) == 2
    # The module returned only once its jobs had settled: nothing of this run can still be in the router's hands.
    assert workflows_settled(log), router_events(log)
    # Every job the router logged as failed is one the module reported, but for a removal that failed after the
    # worker left the registry: the API answers GET /workers/{id} for it with 404, as for a removal that completed
    # (the worker is gone; only the other workers' cache-aware policies were not re-initialised).
    logged = failed_jobs(log)[failed_before:]
    invisible = "RemoveWorker failed: Workflow failed at step remove_from_worker_registry"
    assert Counter(m for m in logged if not m.startswith(invisible)) == \
        Counter(m for m in reported if not m.startswith(invisible)), (logged, reported)
    assert Counter(m for m in reported if m.startswith(invisible)) <= Counter(logged), (logged, reported)
    # And the router still routes to the worker it lost and got back every time.
    before = len(pd_router["prefill_requests"].read_text().splitlines()) if pd_router["prefill_requests"].exists() else 0
    status, answer = post_json(pd_router["base"] + "/generate", {"text": "ping", "sampling_params": {"max_new_tokens": 4}})
    assert status == 200 and answer.get("text"), (status, answer)
    wait_for("the prefill worker's share of that request",
             lambda: len(pd_router["prefill_requests"].read_text().splitlines()) == before + 1, seconds=30)
    print(f"{len(results)} changes; router job failures: {len(logged)} logged, {len(reported)} reported and handled")


def test_nothing_to_do_is_not_a_change(pd_router) -> None:
    common = {"router_url": pd_router["base"], "url": pd_router["prefill"], "worker_type": "prefill",
              "bootstrap_port": pd_router["bootstrap_port"]}
    res = run_module(dict(common, state="present"))
    assert not res.get("failed") and not res["changed"] and res["attempts"] == 0
    res = run_module(dict(common, state="absent"), check=True)
    assert not res.get("failed") and res["changed"] and res["attempts"] == 0
    assert pd_router["prefill"] in {w["url"] for w in get_json(pd_router["base"] + "/workers")[1]["workers"]}


def test_several_workers_in_one_call(pd_router) -> None:
    # What the router role sends: every planned instance, one call per router, one look at its list first.
    both = [{"url": pd_router["prefill"], "worker_type": "prefill", "bootstrap_port": pd_router["bootstrap_port"]},
            {"url": pd_router["decode"], "worker_type": "decode"}]
    common = {"router_url": pd_router["base"], "workers": both}
    res = run_module(dict(common, state="present"))
    assert not res.get("failed") and not res["changed"] and res["attempts"] == 0, res
    assert [w["url"] for w in res["workers"]] == [pd_router["prefill"], pd_router["decode"]]
    res = run_module(dict(common, state="absent"))
    assert not res.get("failed") and res["changed"] and res["workers"] == [{}, {}], res
    assert res["attempts"] >= 2  # one removal each, more when the router failed a job
    assert get_json(pd_router["base"] + "/workers")[1]["workers"] == []
    res = run_module(dict(common, state="present"), check=True)
    assert not res.get("failed") and res["changed"] and res["attempts"] == 0, res
    res = run_module(dict(common, state="present"))
    assert not res.get("failed") and res["changed"] and res["attempts"] >= 2, res
    assert [(w["url"], w["is_healthy"], w["worker_type"]) for w in res["workers"]] == [
        (pd_router["prefill"], True, "prefill"), (pd_router["decode"], True, "decode")]
    assert res["workers"][0]["bootstrap_port"] == pd_router["bootstrap_port"]
    assert workflows_settled(pd_router["log"]), router_events(pd_router["log"])
    # Exactly one of url and workers.
    res = run_module(dict(common, url=pd_router["prefill"]))
    assert res.get("failed") and "mutually exclusive" in res["msg"], res


def test_the_routers_health_gate_registers_the_missing_instances_in_the_same_call(pd_router) -> None:
    """sglang_wait_healthy with router_workers, as the router role's health gate runs it: /health, every planned
    instance a healthy worker (a missing one added), then /readiness, in one module call."""
    both = [{"url": pd_router["prefill"], "worker_type": "prefill", "bootstrap_port": pd_router["bootstrap_port"]},
            {"url": pd_router["decode"], "worker_type": "decode"}]
    res = run_module({"router_url": pd_router["base"], "workers": both[:1], "state": "absent"})
    assert not res.get("failed") and res["workers"] == [{}], res
    gate = {"services": [{"name": "sglang-router-i0", "health_url": pd_router["base"] + "/health",
                          "ready_url": pd_router["base"] + "/readiness"}],
            "retries": 60, "delay": 1, "timeout": 10, "readiness": True, "fail_unhealthy": True,
            "router_workers": {"routers": [pd_router["base"]], "workers": both, "wait_timeout": 300}}
    res = run_module(gate, module="sglang_wait_healthy")
    assert not res.get("failed") and res["unhealthy"] == [], res
    got = res["registered"][pd_router["base"]]
    assert res["changed"] and got["changed"] and got["attempts"] >= 1, res
    want = [(pd_router["prefill"], True), (pd_router["decode"], True)]
    assert [(w["url"], w["is_healthy"]) for w in got["workers"]] == want
    assert res["services"]["sglang-router-i0"]["url"].endswith("/readiness")
    # Every instance listed: nothing sent, no change.
    again = run_module(gate, module="sglang_wait_healthy")
    assert not again.get("failed") and not again["changed"] and again["registered"][pd_router["base"]]["attempts"] == 0
    # Check mode asks nothing of the router.
    checked = run_module(gate, check=True, module="sglang_wait_healthy")
    assert "registered" not in checked and not checked["changed"], checked
    assert workflows_settled(pd_router["log"]), router_events(pd_router["log"])


def test_the_routers_health_gate_applies_the_planned_list_whole(pd_router) -> None:
    """With prune (the router role's gate): a worker the plan no longer has is taken out of the real router in the
    same call, after the planned ones are listed and healthy; the router routes to the planned ones. Then the
    instance is planned again and comes back (the router was never restarted)."""
    both = [{"url": pd_router["prefill"], "worker_type": "prefill", "bootstrap_port": pd_router["bootstrap_port"]},
            {"url": pd_router["decode"], "worker_type": "decode"}]
    gate = {"services": [{"name": "sglang-router-i0", "health_url": pd_router["base"] + "/health",
                          "ready_url": pd_router["base"] + "/readiness"}],
            "retries": 60, "delay": 1, "timeout": 10, "readiness": False, "fail_unhealthy": True,
            "router_workers": {"routers": [pd_router["base"]], "workers": both, "wait_timeout": 300, "prune": True}}
    res = run_module(gate, module="sglang_wait_healthy")
    assert not res.get("failed") and res["registered"][pd_router["base"]]["removed"] == [], res
    # The decode instance leaves the plan: the gate takes it out of the router.
    smaller = dict(gate, router_workers=dict(gate["router_workers"], workers=both[:1]))
    res = run_module(smaller, module="sglang_wait_healthy")
    got = res["registered"][pd_router["base"]]
    assert not res.get("failed") and res["changed"] and got["removed"] == [pd_router["decode"]], res
    assert [w["url"] for w in get_json(pd_router["base"] + "/workers")[1]["workers"]] == [pd_router["prefill"]]
    # Planned again: back in, nothing taken out.
    res = run_module(gate, module="sglang_wait_healthy")
    got = res["registered"][pd_router["base"]]
    assert not res.get("failed") and got["removed"] == [] and [w["is_healthy"] for w in got["workers"]] == [True, True]
    assert workflows_settled(pd_router["log"]), router_events(pd_router["log"])


def test_a_mini_lb_style_router_without_worker_api_is_named(tmp_path) -> None:
    # Any HTTP server without /workers stands for a --mini-lb router here: the module must say so.
    [port] = free_ports(1)
    srv = subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(port)], cwd=tmp_path,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for("http.server", lambda: get_json(f"http://127.0.0.1:{port}/")[0] in (200, 404))
        res = run_module({"router_url": f"http://127.0.0.1:{port}", "url": "http://127.0.0.1:1", "state": "absent"})
        assert res.get("failed") and "has no worker API" in res["msg"]
    finally:
        srv.terminate()
        srv.wait(timeout=10)
