"""module_utils/files/_sysctl.py: where each kernel setting is read and written (as sysctl(8) finds it), and what
is written: only the settings whose live value differs, whitespace-normalized, nothing in check mode."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.ascend.sglang.plugins.module_utils.files._sysctl import apply_settings, proc_path


def test_a_setting_is_found_as_sysctl_finds_it() -> None:
    assert proc_path("/proc/sys", "vm.swappiness") == "/proc/sys/vm/swappiness"
    # procps' slashdot: with dots as separators, a slash is part of a name (an interface eth0.1) and the reverse.
    assert proc_path("/proc/sys", "net.ipv4.conf.eth0/1.rp_filter") == "/proc/sys/net/ipv4/conf/eth0.1/rp_filter"
    assert proc_path("/proc/sys", "net/ipv4/conf/eth0.1/rp_filter") == "/proc/sys/net/ipv4/conf/eth0.1/rp_filter"


@pytest.mark.parametrize("name", ["", "vm..swappiness", "vm/../../etc/passwd", "../x", ".vm", "vm/"])
def test_a_name_that_would_leave_the_directory_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match="not a kernel setting name"):
        proc_path("/proc/sys", name)


def test_only_the_differing_values_are_written_and_none_in_check_mode(tmp_path: Path) -> None:
    (tmp_path / "vm").mkdir()
    (tmp_path / "net").mkdir()
    (tmp_path / "vm" / "swappiness").write_text("60\n")
    # sysctl prints multi-value settings tab-separated: the same words are the same value.
    (tmp_path / "net" / "tcp_rmem").write_text("4096\t87380\t6291456\n")
    values = {"vm.swappiness": "0", "net.tcp_rmem": "4096 87380 6291456"}
    assert apply_settings(str(tmp_path), values, check_mode=True) == [
        {"name": "vm.swappiness", "before": "60", "after": "0"}]
    assert (tmp_path / "vm" / "swappiness").read_text() == "60\n"
    assert apply_settings(str(tmp_path), values, check_mode=False) == [
        {"name": "vm.swappiness", "before": "60", "after": "0"}]
    assert (tmp_path / "vm" / "swappiness").read_text() == "0\n"  # as sysctl -w writes it
    assert apply_settings(str(tmp_path), values, check_mode=False) == []


def test_a_setting_the_kernel_lacks_is_named(tmp_path: Path) -> None:
    with pytest.raises(OSError, match="kernel setting kernel.sched_migration_cost_ns: cannot read"):
        apply_settings(str(tmp_path), {"kernel.sched_migration_cost_ns": "50000"}, check_mode=False)
