"""The sglang_router_worker module against the real sglang-router 0.3.0 on loopback.

Two stand-in servers (tests/standins, prefill and decode) and the real router (installed by
tests/validation/setup_parsers.sh under .cache/parsers/router-0.3.0) listen on 127.0.0.1 only. The module
takes the prefill worker out and puts it back, thirty times over. The router itself fails some of these
changes (measured: 3 in 100 on loopback, 1 in 10 in the Molecule containers; see
plugins/module_utils/_ops.py): every failure it logs must have been resubmitted by the module.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
ROUTER_PYTHON = ROOT / ".cache" / "parsers" / "router-0.3.0" / "bin" / "python"
STANDIN = ROOT / "tests" / "standins" / "sglang" / "sglang" / "launch_server.py"
CYCLES = 30
pytestmark = pytest.mark.ansible


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
    p_port, d_port, boot, r_port = free_port(), free_port(), free_port(), free_port()
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
         "--host", "127.0.0.1", "--port", str(r_port)],
        env=env, stdout=log, stderr=subprocess.STDOUT))
    base = f"http://127.0.0.1:{r_port}"
    try:
        wait_for("both workers listed healthy",
                 lambda: [w.get("is_healthy") for w in get_json(base + "/workers")[1].get("workers", [])] == [True, True])
        yield {"base": base, "prefill": f"http://127.0.0.1:{p_port}", "bootstrap_port": boot, "log": state / "router.log"}
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        log.close()


def run_module(args: dict, check: bool = False) -> dict:
    # Ad-hoc output with the minimal callback: "localhost | STATUS => {module result as JSON}".
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_LOAD_CALLBACK_PLUGINS="1",
               ANSIBLE_STDOUT_CALLBACK="ansible.builtin.minimal", NO_PROXY="*", no_proxy="*")
    proc = subprocess.run([str(BIN / "ansible"), "localhost", "-c", "local", "-m", "ascend.sglang.sglang_router_worker",
                           "-a", json.dumps(args)] + (["--check"] if check else []), cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    head, sep, body = proc.stdout[proc.stdout.rfind("localhost | "):].partition(" => ")
    assert sep and head.startswith("localhost |"), f"unexpected ansible output: {proc.stdout[-2000:]}{proc.stderr[-2000:]}"
    result = json.loads(body)
    result["failed"] = "FAILED" in head
    return result


def test_out_and_back_in_repeatedly(pd_router, tmp_path) -> None:
    # One playbook, one task looping over the changes: each result is the module's, in order.
    out = tmp_path / "results.json"
    (tmp_path / "cycle.yml").write_text(json.dumps([{
        "hosts": "localhost", "gather_facts": False, "connection": "local",
        "vars": {"ansible_python_interpreter": sys.executable},
        "tasks": [
            {"name": "Out and back in", "register": "r", "loop": ["absent", "present"] * CYCLES,
             "ascend.sglang.sglang_router_worker": {
                 "router_url": pd_router["base"], "url": pd_router["prefill"], "worker_type": "prefill",
                 "bootstrap_port": pd_router["bootstrap_port"], "wait_timeout": 60, "state": "{{ item }}"}},
            {"name": "Save", "ansible.builtin.copy": {"content": "{{ r.results | to_json }}", "dest": str(out),
                                                      "mode": "0644"}},
        ]}]))
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", NO_PROXY="*", no_proxy="*")
    proc = subprocess.run([str(BIN / "ansible-playbook"), "-i", "localhost,", str(tmp_path / "cycle.yml")], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=900)
    log = pd_router["log"].read_text()
    assert proc.returncode == 0, proc.stdout[-4000:] + log[-3000:]
    results = json.loads(out.read_text())
    assert [r["item"] for r in results] == ["absent", "present"] * CYCLES
    resubmitted = []
    for n, res in enumerate(results):
        assert res["changed"] and res["attempts"] == len(res["job_failures"]) + 1, (n, res)
        resubmitted += res["job_failures"]
        if res["item"] == "absent":
            assert res["worker"] == {}, (n, res)
        else:
            worker = res["worker"]
            assert worker["is_healthy"] and worker["worker_type"] == "prefill", (n, res)
            assert worker["bootstrap_port"] == pd_router["bootstrap_port"], (n, res)
    listed = {w["url"]: w for w in get_json(pd_router["base"] + "/workers")[1]["workers"]}
    assert listed[pd_router["prefill"]]["is_healthy"] and len(listed) == 2
    # Every job the router logged as failed was reported to the module and submitted again.
    router_failures = log.count("Failed job: type=")
    assert router_failures == len(resubmitted), (router_failures, resubmitted)
    assert all(m.startswith(("AddWorker failed", "RemoveWorker failed")) for m in resubmitted), resubmitted
    print(f"{len(results)} changes, {len(resubmitted)} resubmitted after a router-side failure")


def test_nothing_to_do_is_not_a_change(pd_router) -> None:
    common = {"router_url": pd_router["base"], "url": pd_router["prefill"], "worker_type": "prefill",
              "bootstrap_port": pd_router["bootstrap_port"]}
    res = run_module(dict(common, state="present"))
    assert not res.get("failed") and not res["changed"] and res["attempts"] == 0
    res = run_module(dict(common, state="absent"), check=True)
    assert not res.get("failed") and res["changed"] and res["attempts"] == 0
    assert pd_router["prefill"] in {w["url"] for w in get_json(pd_router["base"] + "/workers")[1]["workers"]}


def test_a_mini_lb_style_router_without_worker_api_is_named(tmp_path) -> None:
    # Any HTTP server without /workers stands for a --mini-lb router here: the module must say so.
    port = free_port()
    srv = subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(port)], cwd=tmp_path,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for("http.server", lambda: get_json(f"http://127.0.0.1:{port}/")[0] in (200, 404))
        res = run_module({"router_url": f"http://127.0.0.1:{port}", "url": "http://127.0.0.1:1", "state": "absent"})
        assert res.get("failed") and "has no worker API" in res["msg"]
    finally:
        srv.terminate()
        srv.wait(timeout=10)
