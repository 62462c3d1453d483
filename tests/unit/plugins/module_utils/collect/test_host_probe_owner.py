"""Which service a process belongs to (preflight's port and NPU owners), from its cgroup file: the unit's
cgroup on the host runtime, the cgroup of the container named after the unit on the container runtime."""

from __future__ import annotations

import io

import pytest

from ansible_collections.ascend.sglang.plugins.module_utils.collect import _host_probe

CID = "ba03ded7ec0332d0d4d804ab18216c4d23e0d0401c4d5b0fb677d36e2d1e9f6e"
OTHER = "f4513daa7876887073ffad8d564bb999e67069fae6a17667ece4b1774f41efa6"
CGROUPS = {
    # nested podman, cgroupfs manager (cgroup v1)
    1: f"10:hugetlb:/libpod_parent/libpod-{CID}/container\n1:name=systemd:/libpod_parent/libpod-{CID}/container\n",
    # podman with the systemd manager, cgroup v2
    2: f"0::/machine.slice/libpod-{CID}.scope/container\n",
    # docker, systemd driver
    3: f"0::/system.slice/docker-{CID}.scope\n",
    # a unit of the host runtime
    4: "0::/system.slice/sglang-decode-i0-r0.service\n",
    # a container that is not the deployment's
    5: f"0::/machine.slice/libpod-{OTHER}.scope/container\n",
}


@pytest.fixture(autouse=True)
def fake_proc(monkeypatch):
    def fake_open(path, *args, **kwargs):
        pid = int(path.split("/")[2])
        if pid not in CGROUPS:
            raise FileNotFoundError(path)
        return io.StringIO(CGROUPS[pid])

    monkeypatch.setattr(_host_probe, "open", fake_open, raising=False)


@pytest.mark.parametrize("pid", [1, 2, 3])
def test_a_process_in_the_services_container_is_the_services(pid):
    assert _host_probe.unit_of(pid, {CID: "sglang-decode-i0-r0"}) == "sglang-decode-i0-r0.service"
    # without the engine's list of containers it is nobody's
    assert _host_probe.unit_of(pid) is None


def test_host_runtime_units_and_foreign_containers():
    assert _host_probe.unit_of(4) == "sglang-decode-i0-r0.service"
    assert _host_probe.unit_of(4, {CID: "sglang-router-i0"}) == "sglang-decode-i0-r0.service"
    assert _host_probe.unit_of(5, {CID: "sglang-decode-i0-r0"}) is None
    assert _host_probe.unit_of(99, {CID: "sglang-decode-i0-r0"}) is None
