"""Every playbook that acts on hosts, through the real ansible-playbook, on an inventory written as the README writes
one: no ``ansible_connection`` anywhere, each host reached over ssh at a loopback address where nothing listens.

Every task meant for a host must end UNREACHABLE for that host. None may report ok, changed or failed for
``localhost -> <host>``: that is a step delegated from a controller play that ran over the play's connection (the
controller's own) instead of the host's, which with reachable hosts stops units, removes files and reloads systemd
on the controller. A delegated task keeps the play's connection unless the host names one of its own, so a play
of the controller must not set ``connection: local`` (Ansible's implicit localhost is local already).
The same playbooks over real ssh, on systemd hosts: Molecule pd_mixed."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import yaml

from test_playbooks import ROOT, ansible

pytestmark = pytest.mark.ansible

HOSTS = {"a3-mixed-0": "127.0.0.2", "a3-mixed-1": "127.0.0.3", "router-0": "127.0.0.4"}
SERVERS = ["a3-mixed-0", "a3-mixed-1"]
# The README's PD-mixed inventory (two replicas behind the Rust router, which has a worker API), the Prometheus
# host in its group; port 1: nothing listens there, so every connection is refused at once.
INVENTORY = {
    "all": {
        "vars": {
            "sglang_profile": "qwen3_32b_a3_2c_mixed_3k5_1k5_50ms",
            "sglang_model_path": "/data/models/Qwen3-32B-W8A8",
            "sglang_draft_model_path": "/data/models/Qwen3-32B-Eagle3",
            "ansible_port": 1,
        },
        "children": {
            "mixed": {"hosts": {h: {"ansible_host": HOSTS[h], "sglang_host_ip": f"198.51.100.{51 + i}"}
                                for i, h in enumerate(SERVERS)}},
            "router": {"hosts": {"router-0": {"ansible_host": HOSTS["router-0"], "sglang_host_ip": "198.51.100.31"}}},
            "sglang_monitoring": {"hosts": {"router-0": {}}},
        },
    },
}

# playbook -> (its options, the hosts it reaches first: each must end UNREACHABLE). A playbook stops where its hosts
# are gone; the first host steps it reaches are the ones named.
PLAYBOOKS = {
    # Every host, in plays of their own (the runtime check, staging, preflight, the server roles, ...).
    "deploy": ([], [*SERVERS, "router-0"]),
    "qwen3_32b_a3_2c_mixed_3k5_1k5_50ms": ([], [*SERVERS, "router-0"]),
    "preflight": ([], [*SERVERS, "router-0"]),
    "doctor": ([], [*SERVERS, "router-0"]),
    "status": ([], [*SERVERS, "router-0"]),
    "stop": ([], [*SERVERS, "router-0"]),
    "collect": ([], [*SERVERS, "router-0"]),
    # Steps delegated from the controller's plays: the router's worker API is called on the router's host.
    "restart": ([], ["router-0"]),
    "retire": (["-e", "sglang_retire=mixed-i1"], ["router-0"]),
    # The benchmark client runs on the router's host.
    "bench": ([], ["router-0"]),
    # Where every server rank stands, read on the server hosts.
    "upgrade": ([], SERVERS),
    # Each server host lists the source itself.
    "stage_weights": (["-e", "sglang_model_source=/srv/models/Qwen3-32B-W8A8"], SERVERS),
    # The Prometheus files are written on the Prometheus host.
    "monitoring": ([], ["router-0"]),
}

# The playbooks that contact no host (the plan, files written on the controller, the profile importer).
CONTROLLER_ONLY = {"plan", "render", "kubernetes", "import_profiles"}

# A task's result line of the default callback: "STATUS: [HOST]" or "STATUS: [localhost -> HOST]" (delegated),
# for a loop item "STATUS: [...] (item=...) => {...}".
RESULT = re.compile(r"^(ok|changed|failed|fatal): \[(?:(localhost) -> )?([^\]]+)\](.*)$")


def results(stdout: str) -> list[tuple[str, str | None, str, bool]]:
    """(status, delegating host or None, host, unreachable) of every task result the run printed."""
    found = []
    for line in stdout.splitlines():
        match = RESULT.match(line)
        if match:
            status, via, host, rest = match.groups()
            unreachable = "UNREACHABLE!" in rest or '"unreachable": true' in rest
            found.append((status, via, host, unreachable))
    return found


@pytest.fixture(scope="module")
def inventory(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("ssh-inventory") / "hosts.yml"
    path.write_text(yaml.safe_dump(INVENTORY, sort_keys=False))
    return path


@pytest.mark.parametrize("playbook", sorted(PLAYBOOKS))
def test_every_host_step_goes_over_the_hosts_own_connection(inventory: Path, tmp_path: Path, playbook: str) -> None:
    options, first_reached = PLAYBOOKS[playbook]
    # From a directory of its own (the records, bundles and benchmark results go there), by FQCN as operators run it.
    proc = ansible("ansible-playbook", "-i", str(inventory), f"ascend.sglang.{playbook}", *options, cwd=tmp_path,
                   check=False)
    out = proc.stdout + proc.stderr
    found = results(proc.stdout)
    # Nothing acted on a host from the controller: every result of a step delegated to a host is its unreachability.
    on_controller = [f"{status}: [localhost -> {host}]" for status, via, host, unreachable in found
                     if via and host != "localhost" and not unreachable]
    assert not on_controller, f"{playbook}: steps ran on the controller instead of their host: {on_controller}\n" \
                              + out[-4000:]
    # The plan passed and the hosts were tried, each over ssh, at its own address.
    reached = {host for status, via, host, unreachable in found if unreachable and "{{" not in host}
    assert reached >= set(first_reached), f"{playbook}: {sorted(reached)} unreachable, expected {first_reached}\n" \
                                          + out[-4000:]
    assert reached <= set(HOSTS), out[-4000:]
    for host in first_reached:
        assert f"connect to host {HOSTS[host]} port 1: Connection refused" in out, out[-4000:]
    # No host was reported reachable: nothing answered for it.
    assert not [r for r in found if r[2] in HOSTS and not r[3] and r[1] is None], out[-4000:]


def test_every_playbook_is_held_to_it() -> None:
    """A new playbook is either listed above or contacts no host; the per-profile playbooks all import deploy.yml
    (one of them is listed)."""
    playbooks = ROOT / "playbooks"
    profiles = {p.stem for p in (ROOT / "profiles").glob("*.yml")}
    unlisted = sorted(p.stem for p in playbooks.glob("*.yml")
                      if p.stem not in PLAYBOOKS and p.stem not in CONTROLLER_ONLY and p.stem not in profiles)
    assert not unlisted, f"playbooks not run on the ssh inventory: {unlisted}"
    for path in playbooks.glob("*.yml"):
        if path.stem in profiles:
            assert "import_playbook: deploy.yml" in path.read_text(encoding="utf-8"), path.name


def test_a_listed_localhost_without_the_local_connection_is_refused(tmp_path: Path) -> None:
    """The controller's plays run on localhost: an inventory that lists localhost itself and gives it no connection
    would send every controller step through an ssh login to this machine; the plan refuses it before any host is
    contacted, naming the host and the variable."""
    data = yaml.safe_load(yaml.safe_dump(INVENTORY))
    data["all"]["hosts"] = {"localhost": {"ansible_host": "127.0.0.1"}}
    path = tmp_path / "hosts.yml"
    path.write_text(yaml.safe_dump(data))
    proc = ansible("ansible-playbook", "-i", str(path), "ascend.sglang.plan", cwd=tmp_path, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    assert "host 'localhost'" in out and "ansible_connection" in out and "give it ansible_connection: local" in out, \
        out[-3000:]
    # With the local connection (and this interpreter, which the implicit localhost has) it plans.
    data["all"]["hosts"]["localhost"].update(ansible_connection="local", ansible_python_interpreter=sys.executable)
    path.write_text(yaml.safe_dump(data))
    proc = ansible("ansible-playbook", "-i", str(path), "ascend.sglang.plan", cwd=tmp_path, check=False)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
