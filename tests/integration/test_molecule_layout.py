"""The Molecule scenarios' layout (extensions/molecule), checked without containers: the shared config.yml
holds what every scenario shares and the scenarios hold only what differs; every platform is the same kind of
container; task and vars files sit in subdirectories (ansible-lint parses a scenario root's files as
playbooks); every file the playbooks include or load exists; the operator commands name playbooks the
collection ships, by FQCN."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
MOLECULE = ROOT / "extensions" / "molecule"
SCENARIOS = sorted(p.parent for p in MOLECULE.glob("*/molecule.yml"))
SHARED_KEYS = {"prerun", "dependency", "driver", "ansible", "verifier", "scenario"}
# What config.yml's comment promises of every platform.
PLATFORM_BASE = {"image", "pre_build_image", "command", "systemd", "network", "ulimits", "security_opts"}


def load(path: Path):
    return yaml.safe_load(path.read_text())


def test_the_scenarios_are_found():
    assert [p.name for p in SCENARIOS] == ["container_runtime", "pd_mixed", "pd_separation"]


def test_config_yml_holds_what_every_scenario_shares():
    config = load(MOLECULE / "config.yml")
    assert SHARED_KEYS <= set(config)
    assert config["prerun"] is False and config["dependency"]["enabled"] is False
    assert config["driver"]["name"] == "podman"
    assert (MOLECULE / "config.yml").parent.joinpath("shared", "prepare.yml").is_file()
    assert config["ansible"]["playbooks"]["prepare"] == "../shared/prepare.yml"
    assert "platforms" not in config


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda p: p.name)
def test_a_scenario_holds_only_what_differs(scenario):
    data = load(scenario / "molecule.yml")
    assert set(data) <= {"platforms", "provisioner"}, sorted(set(data) & SHARED_KEYS)
    assert set(data["provisioner"]) <= {"inventory"}
    names = [p["name"] for p in data["platforms"]]
    assert len(names) == len(set(names)) and all(n.startswith("sgm-") for n in names)


# The images scripts/molecule.sh builds: the Ascend-shaped host, and the same with a container engine for the
# privileged hosts that run one (tests/standins/host).
HOST_IMAGE, ENGINE_IMAGE = "${SGLANG_MOLECULE_HOST_IMAGE}", "${SGLANG_MOLECULE_ENGINE_IMAGE}"


def test_every_platform_is_the_same_container():
    bases = []
    for scenario in SCENARIOS:
        for platform in load(scenario / "molecule.yml")["platforms"]:
            assert PLATFORM_BASE <= set(platform), (scenario.name, platform["name"])
            assert platform["image"] == (ENGINE_IMAGE if platform.get("privileged") else HOST_IMAGE), platform["name"]
            bases.append({k: platform[k] for k in PLATFORM_BASE - {"image", "network"}})
    assert bases and all(b == bases[0] for b in bases)


def test_scenarios_share_no_container_and_no_network():
    """scripts/molecule.sh runs scenarios side by side (and removes a scenario's leftovers by its container names):
    no container name and no network of one scenario may be another's. Molecule's destroy removes the network."""
    names, networks = {}, {}
    for scenario in SCENARIOS:
        platforms = load(scenario / "molecule.yml")["platforms"]
        nets = {p["network"] for p in platforms}
        assert len(nets) == 1, (scenario.name, nets)
        net = nets.pop()
        assert net not in networks, (net, networks.get(net), scenario.name)
        networks[net] = scenario.name
        for p in platforms:
            assert p["name"] not in names, (p["name"], names.get(p["name"]), scenario.name)
            names[p["name"]] = scenario.name


def test_the_lanes_run_every_scenario_once():
    """Both lane layouts (the ci depth's and the others') run every scenario once."""
    script = (ROOT / "scripts" / "molecule.sh").read_text()
    layouts = re.findall(r"^    run_lane ([\w ]+?) &\n.*?^    run_lane ([\w ]+?)$", script, re.M | re.S)
    assert len(layouts) == 2, layouts
    for lanes in layouts:
        assert sorted(" ".join(lanes).split()) == [p.name for p in SCENARIOS], lanes


def test_the_images_are_built_from_the_scripts_containerfiles():
    script = (ROOT / "scripts" / "molecule.sh").read_text()
    for image, containerfile in ((HOST_IMAGE, "Containerfile"), (ENGINE_IMAGE, "Containerfile.engine")):
        assert (ROOT / "tests" / "standins" / "host" / containerfile).is_file()
        assert f"tests/standins/host/{containerfile} " in script
        assert f"export {image[2:-1]}=" in script


def yaml_files(directory: Path):
    return sorted(directory.glob("*.yml"))


@pytest.mark.parametrize("directory", SCENARIOS + [MOLECULE / "shared"], ids=lambda p: p.name)
def test_task_and_vars_files_sit_in_subdirectories(directory):
    for path in yaml_files(directory):
        if path.name == "molecule.yml":
            continue
        plays = load(path)
        assert isinstance(plays, list) and all("hosts" in play for play in plays), f"{path} is not a playbook"
    for path in yaml_files(directory / "tasks"):
        tasks = load(path)
        assert isinstance(tasks, list) and not any("hosts" in t for t in tasks), f"{path} is not a task list"
    for path in yaml_files(directory / "vars"):
        assert isinstance(load(path), dict), f"{path} is not a vars file"


def included_paths(path: Path):
    """Static include_tasks targets and vars_files of one file, resolved as Ansible does from that file."""
    text = path.read_text()
    for target in re.findall(r"include_tasks: ([^\s{]+\.yml)$", text, re.M):
        yield target, (path.parent / target).resolve()
    plays = load(path)
    if isinstance(plays, list):
        for play in plays:
            for target in play.get("vars_files", []) if "hosts" in play else []:
                yield target, (path.parent / target).resolve()


def test_every_included_file_exists():
    seen = 0
    for path in sorted(MOLECULE.rglob("*.yml")):
        for target, resolved in included_paths(path):
            seen += 1
            assert resolved.is_file(), f"{path.relative_to(ROOT)}: {target}"
    assert seen > 40


def test_overlays_named_from_playbook_dir_exist():
    seen = 0
    for scenario in SCENARIOS:
        for path in sorted(scenario.rglob("*.yml")):
            for target in re.findall(r"\{\{ playbook_dir \}\}/([\w/.-]+\.yml)", path.read_text()):
                seen += 1
                assert (scenario / target).is_file(), f"{path.relative_to(ROOT)}: {target}"
    assert seen >= 3


def test_operator_commands_name_shipped_playbooks_by_fqcn():
    shipped = {p.stem for p in (ROOT / "playbooks").glob("*.yml")}
    named = set()
    for path in sorted(MOLECULE.rglob("*.yml")):
        text = path.read_text()
        # No operator playbook is reached through the checkout any more.
        assert "/playbooks/" not in text.replace("collection_dir ~ '/playbooks/doctor.sh'", ""), path
        named |= set(re.findall(r"deploy_playbook: (\w+)$", text, re.M))
        named |= set(re.findall(r"\bascend\.sglang\.([a-z0-9_]+)\b", text))
    profiles = {"deepseek_r1_pd32", "qwen3_32b_a2_8c_mixed_6k_1k5_18ms", "qwen3_480b_a3_16c_mixed_3k5_1k5_50ms"}
    assert profiles | {"render", "status", "restart", "bench", "stop"} <= named
    assert named <= shipped, sorted(named - shipped)


def ssh_scenarios():
    """The scenarios whose operator commands reach their hosts over ssh (molecule_ssh, shared/prepare.yml)."""
    return [s for s in SCENARIOS
            if ((load(s / "molecule.yml")["provisioner"].get("inventory") or {}).get("group_vars") or {})
            .get("all", {}).get("molecule_ssh")]


def test_every_scenario_reaches_its_hosts_over_ssh():
    """ssh with pipelining and ControlPersist costs the controller less per task than podman exec (the testing guide
    gives the figures), and it is how an operator's inventory reaches its hosts: every scenario runs that way."""
    assert sorted(s.name for s in ssh_scenarios()) == sorted(s.name for s in SCENARIOS)


@pytest.mark.parametrize("scenario", ssh_scenarios(), ids=lambda p: p.name)
def test_an_ssh_scenarios_inventories_name_no_connection(scenario):
    """The inventories the collection's playbooks run with are an operator's: no ansible_connection anywhere (in
    hosts.yml, group_vars or host_vars), so the hosts are reached over ssh; the run's connection piece adds only
    each host's address, account, key and known_hosts (shared/prepare.yml)."""
    inventories = sorted(p for p in scenario.glob("inventory*") if p.is_dir())
    assert inventories
    for inventory in inventories:
        files = sorted(inventory.rglob("*.yml"))
        assert any(f.name == "hosts.yml" for f in files), inventory
        for path in files:
            assert "ansible_connection" not in yaml.safe_dump(load(path)), path.relative_to(ROOT)


def test_every_operator_command_adds_the_runs_connection_piece():
    """Every ansible-playbook command of the scenarios passes ssh_inventory after its inventory: where the run has a
    connection piece (a scenario reached over ssh) no command reaches the hosts without it."""
    seen = 0
    for path in sorted(MOLECULE.rglob("*.yml")):
        text = path.read_text()
        for match in re.finditer(r"'(?:ansible-playbook|[^']+/doctor\.sh)', '-i', [^\]]+\]( \+ ssh_inventory)?", text):
            seen += 1
            assert match.group(1), f"{path.relative_to(ROOT)}: {match.group(0)}"
        assert not re.search(r"^\s+- ansible-playbook$", text, re.M), f"{path.relative_to(ROOT)}: argv as a list"
        # The doctor's wrapper runs ansible-playbook with the arguments it is given: the same piece.
        assert not re.search(r"argv: \[bash, [^\]]*doctor\.sh", text), f"{path.relative_to(ROOT)}: doctor.sh without it"
    assert seen >= 6


def test_prepare_writes_the_connection_piece_the_commands_read():
    locations = load(MOLECULE / "shared" / "vars" / "locations.yml")
    assert locations["ssh_dir"] == "{{ run_dir }}/ssh"
    assert "ssh_dir ~ '/inventory'" in locations["ssh_inventory"]
    prepare = (MOLECULE / "shared" / "prepare.yml").read_text()
    assert '"{{ ssh_dir }}/inventory/host_vars/{{ inventory_hostname }}.yml"' in prepare
    # Only host_vars: a piece that listed hosts would add them to an inventory that lacks them (inventory_packed_gone).
    assert "ansible_connection" not in prepare.split("- name: Reach the hosts over ssh")[1]
