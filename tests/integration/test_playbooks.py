"""ansible-playbook against the real collection: render mode, plan rejection, syntax, build."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _watchdog as watchdog
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._planner import plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import load_profile
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._topology import build_inventory

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
INVENTORIES = sorted(p.name for p in (ROOT / "inventories").iterdir() if p.is_dir())
WATCHDOG_DEFAULTS = yaml.safe_load((ROOT / "roles/sglang_service/defaults/main.yml").read_text())
pytestmark = pytest.mark.ansible


def ansible(*args: str, cwd: Path = ROOT, check: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", ANSIBLE_RETRY_FILES_ENABLED="0")
    proc = subprocess.run([str(BIN / args[0]), *args[1:]], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc


def adhoc(module: str, args: dict, *extra: str) -> dict:
    """One module of the collection run through the real ``ansible`` on localhost (local connection, this
    interpreter), its result as the module returned it, with ``failed``. The minimal callback prints
    "localhost | STATUS => {the result as JSON}"; nothing goes through a proxy (the tests' servers are loopback)."""
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_LOAD_CALLBACK_PLUGINS="1",
               ANSIBLE_STDOUT_CALLBACK="ansible.builtin.minimal", NO_PROXY="*", no_proxy="*")
    proc = subprocess.run([str(BIN / "ansible"), "localhost", "-c", "local", "-m", f"ascend.sglang.{module}",
                           "-a", json.dumps(args), "-e", f"ansible_python_interpreter={sys.executable}", *extra],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    head, sep, body = proc.stdout[proc.stdout.rfind("localhost | "):].partition(" => ")
    assert sep and head.startswith("localhost |"), f"unexpected ansible output: {proc.stdout[-2000:]}{proc.stderr[-2000:]}"
    result = json.loads(body)
    result["failed"] = "FAILED" in head
    return result


def render(inventory: Path, out: Path, *extra: str, check: bool = True) -> subprocess.CompletedProcess:
    return ansible("ansible-playbook", "-i", str(inventory), "playbooks/render.yml", "-e", f"sglang_render_dir={out}",
                   *extra, check=check)


def recap_changed(stdout: str) -> int:
    line = next(line for line in stdout.splitlines() if line.startswith("localhost"))
    return int(line.split("changed=")[1].split()[0])


def python_plan(inventory: str):
    """The planner run directly on what ansible-inventory reports for an example inventory."""
    data = json.loads(ansible("ansible-inventory", "-i", f"inventories/{inventory}", "--list").stdout)
    hostvars = data["_meta"]["hostvars"]
    groups = {g: data.get(g, {}).get("hosts", []) for g in ("prefill", "decode", "mixed", "router")}
    group_vars = yaml.safe_load((ROOT / "inventories" / inventory / "group_vars" / "all.yml").read_text())
    for name, hv in hostvars.items():  # the one template the examples use
        if hv.get("sglang_host_ip") == "{{ ansible_host }}":
            hv["sglang_host_ip"] = hv["ansible_host"]
    return plan(load_profile(group_vars["sglang_profile"]), build_inventory(groups, hostvars, group_vars))


_RENDERED: dict[str, tuple[Path, subprocess.CompletedProcess]] = {}


@pytest.fixture(scope="session")
def rendered(tmp_path_factory):
    """Render each example inventory once per session."""

    def get(inventory: str) -> tuple[Path, subprocess.CompletedProcess]:
        if inventory not in _RENDERED:
            out = tmp_path_factory.mktemp(f"render-{inventory}")
            _RENDERED[inventory] = (out, render(ROOT / "inventories" / inventory, out))
        return _RENDERED[inventory]

    return get


@pytest.mark.parametrize("inventory", INVENTORIES)
def test_render_writes_the_plan(inventory: str, rendered) -> None:
    out, first = rendered(inventory)
    expected = python_plan(inventory)
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    want = []
    for host, host_plan in expected.hosts.items():
        # Only a host running a server gets the CANN environment and the kernel settings.
        server_host = any(svc.role != "router" for svc in host_plan.services)
        want += [f"{host}/cann_env.sh", f"{host}/sysctl.conf"] if server_host else []
        for svc in host_plan.services:
            want += [f"{host}/{svc.name}.{ext}" for ext in ("json", "env", "sh", "service")]
            # A router with a worker API: its workers at start, read by its launcher.
            want += [f"{host}/{svc.name}.workers"] if svc.boot_workers else []
            record = json.loads((out / host / f"{svc.name}.json").read_text())
            assert record == {"role": svc.role, "instance": svc.instance, "node_rank": svc.node_rank,
                              "argv": svc.argv, "env": svc.env}
            launcher = (out / host / f"{svc.name}.sh").read_text()
            subprocess.run(["bash", "-n", str(out / host / f"{svc.name}.sh")], check=True)
            assert launcher.count("--") >= svc.argv.count("--") and "exec " in launcher
            # A router (no NPU) does not source the servers' CANN environment.
            assert ("/cann_env.sh" in launcher) == (svc.role != "router"), svc.name
            unit = (out / host / f"{svc.name}.service").read_text()
            assert f"ExecStart=/usr/local/libexec/sglang/{svc.name}.sh" in unit
        # The watchdog files deploy writes for the host's watched services (role defaults, as the examples keep).
        for svc in watchdog.watched(host_plan.services, WATCHDOG_DEFAULTS):
            want += [f"{host}/sglang-watchdog-{svc.name}.service", f"{host}/{svc.name}.watchdog.json"]
            config = json.loads((out / host / f"{svc.name}.watchdog.json").read_text())
            assert config == json.loads(json.dumps(watchdog.config(svc, WATCHDOG_DEFAULTS)))
            unit = (out / host / f"sglang-watchdog-{svc.name}.service").read_text()
            assert (f"ExecStart=/usr/bin/python3 /usr/local/libexec/sglang/sglang_watchdog.py "
                    f"/etc/sglang/{svc.name}.watchdog.json") in unit
        if server_host:
            subprocess.run(["bash", "-n", str(out / host / "cann_env.sh")], check=True)
    # The Prometheus files of the plan, for review (metrics are on in every example).
    want += ["monitoring/prometheus.yml", f"monitoring/rules/{expected.profile}.yml"]
    want += [f"monitoring/targets/{expected.profile}.{role}.json" for role in ("prefill", "decode", "mixed", "router")]
    assert written == sorted(want)
    assert recap_changed(first.stdout) > 0


def test_second_render_changes_nothing(rendered) -> None:
    out, _unused = rendered("example")
    second = render(ROOT / "inventories" / "example", out)
    assert recap_changed(second.stdout) == 0, second.stdout[-3000:]


def test_example_render_matches_the_documented_pd32_layout(rendered) -> None:
    out, _unused = rendered("example")
    records = {p.relative_to(out).as_posix(): json.loads(p.read_text()) for p in out.rglob("*.json")}
    d0 = records["a3-decode-0/sglang-decode-i0-r0.json"]["argv"]
    d1 = records["a3-decode-1/sglang-decode-i0-r1.json"]["argv"]
    assert d0[d0.index("--dist-init-addr") + 1] == d1[d1.index("--dist-init-addr") + 1] == "198.51.100.21:5000"
    assert (d0[d0.index("--node-rank") + 1], d1[d1.index("--node-rank") + 1]) == ("0", "1")
    router = records["router-0/sglang-router-i0.json"]["argv"]
    assert router[router.index("--prefill"):router.index("--host")] == [
        "--prefill", "http://198.51.100.11:8000", "8998", "--prefill", "http://198.51.100.12:8000", "8999",
        "--decode", "http://198.51.100.21:8001"]
    env = records["a3-decode-1/sglang-decode-i0-r1.json"]["env"]
    assert env["HCCL_SOCKET_IFNAME"] == "enp189s0f0"
    assert env["ASCEND_MF_STORE_URL"] == "tcp://198.51.100.11:24669"


def test_render_uses_the_deployment_modes(rendered) -> None:
    out, _unused = rendered("example")
    modes = {p.name.split(".", 1)[1] if p.name.startswith("sglang-") else p.name: p.stat().st_mode & 0o777
             for p in out.rglob("*") if p.is_file() and "monitoring" not in p.parts}
    assert {p.stat().st_mode & 0o777 for p in (out / "monitoring").rglob("*") if p.is_file()} == {0o644}
    assert modes == {"env": 0o640, "json": 0o640, "sh": 0o755, "service": 0o644, "cann_env.sh": 0o644,
                     "sysctl.conf": 0o644, "watchdog.json": 0o644}


def test_render_refuses_a_file_and_a_directory_with_other_files(tmp_path: Path) -> None:
    target = tmp_path / "render"
    target.write_text("not a directory\n")
    proc = render(ROOT / "inventories" / "example", target, check=False)
    text = proc.stdout + proc.stderr
    assert proc.returncode != 0 and f"sglang_render_dir '{target}' exists and is not a directory" in text, text[-3000:]
    assert "Errno" not in text and target.read_text() == "not a directory\n"
    target.unlink()
    (target / "old-host").mkdir(parents=True)
    (target / "old-host" / "sglang-mixed-i0-r0.env").write_text("A=1\n")
    proc = render(ROOT / "inventories" / "example", target, check=False)
    text = proc.stdout + proc.stderr
    assert proc.returncode != 0, text[-3000:]
    assert "holds 2 file(s) this plan does not produce (old-host, old-host/sglang-mixed-i0-r0.env)" in text
    assert sorted(p.name for p in target.iterdir()) == ["old-host"]


def test_rejected_plan_stops_before_writing(tmp_path: Path) -> None:
    inv = tmp_path / "inv.yml"
    inv.write_text(yaml.safe_dump({"all": {
        "vars": {"sglang_model_path": "/m"},
        "children": {
            "prefill": {"hosts": {"p0": {"sglang_host_ip": "10.0.0.1"}, "p1": {"sglang_host_ip": "10.0.0.2"}}},
            "decode": {"hosts": {f"d{i}": {"sglang_host_ip": f"10.0.1.{i}", "sglang_nic": "ib0"} for i in range(3)}},
            "router": {"hosts": {"r0": {}}},
        }}}))
    out = tmp_path / "render"
    proc = render(inv, out, "-e", "sglang_profile=deepseek_r1_pd32", check=False)
    assert proc.returncode != 0
    text = proc.stdout + proc.stderr
    assert "group 'decode', host 'd2', variable 'roles.decode.nnodes'" in text
    assert not out.exists()


def test_packing_from_the_command_line_renders_every_replica(tmp_path: Path) -> None:
    """-e sglang_instances_per_host=max on the 1-card Qwen3-30B profile: 8 replicas on the A3 host, each its own NPUs
    and port; -e with a count the node cannot hold stops the run naming host, group and variable."""
    out = tmp_path / "render"
    render(ROOT / "inventories" / "mixed_a3", out, "-e", "sglang_profile=qwen3_30b_a3_1c_mixed_3k5_1k5_50ms",
           "-e", "sglang_instances_per_host=max")
    units = sorted(p.name for p in (out / "a3-mixed-0").glob("sglang-mixed-*.service"))
    assert units == [f"sglang-mixed-i{i}-r0.service" for i in range(8)]
    slices = set()
    for i in range(8):
        argv = json.loads((out / "a3-mixed-0" / f"sglang-mixed-i{i}-r0.json").read_text())["argv"]
        slices.add(argv[argv.index("--base-gpu-id") + 1])
        assert argv[argv.index("--port") + 1] == str(7239 + 1000 * i)
    assert slices == {str(2 * i) for i in range(8)}
    proc = render(ROOT / "inventories" / "mixed_a3", tmp_path / "refused", "-e",
                  "sglang_profile=qwen3_30b_a3_1c_mixed_3k5_1k5_50ms", "-e", "sglang_instances_per_host=9", check=False)
    assert proc.returncode != 0 and not (tmp_path / "refused").exists()
    assert ("group 'mixed', host 'a3-mixed-0', variable 'sglang_instances_per_host': 9 replicas of 2 NPUs do not fit "
            "the 16 NPUs of an A3 node: at most 8") in proc.stdout


def test_pinned_replicas_render_their_cpu_affinity(tmp_path: Path) -> None:
    """Two A2 replicas with the host's NPU-to-CPU table (the published npu-smi info -t topo of an 8 x 910B3 host):
    each unit is pinned to the CPUs near its own NPUs; without the table no unit has a CPUAffinity= line."""
    topo = {0: "144-167", 1: "144-167", 2: "96-119", 3: "96-119", 4: "0-23", 5: "0-23", 6: "48-71", 7: "48-71"}
    out = tmp_path / "pinned"
    render(ROOT / "inventories" / "mixed_a2", out, "-e", "sglang_profile=qwen3_32b_a2_8c_mixed_2k_2k_50ms",
           "-e", json.dumps({"sglang_instances_per_host": 2, "sglang_npu_cpus": topo}))
    lines = {i: [line for line in (out / "a2-mixed-0" / f"sglang-mixed-i{i}-r0.service").read_text().splitlines()
                 if line.startswith("CPUAffinity=")] for i in (0, 1)}
    assert lines == {0: ["CPUAffinity=96-119,144-167"], 1: ["CPUAffinity=0-23,48-71"]}
    render(ROOT / "inventories" / "mixed_a2", tmp_path / "unpinned", "-e",
           "sglang_profile=qwen3_32b_a2_8c_mixed_2k_2k_50ms")
    assert "CPUAffinity" not in (tmp_path / "unpinned" / "a2-mixed-0" / "sglang-mixed-i0-r0.service").read_text()


def test_unknown_profile_is_named(tmp_path: Path) -> None:
    proc = render(ROOT / "inventories" / "example", tmp_path / "x", "-e", "sglang_profile=deepseek_r1_pd33",
                  check=False)
    assert proc.returncode != 0 and "variable 'sglang_profile': unknown profile 'deepseek_r1_pd33'" in proc.stdout


def monitoring(*extra: str, check: bool = True) -> subprocess.CompletedProcess:
    return ansible("ansible-playbook", "-i", "inventories/example", "playbooks/monitoring.yml", *extra, check=check)


def test_monitoring_writes_what_render_mode_shows(tmp_path: Path, rendered) -> None:
    out, _unused = rendered("example")
    dest = tmp_path / "prom"
    preview = monitoring("-e", f"sglang_monitoring_dir={dest}", "--check")
    assert recap_changed(preview.stdout) == 1 and not dest.exists()  # check mode: said, nothing written
    first = monitoring("-e", f"sglang_monitoring_dir={dest}")
    assert recap_changed(first.stdout) == 1
    written = sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file())
    assert written == sorted(p.relative_to(out / "monitoring").as_posix() for p in (out / "monitoring").rglob("*")
                             if p.is_file())
    for rel in written:
        mine, reviewed = (dest / rel).read_text(), (out / "monitoring" / rel).read_text()
        # The scrape configuration names its files by absolute path: the rest is byte for byte the render.
        assert mine == reviewed.replace(str(out / "monitoring"), str(dest)), rel
    assert recap_changed(monitoring("-e", f"sglang_monitoring_dir={dest}").stdout) == 0


def test_monitoring_refusals(tmp_path: Path) -> None:
    nowhere = monitoring(check=False)
    assert nowhere.returncode != 0 and "nowhere to write the Prometheus files" in nowhere.stdout
    off = monitoring("-e", f"sglang_monitoring_dir={tmp_path / 'x'}", "-e", "sglang_metrics=false", check=False)
    assert off.returncode != 0 and "sglang_metrics is false" in off.stdout
    assert not (tmp_path / "x").exists()


def test_playbook_syntax() -> None:
    playbooks = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "playbooks").glob("*.yml"))
    # One per profile (40 January + the pd32 alias + 154 of the current pages + 25 of the nightly tests) + deploy,
    # plan, render, preflight, doctor, status, stop, restart, retire, upgrade, bench, collect, monitoring,
    # kubernetes, import_profiles, stage_weights.
    assert len(playbooks) == 223 + 16
    ansible("ansible-playbook", "-i", "inventories/example", "--syntax-check", *playbooks)


@pytest.mark.parametrize("inventory, groups", [("mixed_a2", {"mixed"}), ("example", {"prefill", "decode", "router"})])
def test_plays_match_only_groups_the_inventory_has(inventory: str, groups: set) -> None:
    """No play names a group the inventory lacks: no "Could not match supplied host pattern" warning, on a
    PD-mixed inventory (no prefill, decode, router) as on a PD one (no mixed); the plays still reach every host."""
    hosts = json.loads(ansible("ansible-inventory", "-i", f"inventories/{inventory}", "--list").stdout)
    want = {h for g in groups for h in hosts[g]["hosts"]}
    for name in ("deploy", "preflight", "status", "doctor", "stop", "restart", "collect"):
        proc = ansible("ansible-playbook", "-i", f"inventories/{inventory}", f"playbooks/{name}.yml", "--list-hosts")
        out = proc.stdout + proc.stderr
        assert "Could not match" not in out and "WARNING" not in out, (name, out[-2000:])
        listed = {line.strip() for line in proc.stdout.splitlines() if line.startswith("      ")}
        assert want <= listed, (name, want - listed)


def test_every_role_documents_its_arguments() -> None:
    for role in (ROOT / "roles").iterdir():
        spec = yaml.safe_load((role / "meta" / "argument_specs.yml").read_text())
        assert "main" in spec["argument_specs"], role.name


def test_collection_builds(tmp_path: Path) -> None:
    ansible("ansible-galaxy", "collection", "build", "--output-path", str(tmp_path), str(ROOT))
    assert list(tmp_path.glob("ascend-sglang-*.tar.gz"))


def test_the_profile_guide_lists_every_profile_with_its_playbook_and_the_readme_links_to_it() -> None:
    """The profile table lives in the profile guide (scripts/profiles.py writes it); README links to it and stays
    short (under 300 lines)."""
    readme = (ROOT / "README.md").read_text()
    guide = (ROOT / "docs/docsite/rst/profiles.rst").read_text()
    assert "(docs/docsite/rst/profiles.rst#profile-table)" in readme and "profile-table:begin" not in readme
    assert len(readme.splitlines()) < 300, len(readme.splitlines())
    assert "     - Needs too\n" in guide
    for path in (ROOT / "profiles").glob("[!_]*.yml"):
        pid = path.stem
        assert (ROOT / "playbooks" / f"{pid}.yml").exists(), pid
        target = yaml.safe_load(path.read_text()).get("alias_of")
        if target:
            assert f"``{pid}`` (``playbooks/{pid}.yml``) is an alias of ``{target}``." in guide, pid
        else:
            # A retired profile says so after its id, with the one that supersedes it.
            retired = yaml.safe_load(path.read_text()).get("retired")
            by = (retired or {}).get("superseded_by")
            mark = "" if not retired else " **retired**" + (f", superseded by ``{by}``" if by else "")
            assert f"   * - ``{pid}``{mark}\n" in guide, pid
    assert shutil.which("bash")


def test_readme_quick_start_says_how_the_playbook_names_resolve() -> None:
    """The ascend.sglang.* names resolve only through an installed collection: the Quick start says so, and how from
    a checkout (install it, the playbooks' paths, or the collections path scripts/setup.sh links)."""
    quick_start = " ".join((ROOT / "README.md").read_text().split("\n## Quick start\n")[1].split("\n## ")[0].split())
    for text in ("resolve only once the collection is installed", "ansible-galaxy collection install",
                 "playbooks/<name>.yml", "./scripts/setup.sh", "ANSIBLE_COLLECTIONS_PATH=<checkout>/.collections"):
        assert text in quick_start, text


def test_readme_quick_start_inventories_plan(tmp_path: Path) -> None:
    """README's two example inventories are complete: ascend.sglang.plan accepts each as it is, by FQCN from another
    directory, with nothing else set, and prints its hosts."""
    quick_start = (ROOT / "README.md").read_text().split("\n## Quick start\n")[1].split("\n## ")[0]
    blocks = quick_start.split("```yaml\n")[1:]
    inventories = [block.split("```", 1)[0] for block in blocks]
    assert len(inventories) == 2
    for index, text in enumerate(inventories):
        inventory = tmp_path / f"inventory{index}"
        inventory.mkdir()
        (inventory / "hosts.yml").write_text(text)
        proc = ansible("ansible-playbook", "-i", str(inventory), "ascend.sglang.plan", cwd=tmp_path)
        hosts = yaml.safe_load(text)["all"]["children"]
        for group in hosts.values():
            for host in group["hosts"]:
                assert f"| {host} " in proc.stdout, (index, host)


@pytest.mark.parametrize("module", sorted(p.stem for p in (ROOT / "plugins" / "modules").glob("*.py")))
def test_module_documentation_renders(module: str) -> None:
    """DOCUMENTATION / EXAMPLES / RETURN parse (doc fragments included)."""
    out = ansible("ansible-doc", "--json", f"ascend.sglang.{module}").stdout
    doc = json.loads(out)[f"ascend.sglang.{module}"]
    assert doc["doc"]["short_description"] and doc["examples"] and doc["return"] is not None


def test_the_deploying_guide_lists_every_failure_signature() -> None:
    # The list-table's rows, with RST's line wrapping undone.
    guide = " ".join((ROOT / "docs/docsite/rst/deploying.rst").read_text().split())
    rows = yaml.safe_load((ROOT / "profiles" / "_failure_signatures.yml").read_text())["signatures"]
    for row in rows:
        assert f"* - ``{row['id']}`` - {row['severity']} - {row['cause']} - " in guide, row["id"]
