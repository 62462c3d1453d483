"""The plan as one host sees it (plugins/plugin_utils/plan/_records.py host_view, typed_plan(value, host)) and the
filters of one host that read it: the same answers as from the whole plan, read from that host's part alone, so a
task that runs on every host of a fleet costs the same whatever the fleet's size."""
from __future__ import annotations

from collections.abc import Mapping

import pytest

from ansible_collections.ascend.sglang.plugins.filter import sglang_operations as ops
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import host_view, typed_plan
from tests.unit.plans import make_plan

PD32 = "deepseek_r1_a3_32c_pd_6k_1k6_20ms"  # 2 x 1-node prefill, 1 x 2-node decode, router


@pytest.fixture(scope="module")
def data():
    return make_plan(PD32, prefill=2, decode=2, router=1)[1]


class Guarded(Mapping):
    """A dict that refuses to give the values of some keys: what a reader must not touch (Ansible's lazy dict
    templates a value, all of it, when it is read)."""

    def __init__(self, data, refused):
        self._data, self._refused = data, refused

    def __getitem__(self, key):
        if key in self._refused:
            raise AssertionError(f"read {key!r}")
        return self._data[key]

    def __iter__(self):
        return iter(self._data)

    def __len__(self):
        return len(self._data)


def guarded(data, host):
    """The plan with every other host's part, the instances and the router upstreams unreadable."""
    hosts = Guarded(data["hosts"], set(data["hosts"]) - {host})
    return Guarded(dict(data, hosts=hosts), {"instances", "router_upstreams"})


def test_one_host_typed_alone_is_that_host_of_the_whole_plan(data):
    whole = typed_plan(data)
    for host in data["hosts"]:
        mine = typed_plan(guarded(data, host), host)
        assert mine.hosts == {host: whole.hosts[host]}
        assert (mine.instances, mine.router_upstreams) == ([], {})
        assert (mine.settings, mine.releases, mine.profile, mine.preflight) == (
            whole.settings, whole.releases, whole.profile, whole.preflight)


def test_a_host_the_plan_has_no_entry_for_has_no_part(data):
    assert typed_plan(data, "elsewhere").hosts == {}
    assert host_view(data, "elsewhere")["hosts"] == {}


def test_the_typed_plan_shares_nothing_with_what_it_was_given(data):
    given = make_plan(PD32, prefill=2, decode=2, router=1)[1]
    typed = typed_plan(given)
    host = next(iter(given["hosts"]))
    given["hosts"][host]["services"][0]["argv"].append("--changed")
    given["hosts"][host]["settings"]["sglang_etc_dir"] = "/elsewhere"
    assert typed.hosts[host].services[0].argv == typed_plan(data).hosts[host].services[0].argv
    assert typed.hosts[host].settings["sglang_etc_dir"] != "/elsewhere"


def test_a_plan_of_another_version_is_refused_for_one_host_too(data):
    with pytest.raises(ValueError, match="version"):
        typed_plan(dict(data, plan_version=1), next(iter(data["hosts"])))
    with pytest.raises(ValueError, match="the deployment plan"):
        typed_plan({"hosts": []}, "h")


def test_the_filters_of_one_host_read_its_part_alone(data):
    whole = typed_plan(data)
    for host in data["hosts"]:
        view = guarded(data, host)
        assert ops.sglang_host_settings(view, host) == dict(whole.hosts[host].settings)
        assert ops.sglang_runtime(view, host)["sglang"] == whole.releases["sglang"]
        assert ops.sglang_purge_files(view, host, ops.sglang_host_settings(data, host)) == ops.sglang_purge_files(
            data, host, ops.sglang_host_settings(data, host))
        mine = ops.sglang_host_plan(view, host)
        assert mine["hosts"] == {host: data["hosts"][host]}
        assert typed_plan(mine).hosts[host] == whole.hosts[host]
