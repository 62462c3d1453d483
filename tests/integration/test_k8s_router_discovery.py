"""The exported router finds its workers by label: the real sglang-router 0.3.0 (tests/validation/setup_parsers.sh
installs it under .cache/parsers/router-0.3.0) started with the exported arguments, against a stand-in of the
Kubernetes API's pod list and watch (tests/support/k8s_api.py, loopback only) and stand-in servers
(tests/standins/sglang) at the pods' addresses (127.0.0.x: each pod has an IP of its own, all on loopback).

The pods are the Pods the workload makes of the exported templates (their labels and annotations as exported),
Running and Ready; the test adds and deletes them as a scale-up and a scale-down would, and waits (bounded polls,
never a sleep) for the router's ``GET /workers`` to list exactly the leader pods that exist, each prefill worker with
its bootstrap port. The manifests are exported by the real ansible-playbook (values as -e, in all: vars and as host
vars) and read back as kubectl reads them (tests/support/go_yaml.py).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from go_yaml import load as kubectl_load
from k8s_api import PodApi, kubeconfig, running_pod
from k8s_objects import pod_templates
from local import free_ports, stop_processes
from test_playbooks import ansible

ROOT = Path(__file__).resolve().parents[2]
ROUTER_PYTHON = ROOT / ".cache" / "parsers" / "router-0.3.0" / "bin" / "python"
STANDIN = ROOT / "tests" / "standins" / "sglang" / "sglang" / "launch_server.py"
# A PD profile whose documented router has a worker API (no --mini-lb): single-node prefill instances, decode
# instances of 2 nodes (their rank 1 must never become a worker).
PROFILE = "glm_5_1_a3_48c_pd_65k5_1k_prefix90_50ms"
NAMESPACE, NAME, TOKEN = "llm", "glm", "standin-serviceaccount-token"
pytestmark = pytest.mark.ansible


def export(tmp_path: Path, out: Path, port: int, *extra: str) -> dict[str, dict]:
    """The export of PROFILE, each manifest read back as kubectl reads it: {file name: object}."""
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(json.dumps({"all": {
        "vars": {"sglang_k8s_namespace": NAMESPACE, "sglang_model_path": "/models/GLM-5.1"},
        "hosts": {"localhost": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                                # The servers' port (the one the router dials), as a host variable.
                                "sglang_overrides": {"prefill": {"args": {"--port": port}}}}}}}))
    ansible("ansible-playbook", "-i", str(inventory), "ascend.sglang.kubernetes", "-e", f"sglang_k8s_dir={out}",
            "-e", f"sglang_profile={PROFILE}", "-e", f"sglang_k8s_name={NAME}", "-e", "sglang_nic=ens1",
            "-e", "sglang_container_image=lmsysorg/sglang:glm-test", *extra, cwd=tmp_path)
    return {path.name: kubectl_load(path.read_text()) for path in sorted(out.iterdir())}


def get_json(url: str) -> tuple[int, dict]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=5) as answer:
            status, body = answer.status, answer.read()
    except urllib.error.HTTPError as exc:
        return exc.code, {}
    except OSError:
        return -1, {}
    try:
        return status, json.loads(body or b"{}")
    except ValueError:  # /health answers text
        return status, {}


def wait_for(what: str, check, procs, log: Path, seconds: float = 120):
    """A bounded poll: ``check()`` until it is true; a process that exited is named at once with the router's log."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for proc in procs:
            if proc.poll() is not None:
                raise AssertionError(f"{proc.args[:4]} exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        if check():
            return
        time.sleep(0.3)
    raise AssertionError(f"{what} not reached within {seconds} s; router log:\n{log.read_text()[-3000:]}")


def value_after(args: list[str], flag: str) -> str:
    return args[args.index(flag) + 1]


@pytest.fixture
def stack(tmp_path):
    """Starts processes; stops every one of them (and the stand-in API) at the end."""
    procs: list[subprocess.Popen] = []
    apis: list[PodApi] = []
    yield procs, apis
    for api in apis:
        api.stop()
    stop_processes(procs)


def test_the_exported_router_follows_pods_added_and_deleted(tmp_path: Path, stack) -> None:
    if not ROUTER_PYTHON.exists():
        if os.environ.get("SGLANG_PARSERS_REQUIRED") == "1":
            pytest.fail(f"sglang-router 0.3.0 is not installed in {ROUTER_PYTHON.parent.parent}: run "
                        "tests/validation/setup_parsers.sh")
        pytest.skip("sglang-router 0.3.0 not installed (tests/validation/setup_parsers.sh)")
    procs, apis = stack
    worker_port, router_port, metrics_port = free_ports(3)
    objects = export(tmp_path, tmp_path / "k8s", worker_port)
    rbg = objects[f"rolebasedgroup-{NAME}.yaml"]
    router_template = pod_templates([rbg], "rbg", NAME, "router")[0]
    args = list(router_template["spec"]["containers"][0]["args"])
    assert router_template["spec"]["serviceAccountName"] == f"{NAME}-router"
    assert value_after(args, "--service-discovery-namespace") == NAMESPACE
    assert value_after(args, "--service-discovery-port") == str(worker_port)
    # The exported argv after the interpreter, with the router's own listeners on loopback ports of this machine
    # ($(POD_IP) is the pod's address Kubernetes puts in; the ports are the pod's own, taken here).
    router_args = [word.replace("$(POD_IP)", "127.0.0.1") for word in args[1:]]
    router_args[router_args.index("--port") + 1] = str(router_port)
    router_args[router_args.index("--prometheus-port") + 1] = str(metrics_port)

    api = PodApi(NAMESPACE, TOKEN)
    apis.append(api)
    server = api.start()
    token = tmp_path / "token"
    token.write_text(TOKEN)
    token.chmod(0o600)
    config = tmp_path / "kubeconfig"
    config.write_text(kubeconfig(server, str(token), NAMESPACE))
    env = dict(os.environ, KUBECONFIG=str(config), SGLANG_STANDIN_STATE_DIR=str(tmp_path),
               SGLANG_STANDIN_STARTUP_DELAY="0", NO_PROXY="*", no_proxy="*")
    env.pop("KUBERNETES_SERVICE_HOST", None)
    log = tmp_path / "router.log"
    router: list[subprocess.Popen] = []

    def start_router() -> None:
        with log.open("a") as sink:
            router.append(subprocess.Popen([str(ROUTER_PYTHON), *router_args], env=env, stdout=sink,
                                           stderr=subprocess.STDOUT))
        procs.append(router[-1])

    start_router()
    base = f"http://127.0.0.1:{router_port}"

    prefill_leader = pod_templates([rbg], "rbg", NAME, "prefill")[0]
    decode_leader, decode_worker = pod_templates([rbg], "rbg", NAME, "decode")[:2]
    bootstrap = int(value_after(prefill_leader["spec"]["containers"][0]["args"], "--disaggregation-bootstrap-port"))
    addresses = iter(f"127.0.0.{n}" for n in range(11, 60))
    pods: dict[str, str] = {}  # pod name -> its worker URL

    def start_pod(template: dict, name: str, mode: str) -> str:
        """A pod: its server (a stand-in) on an address of its own, then the pod Running and Ready in the API."""
        ip = next(addresses)
        extra = ["--disaggregation-bootstrap-port", str(bootstrap)] if mode == "prefill" else []
        procs.append(subprocess.Popen([sys.executable, str(STANDIN), "--host", ip, "--port", str(worker_port),
                                       "--disaggregation-mode", mode, *extra], env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_for(f"{name}'s server", lambda: get_json(f"http://{ip}:{worker_port}/health")[0] == 200, procs, log)
        api.add(running_pod(template, name, NAMESPACE, ip))
        pods[name] = f"http://{ip}:{worker_port}"
        return pods[name]

    def workers() -> dict[str, tuple[str, int | None]]:
        code, body = get_json(base + "/workers")
        if code != 200:
            return {}
        return {w["url"]: (w["worker_type"], w.get("bootstrap_port")) for w in body.get("workers", [])}

    restarts: list[str] = []

    def listed(want: dict) -> bool:
        """The router lists ``want``. sglang-router 0.3.0 fails a share of its worker changes by itself (a workflow
        that deadlocks: plugins/module_utils/http/_router_workers.py, logged as "Failed job"), and its discovery
        does not try a pod again (the pod stays in its tracked set). The remedy the guide gives: the router pod
        restarted, it lists the pods afresh. The test does that, at most twice, and says so."""
        if workers() == want:
            return True
        text = re.sub(r"\x1b\[[0-9;]*m", "", log.read_text(errors="replace"))
        failed = re.findall(r"Failed job: type=\w+, worker=(\S+),", text)
        if len(failed) > len(restarts) and len(restarts) < 2:
            restarts.append(failed[-1])
            old = router[-1]
            procs.remove(old)
            old.terminate()
            old.wait(timeout=30)
            start_router()
        return False

    wait_for("the router", lambda: get_json(base + "/health")[0] == 200, procs, log)
    want = {}
    for index in range(2):
        want[start_pod(prefill_leader, f"{NAME}-prefill-{index}-0", "prefill")] = ("prefill", bootstrap)
    want[start_pod(decode_leader, f"{NAME}-decode-0-0", "decode")] = ("decode", None)
    # Rank 1 of the decode instance: a pod of the role that serves no HTTP API, never a worker.
    rank1 = start_pod(decode_worker, f"{NAME}-decode-0-1", "decode")
    wait_for(f"the router's workers {sorted(want)}", lambda: listed(want), procs, log)

    # Scale up: another prefill instance appears; the router's arguments did not change.
    want[start_pod(prefill_leader, f"{NAME}-prefill-2-0", "prefill")] = ("prefill", bootstrap)
    wait_for("the added prefill pod listed", lambda: listed(want), procs, log)
    # Scale down: the deleted pod leaves the list.
    api.delete(f"{NAME}-prefill-0-0")
    del want[pods[f"{NAME}-prefill-0-0"]]
    wait_for("the deleted prefill pod gone", lambda: listed(want), procs, log)
    assert rank1 not in workers()
    # The router asked for the pods of its namespace only, with the token: list and watch, nothing else.
    assert api.requests and all(path.startswith(f"/api/v1/namespaces/{NAMESPACE}/pods?") and code == 200
                                for method, path, code in api.requests), api.requests
    assert {("watch=true" in path) for method, path, code in api.requests} == {True, False}
    print(f"router restarted after a failed worker change inside it: {restarts or 'never'}")


def test_scaling_a_role_changes_no_router_argument(tmp_path: Path) -> None:
    """Replicas of a role changed in the export (sglang_k8s_instances, as -e): only the role's replicas differ; the
    router's arguments are the same, so it needs no redeploy."""
    port = free_ports(1)[0]
    before = export(tmp_path, tmp_path / "before", port)
    after = export(tmp_path, tmp_path / "after", port, "-e", '{"sglang_k8s_instances": {"prefill": 6, "decode": 2}}')
    assert sorted(before) == sorted(after)
    rbg = f"rolebasedgroup-{NAME}.yaml"
    roles_before = {r["name"]: r for r in before[rbg]["spec"]["roles"]}
    roles_after = {r["name"]: r for r in after[rbg]["spec"]["roles"]}
    assert (roles_before["prefill"]["replicas"], roles_after["prefill"]["replicas"]) == (4, 6)
    assert (roles_before["decode"]["replicas"], roles_after["decode"]["replicas"]) == (1, 2)
    assert roles_before["router"] == roles_after["router"]
    for role in ("prefill", "decode"):
        roles_before[role]["replicas"] = roles_after[role]["replicas"]
    assert roles_before == roles_after
