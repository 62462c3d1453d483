"""Values of the operator's own through the real ansible-playbook, set the three ways an operator sets them (-e,
the inventory's all: vars, host vars), and every written file read back as its consumer reads it: manifests and
rules with go-yaml's typing (kubectl, Prometheus: tests/support/go_yaml.py), target lists and the plan file as JSON,
launchers with bash.  Ansible hands such values over as its own tagged types; the defaults alone prove nothing."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from go_yaml import load as go_load
from go_yaml import resolve
from test_playbooks import ROOT, ansible

pytestmark = pytest.mark.ansible

# Strings YAML readers take for something else when written plain: each must come back as this same string.
SPECIAL = {"A_YES": "y", "A_ON": "on", "A_NO": "NO", "A_EXP": "1e3", "A_OCT": "0o17", "A_HEX": "0x1F",
           "A_NULL": "~", "A_DATE": "2025-01-01", "A_INF": "+Inf", "A_SEXA": "1:20", "A_PLAIN": "plain text"}
# The export's own values, of the operator's choosing (the documented CCE resource name among them).
K8S_VALUES = {"sglang_k8s_namespace": "llm", "sglang_k8s_name": "ds-r1", "sglang_k8s_npu_resource":
              "huawei.com/ascend-1980", "sglang_k8s_model_pvc": "models", "sglang_k8s_secret_name": "llm-keys",
              "sglang_container_image": "registry.example/sglang:v0.5.6.post2-cann8.3.rc2-a3",
              "sglang_router_metrics_port": 30000, "sglang_k8s_instances": {"prefill": 4, "decode": 2, "router": 2},
              "sglang_nic": "enp189s0f0", "sglang_model_path": "/models/DeepSeek-R1",
              "sglang_overrides": {"prefill": {"env": SPECIAL}}, "sglang_restart_batch": "50%"}


def test_the_reader_is_as_strict_as_kubectl() -> None:
    # go-yaml v2's typing of plain scalars (resolve.go): what an unquoted manifest value becomes.
    assert [resolve(v) for v in ("y", "on", "NO", "1e3", "0o17", "0x1F", "~", "017", "1_000")] == \
        [True, True, False, 1000.0, 15, 31, None, 15, 1000]
    assert go_load("a: y\nb: 'y'\nc: 1e3\n") == {"a": True, "b": "y", "c": 1000.0}


def _inventory(path: Path, all_vars: dict, localhost_vars: dict | None = None) -> Path:
    """An inventory holding only the controller (the export contacts no host): all: vars, or host vars."""
    hosts = {"localhost": {"ansible_connection": "local", **(localhost_vars or {})}} if localhost_vars else {}
    path.write_text(yaml.safe_dump({"all": {"vars": all_vars, "hosts": hosts}}))
    return path


def _export(tmp_path: Path, how: str) -> Path:
    out = tmp_path / f"k8s-{how}"
    base = ("ansible-playbook", "ascend.sglang.kubernetes", "-e", "sglang_profile=deepseek_r1_pd32",
            "-e", f"sglang_k8s_dir={out}")
    if how == "extra-vars":
        ansible(*base, "-e", json.dumps(K8S_VALUES), cwd=tmp_path)
    elif how == "all-vars":
        ansible(*base, "-i", str(_inventory(tmp_path / "inv.yml", K8S_VALUES)), cwd=tmp_path)
    else:  # host vars of the controller
        ansible(*base, "-i", str(_inventory(tmp_path / "inv.yml", {}, K8S_VALUES)), cwd=tmp_path)
    return out


@pytest.mark.parametrize("how", ["extra-vars", "all-vars", "host-vars"])
def test_kubernetes_export_takes_every_value_as_given(tmp_path: Path, how: str) -> None:
    out = _export(tmp_path, how)
    docs = {p.name: go_load(p.read_text()) for p in sorted(out.iterdir())}
    assert set(docs) == {"rolebasedgroup-ds-r1.yaml", "service-ds-r1-router.yaml",
                         "podmonitor-ds-r1-prefill.yaml", "podmonitor-ds-r1-decode.yaml", "prometheusrule-ds-r1.yaml"}
    for doc in docs.values():
        assert doc["metadata"]["namespace"] == "llm"
        assert all(isinstance(v, str) for v in doc["metadata"].get("labels", {}).values()), doc["metadata"]
    roles = {r["name"]: r for r in docs["rolebasedgroup-ds-r1.yaml"]["spec"]["roles"]}
    assert (roles["prefill"]["replicas"], roles["decode"]["replicas"], roles["router"]["replicas"]) == (4, 2, 2)
    # restart.yml's batch is each server role's maxUnavailable, a percentage kept a string (the CRD's int-or-string).
    for role in ("prefill", "decode"):
        assert roles[role]["rolloutStrategy"] == {"type": "RollingUpdate",
                                                  "rollingUpdate": {"maxUnavailable": "50%", "maxSurge": 0}}
    prefill = roles["prefill"]["leaderWorkerPattern"]["template"]["spec"]
    container = prefill["containers"][0]
    env = {e["name"]: e.get("value") for e in container["env"]}
    for name, value in SPECIAL.items():
        assert env[name] == value, (name, env[name])
    # Every env value a string, as the API server requires.
    for role in roles.values():
        pod = (role.get("leaderWorkerPattern") or role.get("standalonePattern"))["template"]["spec"]
        for c in pod["containers"]:
            assert all(isinstance(e["value"], str) for e in c["env"] if "value" in e), c["env"]
            assert c["image"] == K8S_VALUES["sglang_container_image"]
            assert all(isinstance(a, str) for a in c.get("args", [])), c["args"]
    assert container["resources"]["limits"]["huawei.com/ascend-1980"] == "16"  # a quantity
    claims = [v["persistentVolumeClaim"]["claimName"] for v in prefill["volumes"] if "persistentVolumeClaim" in v]
    assert claims == ["models"]
    # pd32's documented router is the mini load balancer: it has no exporter, so the port (given, an int) is unused.
    router = roles["router"]["standalonePattern"]["template"]["spec"]["containers"][0]
    assert "--mini-lb" in router["args"] and "--prometheus-port" not in router["args"]


def test_refused_secret_flag_names_the_variable_set(tmp_path: Path) -> None:
    proc = ansible("ansible-playbook", "ascend.sglang.kubernetes", "-e", "sglang_profile=deepseek_r1_pd32",
                   "-e", f"sglang_k8s_dir={tmp_path / 'k8s'}", "-e", "sglang_nic=ens1",
                   "-e", '{"sglang_k8s_secret_flags": {"prefill": ["--api-kee"]}}', cwd=tmp_path, check=False)
    assert proc.returncode != 0
    assert "variable 'sglang_k8s_secret_flags.prefill.--api-kee'" in proc.stdout
    assert "sglang_secrets" not in proc.stdout
    # Said once, one problem per line: not again as the escaped text of a failed result.
    assert proc.stdout.count("did you mean --api-key?") == 1, proc.stdout


# ---- monitoring, the plan file, the plan's refusals: on a PD-mixed inventory of two hosts and a router ----------

def _fleet(tmp_path: Path, all_vars: dict, host_vars: dict | None = None, monitoring: dict | None = None) -> Path:
    hosts = {"m0": {"ansible_host": "192.0.2.1", "sglang_host_ip": "198.51.100.1"},
             "m1": {"ansible_host": "192.0.2.2", "sglang_host_ip": "198.51.100.2"}}
    for name, extra in (host_vars or {}).items():
        hosts[name].update(extra)
    children = {"mixed": {"hosts": hosts},
                "router": {"hosts": {"r0": {"ansible_host": "192.0.2.9", "sglang_host_ip": "198.51.100.9"}}}}
    if monitoring is not None:
        children["sglang_monitoring"] = {"hosts": monitoring}
    base = {"sglang_profile": "qwen3_32b_a3_2c_mixed_2k_2k_50ms", "sglang_model_path": "/models/Qwen3-32B",
            "sglang_draft_model_path": "/models/Qwen3-32B-Eagle3"}
    path = tmp_path / f"fleet-{len(list(tmp_path.glob('fleet-*')))}.yml"
    path.write_text(yaml.safe_dump({"all": {"vars": {**base, **all_vars}, "children": children}}))
    return path


def _monitoring(tmp_path: Path, inventory: Path, out: Path, *extra: str, check: bool = True):
    return ansible("ansible-playbook", "-i", str(inventory), "ascend.sglang.monitoring",
                   "-e", f"sglang_monitoring_dir={out}", *extra, cwd=tmp_path, check=check)


def test_two_deployments_of_one_profile_share_a_directory(tmp_path: Path) -> None:
    out = tmp_path / "prom"
    # One name from the inventory's all: vars, the other from -e; a YAML-special name among them.
    _monitoring(tmp_path, _fleet(tmp_path, {"sglang_deployment": "cluster-a"}), out)
    _monitoring(tmp_path, _fleet(tmp_path, {}), out, "-e", "sglang_deployment=1e3")
    names = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert names == sorted(["prometheus.yml", "rules/1e3.yml", "rules/cluster-a.yml"]
                           + [f"targets/{d}.{r}.json" for d in ("1e3", "cluster-a")
                              for r in ("prefill", "decode", "mixed", "router")])
    for name in ("cluster-a", "1e3"):
        mixed = json.loads((out / "targets" / f"{name}.mixed.json").read_text())
        assert {e["labels"]["deployment"] for e in mixed} == {name} and len(mixed) == 2
        rules = go_load((out / "rules" / f"{name}.yml").read_text())
        alerts = [r for g in rules["groups"] for r in g["rules"] if "alert" in r]
        assert alerts and all(a["labels"]["deployment"] == name for a in alerts)
        assert all(f'deployment="{name}"' in a["expr"] for a in alerts)
    promtool = shutil.which("promtool")
    if promtool:  # the real consumer, where it is installed (tests/validation/setup_promtool.sh)
        subprocess.run([promtool, "check", "config", str(out / "prometheus.yml")], check=True, capture_output=True)


def test_monitoring_never_overwrites_a_file_it_did_not_write(tmp_path: Path) -> None:
    out = tmp_path / "prom"
    out.mkdir()
    (out / "prometheus.yml").write_text("global: {scrape_interval: 1m}\n")
    proc = _monitoring(tmp_path, _fleet(tmp_path, {}), out, check=False)
    assert proc.returncode != 0
    assert "sglang_monitoring_dir" in proc.stdout and f"{out}/prometheus.yml" in proc.stdout
    assert (out / "prometheus.yml").read_text() == "global: {scrape_interval: 1m}\n"
    assert sorted(p.name for p in out.iterdir()) == ["prometheus.yml"]  # nothing half-written
    # A file where the directory should be: named by its variable.
    (tmp_path / "afile").write_text("")
    proc = _monitoring(tmp_path, _fleet(tmp_path, {}), tmp_path / "afile", check=False)
    assert proc.returncode != 0 and "sglang_monitoring_dir" in proc.stdout and "not a directory" in proc.stdout


def test_monitoring_host_values_are_checked_before_any_host_task(tmp_path: Path) -> None:
    inventory = _fleet(tmp_path, {}, monitoring={
        "prom0": {"ansible_host": "192.0.2.50", "sglang_monitoring_host_dir": "relative/dir"},
        "prom1": {"ansible_host": "192.0.2.51", "sglang_monitoring_host_dir": "/etc/prom\nExecStart=/bin/sh"}})
    proc = ansible("ansible-playbook", "-i", str(inventory), "ascend.sglang.monitoring", cwd=tmp_path, check=False)
    assert proc.returncode != 0
    assert "group 'sglang_monitoring', host 'prom0', variable 'sglang_monitoring_host_dir'" in proc.stdout
    assert "host 'prom1', variable 'sglang_monitoring_host_dir'" in proc.stdout
    assert "Write the files into sglang_monitoring_host_dir" not in proc.stdout


def test_plan_file_and_router_listen_from_host_and_all_vars(tmp_path: Path) -> None:
    inventory = _fleet(tmp_path, {"sglang_router_listen": "host_ip", "sglang_deployment": "on",
                                  "sglang_overrides": {"mixed": {"env": SPECIAL}}},
                       host_vars={"m1": {"sglang_npu_cpus": {0: "0-23", 1: "24-47", 2: "48-71", 3: "72-95"}}})
    plan_file = tmp_path / "plan.json"
    ansible("ansible-playbook", "-i", str(inventory), "ascend.sglang.plan", "-e", f"sglang_plan_file={plan_file}",
            cwd=tmp_path)
    planned = json.loads(plan_file.read_text())["plan"]
    assert planned["deployment"] == "on"
    router = planned["hosts"]["r0"]["services"][0]
    assert router["argv"][router["argv"].index("--host") + 1] == "198.51.100.9"
    assert router["health_url"].startswith("http://198.51.100.9:")
    mixed = planned["hosts"]["m0"]["services"][0]
    assert {k: mixed["env"][k] for k in SPECIAL} == SPECIAL


def test_render_writes_operator_values_as_given(tmp_path: Path) -> None:
    inventory = _fleet(tmp_path, {"sglang_overrides": {"mixed": {"env": SPECIAL}}})
    out = tmp_path / "render"
    ansible("ansible-playbook", "-i", str(inventory), str(ROOT / "playbooks" / "render.yml"),
            "-e", f"sglang_render_dir={out}", "-e", "sglang_deployment=y", cwd=tmp_path)
    record = json.loads((out / "m0" / "sglang-mixed-i0-r0.json").read_text())
    assert {k: record["env"][k] for k in SPECIAL} == SPECIAL
    # The environment as the service gets it: systemd's EnvironmentFile=, read here by bash (the same quoting).
    env_file = out / "m0" / "sglang-mixed-i0-r0.env"
    got = subprocess.run(["bash", "-c", 'set -a; . "$1"; for k in "${@:2}"; do printf "%s=%s\\n" "$k" "${!k}"; done',
                          "-", str(env_file), *SPECIAL], capture_output=True, text=True, check=True).stdout
    assert got.splitlines() == [f"{k}={v}" for k, v in SPECIAL.items()]
    targets = json.loads((out / "monitoring" / "targets" / "y.mixed.json").read_text())
    assert {e["labels"]["deployment"] for e in targets} == {"y"}


def test_plan_refuses_values_that_would_run_another_release_or_mix_networks(tmp_path: Path) -> None:
    inventory = _fleet(tmp_path, {"sglang_container_image": "lmsysorg/sglang", "sglang_runtime": "container",
                                  "sglang_router_listen": "any",
                                  "sglang_overrides": {"router": {"args": {"--host": "0.0.0.0"}}}},
                       host_vars={"m0": {"sglang_server_install": True, "sglang_server_stack": {"sglang": "0.5.9"}}})
    proc = ansible("ansible-playbook", "-i", str(inventory), "ascend.sglang.plan", cwd=tmp_path, check=False)
    assert proc.returncode != 0
    out = proc.stdout
    assert "variable 'sglang_container_image': 'lmsysorg/sglang' pins no release" in out
    assert "variable 'sglang_server_stack.sglang'" in out and "sglang_release" in out
    assert "variable 'sglang_router_listen'" in out
    # Once each, readable: not repeated as the escaped JSON of the failed task.
    assert out.count("pins no release") == 1


def test_a_multi_node_instance_takes_sglang_host_ip_on_every_rank_or_none(tmp_path: Path) -> None:
    hosts = {"p0": {"ansible_host": "192.0.2.1", "sglang_host_ip": "198.51.100.1", "sglang_nic": "ens1"},
             "p1": {"ansible_host": "192.0.2.2", "sglang_nic": "ens1"}}
    inventory = tmp_path / "inv.yml"
    inventory.write_text(yaml.safe_dump({"all": {
        "vars": {"sglang_profile": "qwen3_235b_a3_16c_mixed_2k_2k_50ms", "sglang_model_path": "/models/q",
                 "sglang_draft_model_path": "/models/d"},
        "children": {"mixed": {"hosts": hosts}}}}))
    proc = ansible("ansible-playbook", "-i", str(inventory), "ascend.sglang.plan", cwd=tmp_path, check=False)
    assert proc.returncode != 0
    assert "host 'p1', variable 'sglang_host_ip'" in proc.stdout and "p0 set sglang_host_ip and p1 do not" in proc.stdout


def test_collect_refuses_its_directory_before_gathering(tmp_path: Path) -> None:
    inventory = _fleet(tmp_path, {})
    proc = ansible("ansible-playbook", "-i", str(inventory), "ascend.sglang.collect",
                   "-e", f"sglang_collect_dir={tmp_path / 'missing'}", cwd=tmp_path, check=False)
    assert proc.returncode != 0
    assert "variable 'sglang_collect_dir'" in proc.stdout
    assert "Journals, unit state" not in proc.stdout  # no host was gathered
