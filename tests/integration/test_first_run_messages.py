"""What an operator meets on a first run, through the real ansible-playbook: the NIC of a single-node instance, the
refusals of a misspelled group, an address with a port, an override key without dashes and a model source that is
the model path (each named as the operator wrote it, given by -e, in all: vars or as host vars), a refused run that
prints each problem once and no JSON, a plan run without deprecation warnings, and render.yml naming what it wrote.

The hosts of these inventories do not exist: a refused run stops on the controller before any play reaches them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from test_playbooks import ROOT, ansible

pytestmark = pytest.mark.ansible

# deepseek_r1_a3_16c_pd_2k_2k_50ms: one single-node prefill and one single-node decode instance, and the router.
PROFILE = "deepseek_r1_a3_16c_pd_2k_2k_50ms"
HOSTS = {"prefill": {"p0": {"ansible_host": "192.0.2.11", "sglang_host_ip": "198.51.100.11"}},
         "decode": {"d0": {"ansible_host": "192.0.2.21", "sglang_host_ip": "198.51.100.21"}},
         "router": {"r0": {"ansible_host": "192.0.2.31", "sglang_host_ip": "198.51.100.31"}}}
HOW = ["extra-vars", "all-vars", "host-vars"]


def inventory(path: Path, all_vars: dict | None = None, host_vars: dict | None = None,
              groups: dict | None = None) -> Path:
    """The PD16 layout (``groups`` renames or adds groups), with ``all_vars`` and ``host_vars`` on every host."""
    children = {}
    for group, hosts in (groups or HOSTS).items():
        children[group] = {"hosts": {name: {**own, **(host_vars or {})} for name, own in hosts.items()}}
    path.write_text(yaml.safe_dump({"all": {"vars": {"sglang_profile": PROFILE, "sglang_model_path": "/data/m",
                                                     **(all_vars or {})}, "children": children}}))
    return path


def given(tmp_path: Path, how: str, values: dict, groups: dict | None = None) -> tuple[Path, list[str]]:
    """An inventory and the extra arguments that give ``values`` the way ``how`` says."""
    inv = tmp_path / "inventory.yml"
    if how == "extra-vars":
        return inventory(inv, groups=groups), ["-e", json.dumps(values)]
    if how == "all-vars":
        return inventory(inv, all_vars=values, groups=groups), []
    return inventory(inv, host_vars=values, groups=groups), []


def run(playbook: str, inv: Path, *extra: str, cwd: Path = ROOT):
    return ansible("ansible-playbook", "-i", str(inv), f"playbooks/{playbook}.yml", *extra, check=False, cwd=cwd)


def problems(stdout: str) -> list[str]:
    """The problems the plan printed, one per line, as the operator reads them."""
    return [line.strip().strip('",').lstrip("- ") for line in stdout.splitlines()
            if line.strip().startswith('"  - ') or line.strip().startswith('"sglang plan rejected: ')]


@pytest.mark.parametrize("how", ["extra-vars", "all-vars", "host-vars", "none"])
def test_a_single_node_instance_uses_the_nic_given_and_lo_without_one(tmp_path: Path, how: str) -> None:
    """HCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME of single-node prefill and decode servers: sglang_nic as given (SGLang's
    current pages write <network-interface> there), lo where none is given (the January documents' single node);
    read back from the env file systemd reads (EnvironmentFile: NAME=value lines)."""
    if how == "none":
        inv, extra, nic = inventory(tmp_path / "inventory.yml"), [], "lo"
    else:
        (inv, extra), nic = given(tmp_path, how, {"sglang_nic": "enp189s0f0"}), "enp189s0f0"
    out = tmp_path / "render"
    proc = run("render", inv, "-e", f"sglang_render_dir={out}", *extra)
    assert proc.returncode == 0, proc.stdout[-3000:]
    for host, service in (("p0", "sglang-prefill-i0-r0"), ("d0", "sglang-decode-i0-r0")):
        env = dict(line.split("=", 1) for line in (out / host / f"{service}.env").read_text().splitlines()
                   if "=" in line and not line.startswith("#"))
        assert (env["HCCL_SOCKET_IFNAME"], env["GLOO_SOCKET_IFNAME"]) == (nic, nic), (host, env)


@pytest.mark.parametrize("how", HOW)
def test_an_address_with_a_port_is_named_as_such(tmp_path: Path, how: str) -> None:
    # A host's own sglang_host_ip wins over all: vars: here the hosts have none of their own.
    bare = {group: {name: {"ansible_host": own["ansible_host"]} for name, own in hosts.items()}
            for group, hosts in HOSTS.items()}
    inv, extra = given(tmp_path, how, {"sglang_host_ip": "198.51.100.11:8000"}, groups=bare)
    proc = run("plan", inv, *extra)
    assert proc.returncode != 0
    found = problems(proc.stdout)
    assert ("group 'prefill', host 'p0', variable 'sglang_host_ip': '198.51.100.11:8000' is an address with a port "
            "(8000): sglang_host_ip takes an address alone (the profile sets every port); use '198.51.100.11'") in found
    assert not [line for line in found if "IPv6" in line], found


# sglang_overrides is deployment-wide: a host's own value is refused as such (tests/unit/broken_inputs.py).
@pytest.mark.parametrize("how", ["extra-vars", "all-vars"])
def test_an_override_key_without_dashes_names_the_variable_written(tmp_path: Path, how: str) -> None:
    inv, extra = given(tmp_path, how, {"sglang_overrides": {"prefill": {"args": {"tp-size": 4}}}})
    proc = run("plan", inv, *extra)
    assert proc.returncode != 0
    assert problems(proc.stdout) == [
        "sglang plan rejected: group 'prefill', variable 'sglang_overrides.prefill.args.tp-size': the key 'tp-size' is "
        "not a full --flag name: write '--tp-size'"], proc.stdout[-3000:]
    assert "profile 'inventory'" not in proc.stdout


@pytest.mark.parametrize("how", ["extra-vars", "all-vars"])
def test_a_model_source_that_is_the_model_path_is_refused(tmp_path: Path, how: str) -> None:
    inv, extra = given(tmp_path, how, {"sglang_model_source": "/data/m/"})
    proc = run("deploy", inv, *extra)
    assert proc.returncode != 0
    found = problems(proc.stdout)
    assert len(found) == 1 and found[0].startswith(
        "sglang plan rejected: variable 'sglang_model_source': is '/data/m/', the same directory as "
        "sglang_model_path: the weights would be staged onto themselves"), proc.stdout[-3000:]
    plays = {line.split(" ***")[0] for line in proc.stdout.splitlines() if line.startswith("PLAY [")}
    assert plays == {"PLAY [Plan the SGLang deployment]"}, plays


def test_a_misspelled_group_is_named_and_the_operators_other_groups_are_not(tmp_path: Path) -> None:
    groups = {"prefil": HOSTS["prefill"], "decode": HOSTS["decode"], "router": HOSTS["router"],
              "sglang_monitoring": {"mon0": {"ansible_host": "192.0.2.41"}}, "site_dc1": {"d0": {}, "spare0": {}}}
    proc = run("plan", inventory(tmp_path / "inventory.yml", groups=groups))
    assert proc.returncode != 0
    assert problems(proc.stdout) == [
        "sglang plan rejected: group 'prefil': is not a group of this collection (prefill, decode, mixed, router): "
        "its host p0 is planned nowhere; did you mean 'prefill'?"], proc.stdout[-3000:]
    groups["prefill"] = groups.pop("prefil")
    proc = run("plan", inventory(tmp_path / "inventory.yml", groups=groups))
    assert proc.returncode == 0, proc.stdout[-3000:]


def test_a_refused_run_prints_each_problem_once_and_no_json(tmp_path: Path) -> None:
    """Four problems at once, by -e, all: vars and host vars: each printed once, one per line, then one short line;
    no result dumped as JSON (the plan step's result holds every service's environment)."""
    groups = {"prefill": {"p0": {**HOSTS["prefill"]["p0"], "sglang_host_ip": "198.51.100.11:8000"}},
              "decod": HOSTS["decode"], "router": HOSTS["router"]}
    inv = inventory(tmp_path / "inventory.yml", all_vars={"sglang_model_source": "/data/m"}, groups=groups)
    proc = run("deploy", inv, "-e", json.dumps({"sglang_overrides": {"prefill": {"args": {"tp-size": 4}}}}))
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    expected = ["group 'decod': is not a group of this collection",
                "variable 'sglang_model_source': is '/data/m', the same directory as sglang_model_path",
                "variable 'sglang_host_ip': '198.51.100.11:8000' is an address with a port",
                "variable 'sglang_overrides.prefill.args.tp-size': the key 'tp-size' is not a full --flag name"]
    for text in expected:
        assert out.count(text) == 1, (text, out[-4000:])
    assert len(problems(proc.stdout)) == len(expected), problems(proc.stdout)
    # No result as JSON: the only {...} is the failed task's one-line message.
    dumped = [line for line in out.splitlines() if "=> {" in line]
    assert dumped == ['ok: [localhost] => {',  # the debug task whose msg is the list of problems
                      'fatal: [localhost]: FAILED! => {"changed": false, "msg": "sglang plan rejected; the problems '
                      'are listed above"}'], dumped
    for word in ('"plan":', '"hosts":', '"env":', '"argv":', '"findings":'):
        assert word not in out
    assert len(out) < 4000, len(out)


def test_a_plan_run_prints_no_deprecation_warning(tmp_path: Path, monkeypatch) -> None:
    """ansible-core 2.21 warned twice on every run (a filter copying the templar with the plan): none is left, with
    deprecation warnings shown whatever the configuration says."""
    monkeypatch.setenv("ANSIBLE_DEPRECATION_WARNINGS", "1")
    proc = run("plan", inventory(tmp_path / "inventory.yml"), "-e", f"sglang_state_dir={tmp_path / 'state'}")
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "DEPRECATION" not in proc.stdout + proc.stderr, (proc.stdout + proc.stderr)[-3000:]


def test_render_names_what_it_wrote(tmp_path: Path) -> None:
    out = tmp_path / "render"
    proc = run("render", inventory(tmp_path / "inventory.yml"), "-e", f"sglang_render_dir={out}")
    assert proc.returncode == 0, proc.stdout[-3000:]
    shown = proc.stdout[proc.stdout.index("Show what was written"):]
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert f'"{out}: {len(written)} files, {len(written)} changed"' in shown
    assert ('"  p0/ (6 files, 6 changed): cann_env.sh, sglang-prefill-i0-r0.{env,json,service,sh}, sysctl.conf"'
            in shown), shown[:3000]
    assert '"  r0/ (4 files, 4 changed): sglang-router-i0.{env,json,service,sh}"' in shown
    for directory in {Path(p).parent.as_posix() for p in written}:
        assert f'"  {directory}/ (' in shown, directory
