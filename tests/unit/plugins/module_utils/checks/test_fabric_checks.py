"""A host's own fabric, NPU health, weights and ping findings (module_utils/checks/_fabric_checks.py) from observations
shaped as module_utils/npu/_fabric.py and _weights.py make them, and those observations made for real: hccn_tool and
npu-smi stand-ins (tests/standins) queried through module_utils/npu/_fabric.py, a model directory on disk read by
module_utils/checks/_weights.py (with its digest cache)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from ansible_collections.ascend.sglang.plugins.module_utils.npu import _fabric
from ansible_collections.ascend.sglang.plugins.module_utils.checks import _weights
from ansible_collections.ascend.sglang.plugins.module_utils.checks._fabric_checks import (
    check_health, check_nics, check_pings, check_weights, span,
)

STANDINS = Path(__file__).resolve().parents[5] / "tests" / "standins" / "ascend"
HCCN_TOOL = STANDINS / "usr/local/Ascend/driver/tools/hccn_tool"
NPU_SMI = STANDINS / "usr/local/sbin/npu-smi"
USERS = {d: ["sglang-decode-i0-r1"] for d in range(16)}
LEVELS = {"npu_link": "fail", "npu_net_health": "fail", "npu_ip": "fail"}


class Rows(list):
    def add(self, check, severity, found, expected, fix="", service=None):
        self.append({"check": check, "severity": severity, "found": found, "expected": expected, "fix": fix,
                     "service": service})

    def bad(self):
        return [(r["check"], r["severity"], r["found"]) for r in self if r["severity"] != "ok"]


def test_span() -> None:
    assert span([3]) == "device 3" and span(range(16)) == "devices 0-15"
    assert span([9, 0, 1, 2, 3, 6, 10]) == "devices 0-3, 6, 9-10"


@pytest.fixture(name="standin")
def fixture_standin(tmp_path: Path, monkeypatch) -> Path:
    """The stand-ins' state: an A3 host, 16 healthy NICs at 10.90.1.<d>, /etc/hccn.conf equal to them."""
    monkeypatch.setenv("ASCEND_STANDIN_DIR", str(tmp_path))
    (tmp_path / "shape").write_text("a3\n")
    devices = {str(d): {"ip": f"10.90.1.{d}", "netmask": "255.255.0.0", "link": "UP", "net_health": "Success",
                        "tls": 0} for d in range(16)}
    (tmp_path / "hccn.json").write_text(json.dumps({"devices": devices}))
    (tmp_path / "hccn.conf").write_text("".join(f"address_{d}=10.90.1.{d}\nnetmask_{d}=255.255.0.0\n"
                                                for d in range(16)))
    return tmp_path


def run(argv):
    # observe_nics asks every device at once; the stand-in's first answers each wait for its state file under one
    # lock, so on a loaded machine a call waits for up to 16 Python starts: the bound only stops a hang.
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    return proc.returncode, proc.stdout, proc.stderr


def state(standin: Path, **device_changes) -> None:
    data = json.loads((standin / "hccn.json").read_text())
    for device, change in device_changes.items():
        data["devices"][device.lstrip("d")].update(change)
    (standin / "hccn.json").write_text(json.dumps(data))


def observe(standin: Path) -> dict:
    return _fabric.observe_nics(run, list(range(16)), ["link", "net_health", "ip", "tls"], str(HCCN_TOOL),
                                str(standin / "hccn.conf"))


def test_healthy_nics_give_one_ok_line_per_check(standin) -> None:
    fabric = observe(standin)
    assert fabric["available"] and sorted(fabric["conf"]) == list(range(16))
    assert fabric["devices"]["3"]["tls"]["value"]["switch"] == 0
    rows = Rows()
    check_nics(rows.add, fabric, USERS, LEVELS)
    assert rows.bad() == [] and len(rows) == 3
    assert {r["found"] for r in rows} == {
        "devices 0-15: link status: UP", "devices 0-15: net health status: Success",
        "devices 0-15: ipaddr as in /etc/hccn.conf"}


def test_a_link_down_a_health_fault_and_a_wrong_ip_name_their_devices(standin) -> None:
    state(standin, d7={"link": "DOWN"}, d8={"net_health": "Fault"}, d9={"ip": "10.90.1.99"}, d10={"ip": None})
    rows = Rows()
    check_nics(rows.add, observe(standin), USERS, LEVELS)
    assert rows.bad() == [
        ("npu_link", "fail", "device 7: link status: DOWN"),
        ("npu_net_health", "fail", "device 8: net health status: Fault"),
        ("npu_ip", "fail", "device 9: ipaddr 10.90.1.99, /etc/hccn.conf address_9=10.90.1.9"),
        ("npu_ip", "fail", "device 10: no IP (Get ipconf failed, because no ip was preset there!)")]
    assert all(r["service"] == "sglang-decode-i0-r1" for r in rows)
    # Levels: warn reports as a warning, off not at all.
    rows = Rows()
    check_nics(rows.add, observe(standin), USERS, dict(LEVELS, npu_link="warn", npu_ip="off"))
    assert [b[:2] for b in rows.bad()] == [("npu_link", "warn"), ("npu_net_health", "fail")]


def test_no_hccn_conf_and_no_tool(standin) -> None:
    (standin / "hccn.conf").unlink()
    rows = Rows()
    check_nics(rows.add, observe(standin), USERS, LEVELS)
    assert rows.bad() == [("npu_ip", "fail", "/etc/hccn.conf missing")]
    missing = _fabric.observe_nics(run, [0], ["link"], str(standin / "no-such-tool"), str(standin / "hccn.conf"))
    rows = Rows()
    check_nics(rows.add, missing, USERS, LEVELS)
    assert rows.bad() == [("npu_link", "fail", f"{standin}/no-such-tool not found or not executable")]


def test_a_busy_device_is_retried(standin) -> None:
    """The tool answers busy twice: the query is asked again (bounded) and the answer counts."""
    data = json.loads((standin / "hccn.json").read_text())
    data["busy"] = {"4": 2}
    (standin / "hccn.json").write_text(json.dumps(data))
    fabric = observe(standin)
    assert fabric["devices"]["4"]["link"]["value"] == "UP" and not fabric["devices"]["4"]["link"]["busy"]


def test_pings_from_the_standin(standin) -> None:
    """Loss is decided by the stand-in from reachability: an IP no host owns never answers."""
    (standin / "fabric.json").write_text(json.dumps({}))
    pings = [{"device": 2, "address": "10.90.2.2", "peer": "prefill0", "peer_device": 2, "why": "KV transfer"}]
    results = _fabric.run_pings(run, pings, str(HCCN_TOOL))
    assert results[0]["result"]["loss_pct"] == 100.0 and "recv time out" in results[0]["raw"]
    rows = Rows()
    check_pings(rows.add, results, USERS, "fail")
    assert rows.bad() == [("npu_ping", "fail", "device 2: to the same device of prefill0 (KV transfer): "
                                               "3 packets transmitted, 0 received, 100.00% packet loss")]


def test_ping_results_without_summary_and_clean_ones() -> None:
    rows = Rows()
    results = [{"device": d, "peer": "p", "why": "w", "raw": "", "result": {"transmitted": 3, "received": 3,
                                                                            "loss_pct": 0.0}} for d in range(4)]
    results.append({"device": 5, "peer": "p", "why": "w", "raw": "Execute failed: Link status is down.",
                    "result": None})
    check_pings(rows.add, results, USERS, "warn")
    assert rows.bad() == [("npu_ping", "warn", "device 5: to the same device of p (w): no ping summary "
                                               "(Execute failed: Link status is down.)")]
    assert [r["found"] for r in rows if r["severity"] == "ok"] == ["devices 0-3: to the same device of p (w): "
                                                                   "0.00% packet loss"]


def test_npu_health_from_the_standin(standin) -> None:
    (standin / "faults").write_text("health 3 1 Alarm\nhealth 5 0 Warning\n")
    health = _fabric.observe_health(run, list(range(16)), "A3", str(NPU_SMI))
    assert (health["7"]["npu"], health["7"]["chip"], health["7"]["health"]) == (3, 1, "Alarm")
    rows = Rows()
    check_health(rows.add, health, USERS, "fail")
    assert [b[:2] for b in rows.bad()] == [("npu_health", "fail"), ("npu_health", "warn")]
    assert rows.bad()[0][2].startswith("device 7: NPU 3 chip 1: Alarm")
    assert rows.bad()[1][2].startswith("device 10: NPU 5 chip 0: Warning")
    a2 = _fabric.observe_health(run, [2], "A2", str(NPU_SMI))
    assert (a2["2"]["npu"], a2["2"]["chip"]) == (2, 0)


def model(root: Path, shards: int = 3, missing: tuple[int, ...] = ()) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    names = [f"model-{i:05d}-of-{shards:05d}.safetensors" for i in range(1, shards + 1)]
    (root / "config.json").write_text('{"model_type": "deepseek_v3"}\n')
    (root / "model.safetensors.index.json").write_text(json.dumps(
        {"weight_map": {f"layer.{i}": name for i, name in enumerate(names)}}))
    for i, name in enumerate(names, 1):
        if i not in missing:
            (root / name).write_bytes(bytes([i]) * (1000 * i))
    return root


def test_weights_quick_lists_sizes_and_hashes_the_small_files(tmp_path) -> None:
    root = model(tmp_path / "m", missing=(2,))
    got = _weights.observe(str(root), full=False)
    assert got["files"]["model-00003-of-00003.safetensors"] == 3000 and len(got["files"]) == 4
    assert set(got["digests"]) == {"config.json", "model.safetensors.index.json"}
    assert got["index"] == {"index": "model.safetensors.index.json", "error": None, "shards": 3,
                            "missing": ["model-00002-of-00003.safetensors"]}
    rows = Rows()
    check_weights(rows.add, {str(root): got}, {str(root): ["sglang-prefill-i0-r0"]}, "fail")
    assert rows.bad() == [("weights", "fail", f"{root}: 1 of the 3 shards model.safetensors.index.json names are "
                           "missing: model-00002-of-00003.safetensors")]


def test_weights_full_hashes_every_file_once_and_the_cache_serves_the_next_run(tmp_path) -> None:
    root = model(tmp_path / "m")
    cache: dict = {}
    first = _weights.observe(str(root), full=True, cache=cache)
    assert (first["hashed"], first["cached"]) == (5, 0) and len(first["digests"]) == 5
    second = _weights.observe(str(root), full=True, cache=cache)
    assert (second["hashed"], second["cached"]) == (0, 5) and second["digests"] == first["digests"]
    # A file rewritten (new mtime / inode) is hashed again; the digest shows the change.
    shard = root / "model-00002-of-00003.safetensors"
    os.unlink(shard)
    shard.write_bytes(b"\x09" * 2000)
    third = _weights.observe(str(root), full=True, cache=cache)
    assert third["hashed"] == 1 and third["digests"][shard.name] != first["digests"][shard.name]
    path = tmp_path / "cache" / "weights.json"
    _weights.save_cache(cache, str(path))
    assert _weights.load_cache(str(path)) == json.loads(json.dumps(cache))
    assert oct(path.stat().st_mode & 0o777) == "0o600"


def test_weights_of_a_directory_that_is_not_a_model(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(_weights, "MAX_FILES", 3)
    root = model(tmp_path / "m")
    got = _weights.observe(str(root), full=False)
    assert got["error"] == "more than 3 files: not a model directory"
    assert not _weights.observe(str(tmp_path / "nothing"), full=False)["exists"]
