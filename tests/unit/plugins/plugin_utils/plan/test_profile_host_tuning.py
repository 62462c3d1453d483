"""A profile's host_tuning (plugin_utils/plan/_profile.py _host_tuning): a kernel setting name is one sysctl(8)
takes and names a file under /proc/sys, where the host applies it (module_utils/files/_sysctl.py)."""

from __future__ import annotations

import pytest

from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import Collector
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import _host_tuning


@pytest.mark.parametrize("name", ["vm.swappiness", "net.ipv4.conf.eth0/1.rp_filter", "kernel/numa_balancing"])
def test_a_kernel_setting_name_is_kept(name: str) -> None:
    errors = Collector()
    assert _host_tuning({"sysctl": {name: "0"}}, errors, "p") == {"sysctl": {name: "0"}}
    assert not errors.findings


@pytest.mark.parametrize("name", ["vm..swappiness", "vm/../../etc/passwd", "vm.", "-x", "vm swappiness"])
def test_a_name_that_names_no_setting_is_refused(name: str) -> None:
    errors = Collector()
    _host_tuning({"sysctl": {name: "0"}}, errors, "p")
    assert [f.variable for f in errors.findings] == ["host_tuning.sysctl"]
