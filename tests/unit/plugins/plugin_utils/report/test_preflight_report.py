"""Every host's preflight findings -> one table and a JSON report with its status and exit code; a host without a
usable result is a failure.  Pure Python, no host, no Ansible."""

from __future__ import annotations

from ansible_collections.ascend.sglang.plugins.module_utils.checks._preflight import check_host
from ansible_collections.ascend.sglang.plugins.plugin_utils.report._preflight_report import aggregate, render_table, report
from ansible_collections.ascend.sglang.tests.unit.preflight_hosts import ctx_of, healthy


def test_aggregated_table_names_host_check_found_expected_fix(pd32):
    profile, p = pd32
    ctx = ctx_of(profile, p)
    results = {}
    for host in p["hosts"]:
        obs = healthy(p["hosts"][host], ctx)
        if host == "decode1":
            obs["npu"]["info"]["chips"][3]["processes"] = [{"npu": 1, "chip": 1, "pid": 990711, "name": "python",
                                                           "memory_mb": 7746}]
        if host == "prefill1":
            obs["npu"]["info"]["chips"][2]["health"] = "Warning"
        results[host] = {"findings": [f.as_dict() for f in check_host(host, p["hosts"][host], obs, ctx)]}
    results["router0"] = {"unreachable": True, "msg": "ssh: connect to host router0 port 22: Connection timed out"}
    findings = aggregate(results)
    table = "\n".join(render_table(findings))
    header = table.splitlines()[1]
    for column in ("status", "host", "check", "found", "expected", "how to fix"):
        assert column in header
    assert "decode1" in table and "device_idle" in table and "990711" in table and "no process on the" in table
    assert "router0" in table and "reachable" in table and "Connection timed out" in table
    assert table.index("FAIL") < table.index("WARN")  # failures first
    doc = report(results, profile=profile.id)
    assert (doc["status"], doc["exit_code"]) == ("failures", 2)
    assert doc["counts"]["fail"] == 2 and doc["counts"]["warn"] == 1
    assert {p_["host"] for p_ in doc["problems"]} == {"decode1", "prefill1", "router0"}
    assert doc["hosts"]["prefill0"]["status"] == "ok"


def test_exit_codes_and_missing_results():
    ok = {"h1": {"findings": [{"host": "h1", "check": "port", "severity": "ok", "found": "", "expected": "", "fix": ""}]}}
    assert report(ok)["exit_code"] == 0 and render_table(aggregate(ok)) == ["(no findings)"]
    warn = {"h1": {"findings": [{"host": "h1", "check": "nic", "severity": "warn", "found": "x", "expected": "y",
                                 "fix": "z"}]}}
    assert (report(warn)["status"], report(warn)["exit_code"]) == ("warnings", 1)
    assert report({"h1": None})["exit_code"] == 2
    failed = report({"h1": {"failed": True, "msg": "MODULE FAILURE"}})
    assert failed["exit_code"] == 2 and failed["problems"][0]["check"] == "preflight"


def test_long_cells_wrap_without_losing_text():
    long_fix = "word " * 40
    findings = aggregate({"h": {"findings": [{"host": "h", "check": "model", "severity": "fail", "found": "f",
                                              "expected": "e", "fix": long_fix}]}})
    lines = render_table(findings)
    assert " ".join(" ".join(line.split("|")[6].split()) for line in lines[3:-1]).split() == long_fix.split()
