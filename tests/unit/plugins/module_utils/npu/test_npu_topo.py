"""``npu-smi info -t topo`` and CPU lists, on the published A2 output (tests/fixtures/npu_smi/README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.ascend.sglang.plugins.module_utils.npu._npu_topo import format_cpu_list, parse_cpu_list, parse_topo

FIXTURES = Path(__file__).resolve().parents[4] / "fixtures" / "npu_smi"


def test_published_a2_topology_gives_each_npu_its_cpus():
    topo = parse_topo((FIXTURES / "topo_a2_910b3_x8.txt").read_text())
    assert {n: format_cpu_list(c) for n, c in topo.items()} == {
        0: "144-167", 1: "144-167", 2: "96-119", 3: "96-119", 4: "0-23", 5: "0-23", 6: "48-71", 7: "48-71"}


def test_output_without_cpu_affinity_gives_nothing():
    assert parse_topo("NPU0       X          HCCS\nNPU1       HCCS       X\n") == {}
    assert parse_topo("") == {} and parse_topo(None) == {}
    # what the tool prints when it cannot talk to the driver (npu_smi_dcmi_error.txt)
    assert parse_topo((FIXTURES / "npu_smi_dcmi_error.txt").read_text()) == {}


def test_a_row_without_a_cpu_list_is_left_out():
    text = "\t   NPU0       NPU1       CPU Affinity\nNPU0       X          HCCS       NA\nNPU1       HCCS       X          0-3,8\n"
    assert {n: format_cpu_list(c) for n, c in parse_topo(text).items()} == {1: "0-3,8"}


@pytest.mark.parametrize("text, cpus", [("0", {0}), ("0-3", {0, 1, 2, 3}), ("0-1,4,6-7", {0, 1, 4, 6, 7}),
                                        (" 144-146 ", {144, 145, 146})])
def test_cpu_lists(text, cpus):
    assert parse_cpu_list(text) == cpus
    assert parse_cpu_list(format_cpu_list(cpus)) == cpus


@pytest.mark.parametrize("text", ["", "a", "3-1", "0-", "0,,1", "0-1\nCPUAffinity=2", "1 2", "0-99999", "-1"])
def test_not_cpu_lists(text):
    with pytest.raises(ValueError):
        parse_cpu_list(text)


def test_format_joins_ranges():
    assert format_cpu_list([5, 0, 1, 2, 7, 8]) == "0-2,5,7-8" and format_cpu_list([]) == ""
