"""Which instances retire.yml takes out (plugin_utils/rollout/_retire.py) and which files of theirs it removes
(plugin_utils/targets/_host_files.py retired_paths). Pure Python on real plans; the real playbook:
tests/integration/test_retire_playbook.py, and on systemd with the real router: Molecule pd_mixed (tasks/day_two.yml)."""

from __future__ import annotations

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.ascend.sglang.plugins.filter.sglang_schedules import sglang_retire_schedule
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import typed_plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._retire import retire_set
from ansible_collections.ascend.sglang.plugins.plugin_utils.targets._host_files import retired_paths

from tests.unit.plans import make_plan

PACKED = "qwen3_32b_a3_2c_mixed_3k5_1k5_50ms"  # PD-mixed replicas behind the Rust router
PD_MINI = "deepseek_r1_a3_16c_pd_2k_2k_50ms"  # behind the mini load balancer


@pytest.fixture(scope="module")
def packed():
    return typed_plan(make_plan(PACKED, host_vars={"sglang_instances_per_host": 4}, mixed=2, router=1)[1])


def keys(rows):
    return [row["key"] for row in rows]


def test_by_key_and_by_host_each_instance_whole_once(packed) -> None:
    assert keys(retire_set(packed, ["mixed-i3"])) == ["mixed-i3"]
    # Every instance with a rank on the host (four replicas on mixed1), in rollout order, each once.
    assert keys(retire_set(packed, ["mixed1", "mixed-i5"])) == ["mixed-i4", "mixed-i5", "mixed-i6", "mixed-i7"]
    row = retire_set(packed, ["mixed-i3"])[0]
    assert row["rank0"]["name"] == "sglang-mixed-i3-r0" and row["worker"]["url"].endswith(":10239")


@pytest.mark.parametrize("selectors, message", [
    (["mixed-i9"], "mixed-i9 is neither an instance of the plan nor one of its hosts"),
    (["router0"], "router0 runs no server instance (a router is not retired"),
    ([], "name the instances to retire"),
    (["mixed0", "mixed1"], "would retire every mixed instance"),
])
def test_refused_with_the_reason(packed, selectors, message) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        retire_set(packed, selectors)
    # Through retire.yml's schedule: the same words, as Ansible reports a filter's error.
    data = packed.as_dict()
    data["settings"] = dict(data["settings"], sglang_retire=selectors)
    with pytest.raises(AnsibleFilterError, match=message.replace("(", r"\(")):
        sglang_retire_schedule(data)


def test_forced_it_takes_every_instance_of_a_role() -> None:
    plan = typed_plan(make_plan(PACKED, host_vars={"sglang_instances_per_host": 2}, mixed=1, router=1)[1])
    assert keys(retire_set(plan, ["mixed0"], force=True)) == ["mixed-i0", "mixed-i1"]


def test_a_mini_lb_router_is_named_unless_forced() -> None:
    plan = typed_plan(make_plan(PD_MINI, prefill=2, decode=2, router=1)[1])
    with pytest.raises(ValueError, match="sglang-router-i0 runs --mini-lb"):
        retire_set(plan, ["prefill-i1"])
    assert keys(retire_set(plan, ["prefill-i1"], force=True)) == ["prefill-i1"]


def test_the_files_of_a_retired_service_and_never_the_hosts_own(packed) -> None:
    paths = retired_paths(["sglang-mixed-i3-r0"], {"sglang_etc_dir": "/e", "sglang_libexec_dir": "/l"})
    assert paths == ["/e/sglang-mixed-i3-r0.env", "/e/sglang-mixed-i3-r0.secrets", "/l/sglang-mixed-i3-r0.sh",
                     "/etc/systemd/system/sglang-mixed-i3-r0.service", "/e/sglang-mixed-i3-r0.workers",
                     "/e/sglang-mixed-i3-r0.watchdog.json",
                     "/etc/systemd/system/sglang-watchdog-sglang-mixed-i3-r0.service",
                     "/var/lib/sglang-watchdog/sglang-mixed-i3-r0.json",
                     "/run/sglang/sglang-mixed-i3-r0.service.started",
                     "/run/sglang/sglang-watchdog-sglang-mixed-i3-r0.service.started"]
    assert not [p for p in paths if p.endswith(("cann_env.sh", "90-sglang.conf", ".py"))]
    # Through retire.yml's schedule: each file with its host, named with that host's settings from the plan.
    data = packed.as_dict()
    data["settings"] = dict(data["settings"], sglang_retire=["mixed-i3"])
    got = sglang_retire_schedule(data)["files"]
    assert {row["host"] for row in got} == {"mixed0"} and len(got) == len(paths)
