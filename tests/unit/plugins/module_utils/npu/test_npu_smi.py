"""npu-smi / install-info parsers on published output (tests/fixtures/npu_smi/README.md): pure Python."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ansible_collections.ascend.sglang.plugins.module_utils.npu._npu_smi import (
    compare_versions, driver_version, normalize_release, parse_health, parse_install_info, parse_npu_smi_info,
    toolkit_version,
)

FIXTURES = Path(__file__).resolve().parents[4] / "fixtures" / "npu_smi"
NPU_SMI = Path(__file__).resolve().parents[4] / "standins" / "ascend" / "usr" / "local" / "sbin" / "npu-smi"


def load(name: str):
    return parse_npu_smi_info((FIXTURES / name).read_text())


def test_a2_healthy_eight_910b3_devices():
    info = load("a2_910b3_x8_healthy.txt")
    assert info.version == "25.3.rc1"
    assert info.generation == "A2"
    assert info.chip_name == "910B3"
    assert [c.index for c in info.chips] == list(range(8))
    assert [c.npu for c in info.chips] == list(range(8))
    assert {c.chip for c in info.chips} == {0} and {c.phy_id for c in info.chips} == {None}
    assert all(c.health == "OK" for c in info.chips)
    assert (info.chips[0].hbm_used_mb, info.chips[0].hbm_total_mb, info.chips[0].hbm_free_mb) == (3440, 65536, 62096)
    assert info.chips[7].bus_id == "0000:42:00.0"
    assert info.processes == ()
    assert info.as_dict()["device_count"] == 8 and info.as_dict()["npu_count"] == 8


def test_a3_healthy_sixteen_dies_on_eight_npus():
    info = load("a3_ascend910_x8x2_healthy.txt")
    assert info.version == "25.2.1"
    assert info.generation == "A3"
    assert len(info.chips) == 16
    assert [(c.npu, c.chip, c.phy_id) for c in info.chips[:4]] == [(0, 0, 0), (0, 1, 1), (1, 0, 2), (1, 1, 3)]
    assert [c.phy_id for c in info.chips] == list(range(16))
    assert info.chips[15].bus_id == "0000:83:00.0" and info.chips[15].hbm_used_mb == 2880
    assert all(c.health == "OK" and not c.processes for c in info.chips)
    assert info.as_dict()["npu_count"] == 8


def test_a2_busy_device_lists_its_process():
    info = load("a2_910b2c_x2_busy.txt")  # trailing blanks after every line, as published
    assert info.generation == "A2"
    assert [len(c.processes) for c in info.chips] == [1, 0]
    proc = info.chips[0].processes[0]
    assert (proc.pid, proc.name, proc.memory_mb) == (124528, "python3.8", 17400)
    assert info.chips[0].hbm_used_mb == 20701


def test_a3_busy_process_lands_on_its_die():
    info = load("a3_ascend910_x2x2_busy.txt")
    assert info.generation == "A3"
    busy = [c for c in info.chips if c.processes]
    assert [(c.index, c.npu, c.chip) for c in busy] == [(3, 1, 1)]
    assert busy[0].processes[0].pid == 990711 and busy[0].hbm_used_mb == 10568


def test_a3_warning_die_from_rows_without_header():
    info = load("a3_ascend910_warning_rows.txt")
    assert info.version is None
    assert info.generation == "A3"
    assert [c.health for c in info.chips] == ["OK", "Warning", "OK", "OK"]
    assert (info.chips[1].npu, info.chips[1].chip) == (0, 1)


def test_a2_faulty_health_values():
    info = load("a2_910b3_x8_faulty_derived.txt")
    assert {c.index: c.health for c in info.chips if c.health != "OK"} == {2: "Alarm", 5: "Critical", 6: "Warning"}


def test_container_pid_column_and_26x_widths():
    text = """| NPU   Name                | Health        | Power(W)             Temp(C)                 Hugepages-Usage(page)   |
| Chip                      | Bus-Id        | AICore(%)            Memory-Usage(MB)        HBM-Usage(MB)           |
| 0     910B3               | OK            | 100.0                50                      0    / 0                |
| 0                         | 0000:C1:00.0  | 0                    0    / 0                8676 / 65536            |
| NPU     Chip              | Process id    | Process name       | Process memory(MB)    | Process id in container |
| 0       0                 | 485946        | pytest             | 5175                  | NA                      |
"""
    info = parse_npu_smi_info(text)
    assert info.chips[0].hbm_used_mb == 8676
    assert [(p.pid, p.name, p.memory_mb) for p in info.chips[0].processes] == [(485946, "pytest", 5175)]


@pytest.mark.parametrize("text", ["", "dcmi module initialize failed. ret is -8005\n",
                                  (FIXTURES / "npu_smi_dcmi_error.txt").read_text()])
def test_no_devices(text):
    info = parse_npu_smi_info(text)
    assert info.chips == () and info.generation is None


def test_generation_unknown_for_other_chips():
    text = """| 0       310P3                 | OK              | NA           62                7210  / 7210          |
| 0       0                     | 0000:01:00.0    | 0            16302/ 44280                            |
"""
    assert parse_npu_smi_info(text).generation is None


def test_install_info_files():
    driver = parse_install_info((FIXTURES / "driver_version.info").read_text())
    toolkit = parse_install_info((FIXTURES / "ascend_toolkit_install.info").read_text())
    assert driver_version(driver) == "25.3.rc1"
    assert driver_version({"Version": "24.1.rc2"}) == "24.1.rc2"
    assert toolkit_version(toolkit) == "8.3.RC2"
    assert toolkit["path"] == "/usr/local/Ascend/ascend-toolkit/8.3.RC2/aarch64-linux"
    assert driver_version({}) is None and toolkit_version({}) is None


@pytest.mark.parametrize("older, newer", [
    ("8.0.RC2", "8.0.0"), ("8.0.RC1", "8.0.RC2"), ("8.0.0", "8.1.RC1"), ("24.1.rc2", "24.1.rc2.2"),
    ("24.1.rc2.2", "24.1.0"), ("25.2.0", "25.3.rc1"), ("8.3.RC2", "8.5.0"), ("0.5.6", "0.5.6.post2"),
])
def test_version_order(older, newer):
    assert compare_versions(older, newer) == -1
    assert compare_versions(newer, older) == 1


def test_version_equality_and_release_spelling():
    assert compare_versions("8.3.RC2", "8.3.rc2") == 0
    assert compare_versions("8.0", "8.0.0") == 0
    assert normalize_release("0.5.6.post2") == normalize_release("0.5.6-post2")
    assert normalize_release("0.5.6.post2") != normalize_release("0.5.6")


# --- npu-smi info -t health ----------------------------------------------------------------------------------

def test_health_chip_form_published():
    assert parse_health((FIXTURES / "health_chip_ok.txt").read_text()) == {"health": "OK", "error_code": "NA"}


def test_health_npu_form_published():
    assert parse_health((FIXTURES / "health_npu_310b_ok.txt").read_text()) == {"health": "OK", "error_code": None}


def test_health_npu_form_takes_the_worst_chip():
    text = (FIXTURES / "health_npu_a3_alarm_derived.txt").read_text()
    assert parse_health(text) == {"health": "Alarm", "error_code": None}
    assert parse_health(text.replace("Alarm", "Warning")) == {"health": "Warning", "error_code": None}
    assert parse_health(text.replace(": OK", ": Critical", 1))["health"] == "Critical"
    assert parse_health(text.replace(": OK", ": UNKNOWN", 1))["health"] == "UNKNOWN"  # ranks worst


def test_health_chip_form_with_error_code():
    assert parse_health((FIXTURES / "health_chip_alarm_derived.txt").read_text()) == {
        "health": "Alarm", "error_code": "80E18005"}


def test_health_na_mcu_and_nothing():
    mcu_in_container = "\tHealth                         : OK\n\tHealth                         : NA\n"
    assert parse_health(mcu_in_container)["health"] == "OK"
    assert parse_health("\tHealth Status                  : NA\n")["health"] == "NA"
    assert parse_health("") == {"health": None, "error_code": None}
    assert parse_health("Invalid card id.\n") == {"health": None, "error_code": None}


def npu_smi(state_dir, *args):
    env = dict(os.environ, ASCEND_STANDIN_DIR=str(state_dir))
    done = subprocess.run(["bash", str(NPU_SMI), *args], env=env, capture_output=True, text=True, timeout=60,
                          check=False)
    return done.returncode, done.stdout, done.stderr


@pytest.fixture
def faulty_a3(tmp_path):
    (tmp_path / "shape").write_text("a3\n")
    (tmp_path / "faults").write_text("health 5 1 Alarm\nhealth 2 0 Critical 80E18005\nbusy 3 0 4242\n")
    return tmp_path


def test_standin_health_npu_form(faulty_a3):
    rc, out, _unused = npu_smi(faulty_a3, "info", "-t", "health", "-i", "5")
    assert rc == 0 and out == (FIXTURES / "health_npu_a3_alarm_derived.txt").read_text()
    assert parse_health(out)["health"] == "Alarm"
    healthy = npu_smi(faulty_a3, "info", "-t", "health", "-i", "0")[1]
    assert parse_health(healthy) == {"health": "OK", "error_code": None}


def test_standin_health_chip_form(faulty_a3):
    assert parse_health(npu_smi(faulty_a3, "info", "-t", "health", "-i", "5", "-c", "0")[1]) == {
        "health": "OK", "error_code": "NA"}
    assert parse_health(npu_smi(faulty_a3, "info", "-t", "health", "-i", "5", "-c", "1")[1]) == {
        "health": "Alarm", "error_code": "NA"}
    rc, out, _unused = npu_smi(faulty_a3, "info", "-t", "health", "-i", "2", "-c", "0")
    assert rc == 0 and out == (FIXTURES / "health_chip_alarm_derived.txt").read_text().replace("Alarm", "Critical")
    assert parse_health(out) == {"health": "Critical", "error_code": "80E18005"}


def test_standin_health_ids_out_of_range(faulty_a3):
    assert npu_smi(faulty_a3, "info", "-t", "health", "-i", "8") == (215, "Invalid card id.\n", "")
    assert npu_smi(faulty_a3, "info", "-t", "health", "-i", "7", "-c", "2") == (215, "Invalid chip id.\n", "")
    (faulty_a3 / "shape").write_text("a2\n")
    assert npu_smi(faulty_a3, "info", "-t", "health", "-i", "7", "-c", "1")[0] == 215
    rc, out, _unused = npu_smi(faulty_a3, "info", "-t", "health", "-i", "5")
    assert rc == 0 and "Chip Count                     : 1" in out and parse_health(out)["health"] == "OK"


def test_standin_info_table_reads_the_same_directory(faulty_a3):
    rc, out, _unused = npu_smi(faulty_a3, "info")
    info = parse_npu_smi_info(out)
    assert rc == 0 and info.generation == "A3" and len(info.chips) == 16
    assert {c.index: c.health for c in info.chips if c.health != "OK"} == {4: "Critical", 11: "Alarm"}
    assert [(p.npu, p.chip, p.pid) for p in info.processes] == [(3, 0, 4242)]


def test_standin_other_commands_refused(faulty_a3):
    rc, out, err = npu_smi(faulty_a3, "info", "-t", "board", "-i", "0")
    assert rc == 1 and out == "" and "info -t health" in err
