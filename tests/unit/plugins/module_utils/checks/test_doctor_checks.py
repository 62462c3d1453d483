"""The doctor checks of a running deployment: each service's unit, a restart pending, the health endpoint.  Pure
Python, no host, no Ansible."""

from __future__ import annotations

from ansible_collections.ascend.sglang.plugins.module_utils.checks._preflight import check_host, requirements
from ansible_collections.ascend.sglang.tests.unit.preflight_hosts import ctx_of, healthy, only, problems


def test_doctor_service_states_and_health(pd32):
    profile, p = pd32
    ctx = ctx_of(profile, p, mode="doctor")
    host_plan = p["hosts"]["prefill0"]
    assert requirements(host_plan, ctx)["health"] == [{"service": "sglang-prefill-i0-r0",
                                                       "url": "http://10.0.1.1:8000/health"}]
    obs = healthy(host_plan, ctx)
    obs["units"] = {"sglang-prefill-i0-r0": {"load": "loaded", "active": "failed", "sub": "failed"}}
    f = only(check_host("prefill0", host_plan, obs, ctx), "service")[0]
    assert f.severity == "fail" and "journalctl -u sglang-prefill-i0-r0" in f.fix
    obs["units"] = {"sglang-prefill-i0-r0": {"load": "loaded", "active": "active", "sub": "running"}}
    obs["listeners"] = [{"address": "10.0.1.1", "port": port, "pids": [1]} for port in (8000, 8998, 24669)]
    obs["owners"] = {"1": "sglang-prefill-i0-r0.service"}
    obs["health"] = {"sglang-prefill-i0-r0": {"status": 200, "error": None}}
    assert problems(check_host("prefill0", host_plan, obs, ctx)) == []
    obs["health"] = {"sglang-prefill-i0-r0": {"status": 503, "error": None}}
    assert only(check_host("prefill0", host_plan, obs, ctx), "health")[0].found.endswith("503")
    obs["units"] = {"sglang-prefill-i0-r0": {"load": "not-found", "active": "inactive", "sub": "dead"}}
    obs["listeners"], obs["health"] = [], {}
    assert only(check_host("prefill0", host_plan, obs, ctx), "service")[0].severity == "warn"


def test_doctor_reports_a_restart_pending(pd32):
    """A running service whose start record differs from its files (module_utils/files/_started.py) is a warning that
    names the unit, the reason and the files, and how to heal it; one that runs its files is ok."""
    profile, p = pd32
    ctx = ctx_of(profile, p, mode="doctor")
    host_plan = p["hosts"]["prefill0"]
    assert requirements(host_plan, ctx)["started"] == ["sglang-prefill-i0-r0.service",
                                                       "sglang-watchdog-sglang-prefill-i0-r0.service"]
    assert requirements(host_plan, ctx_of(profile, p))["started"] == []  # preflight does not look
    obs = healthy(host_plan, ctx)
    obs["units"] = {"sglang-prefill-i0-r0": {"load": "loaded", "active": "active", "sub": "running"}}
    current = {"unit": "sglang-prefill-i0-r0.service", "running": True, "pending": False, "reason": None, "files": []}
    obs["started"] = {"sglang-prefill-i0-r0.service": current}
    assert [(f.severity, f.found) for f in check_host("prefill0", host_plan, obs, ctx) if f.check == "config"] == [
        ("ok", "current")]
    obs["started"]["sglang-prefill-i0-r0.service"] = dict(current, pending=True, reason="files changed since it started",
                                                          files=["/etc/sglang/sglang-prefill-i0-r0.env"])
    f = only(check_host("prefill0", host_plan, obs, ctx), "config")[0]
    assert f.severity == "warn" and f.service == "sglang-prefill-i0-r0"
    assert f.found == ("RESTART PENDING: sglang-prefill-i0-r0.service: files changed since it started "
                       "(sglang-prefill-i0-r0.env)")
    assert "run the deployment again" in f.fix
