"""The software checks: driver / CANN missing or too old, the runtime's release, the container engine, image,
device nodes and mounts.  Pure Python, no host, no Ansible."""

from __future__ import annotations

from ansible_collections.ascend.sglang.plugins.module_utils.checks._preflight import check_host, requirements
from ansible_collections.ascend.sglang.tests.unit.plans import make_plan
from ansible_collections.ascend.sglang.tests.unit.preflight_hosts import PD32, ctx_of, healthy, only, problems


def test_driver_and_cann_missing_or_too_old(pd32):
    profile, p = pd32
    ctx = ctx_of(profile, p, min_driver_version="25.5.0", min_cann_version="8.5.0")
    obs = healthy(p["hosts"]["prefill0"], ctx)
    findings = check_host("prefill0", p["hosts"]["prefill0"], obs, ctx)
    assert only(findings, "driver")[0].found == "driver 25.3.rc1"
    assert ">= 8.5.0" in only(findings, "cann")[0].expected
    obs["driver"] = {"path": "/usr/local/Ascend/driver/version.info", "version": None, "error": "No such file"}
    obs["toolkit"] = {"path": None, "version": None, "searched": ["/a/*.info", "/b/*.info"], "error": "not found"}
    findings = check_host("prefill0", p["hosts"]["prefill0"], obs, ctx_of(profile, p))
    assert "No such file" in only(findings, "driver")[0].found
    assert "/a/*.info and 1 more" in only(findings, "cann")[0].found
    ok_ctx = ctx_of(profile, p, min_driver_version="24.1.rc2", min_cann_version="8.3.RC1")
    assert problems(check_host("prefill0", p["hosts"]["prefill0"], healthy(p["hosts"]["prefill0"], ok_ctx), ok_ctx)) == []


def test_the_driver_the_releases_cann_needs(pd32):
    """Without sglang_min_driver_version, the driver is held against the Ascend HDK the planned release's CANN
    needs (the reference stack's driver): an older one fails, naming both; the operator's minimum overrides it,
    and a stack that names no driver asks only for one."""
    profile, p = pd32
    stack = {"release": "0.5.13.post1", "cann": "9.0.0", "driver": "25.5.2"}
    ctx = ctx_of(profile, p, stack_reference=stack)
    obs = healthy(p["hosts"]["prefill0"], ctx)
    [finding] = only(check_host("prefill0", p["hosts"]["prefill0"], obs, ctx), "driver")
    assert finding.severity == "fail" and finding.found == "driver 25.3.rc1"
    assert finding.expected.startswith(">= 25.5.2 (the Ascend HDK that CANN 9.0.0 of SGLang 0.5.13.post1 needs")
    assert "model load" in finding.fix

    def driver(context):
        [found] = [f for f in check_host("prefill0", p["hosts"]["prefill0"], obs, context) if f.check == "driver"]
        return found

    obs["driver"] = dict(obs["driver"], version="25.5.2")
    assert driver(ctx).severity == "ok"
    override = ctx_of(profile, p, stack_reference=stack, min_driver_version="25.6.0")
    assert driver(override).expected == ">= 25.6.0 (sglang_min_driver_version)"
    obs["driver"] = dict(obs["driver"], version="24.1.rc2")
    assert driver(ctx_of(profile, p, stack_reference=dict(stack, driver="unknown"))).expected == "present"


def test_runtime_missing_or_other_release(pd32):
    profile, p = pd32
    ctx = ctx_of(profile, p)
    obs = healthy(p["hosts"]["prefill0"], ctx)
    key = "python3|sglang"
    obs["runtimes"][key] = {"version": "0.5.5", "error": None}
    f = only(check_host("prefill0", p["hosts"]["prefill0"], obs, ctx), "runtime")[0]
    assert f.found == "sglang 0.5.5 (python3)" and "0.5.6.post2" in f.expected and "sglang_release" in f.fix
    obs["runtimes"][key] = {"version": None, "error": "sglang is not installed for python3"}
    f = only(check_host("prefill0", p["hosts"]["prefill0"], obs, ctx), "runtime")[0]
    assert "not installed" in f.found and "sglang==0.5.6.post2" in f.fix
    robs = healthy(p["hosts"]["router0"], ctx)
    robs["runtimes"]["python3|sglang-router"] = {"version": "0.2.4", "error": None}
    f = only(check_host("router0", p["hosts"]["router0"], robs, ctx), "runtime")[0]
    assert "sglang-router 0.2.4" in f.found and "0.3.0" in f.expected and "sglang_router_release" in f.fix


def test_container_host_checks_engine_image_devices_not_host_cann_or_python():
    profile, p = make_plan(PD32, {"sglang_runtime": "container"}, prefill=2, decode=2, router=1)
    host_plan = p["hosts"]["decode0"]
    ctx = ctx_of(profile, p)
    req = requirements(host_plan, ctx)
    assert req["runtimes"] == [] and not req["toolkit"]
    assert not any(path.endswith("set_env.sh") for path in req["paths"])  # the image brings CANN
    spec = req["container"]
    assert spec["engine"] == "/usr/bin/podman" and spec["image"] == "lmsysorg/sglang:cann8.3.rc2-a3-release20260106"
    assert spec["devices"][:2] == ["/dev/davinci0", "/dev/davinci1"] and "/dev/hisi_hdc" in spec["devices"]
    assert "/usr/local/Ascend/driver" in spec["mounts"] and "/models/m" in spec["mounts"]
    observed = healthy(host_plan, ctx)
    observed["toolkit"] = None
    observed["container"] = {"engine": "/usr/bin/podman", "version": "podman version 4.3.1", "image": "absent",
                             "pullable": True, "pull_error": None,
                             "devices": {d: "char" for d in spec["devices"]},
                             "mounts": {m: "dir" for m in spec["mounts"]}}
    assert problems(check_host("decode0", host_plan, observed, ctx)) == []
    observed["container"] = dict(observed["container"], pullable=False, pull_error="manifest unknown",
                                 devices=dict(observed["container"]["devices"], **{"/dev/davinci3": "missing"}),
                                 mounts=dict(observed["container"]["mounts"], **{"/usr/local/dcmi": "missing"}))
    found = check_host("decode0", host_plan, observed, ctx)
    assert sorted(problems(found)) == [("device", "fail"), ("image", "fail"), ("mount", "fail")]
    assert "manifest unknown" in only(found, "image")[0].found
    observed["container"] = {"engine": None}
    assert problems(check_host("decode0", host_plan, observed, ctx)) == [("container", "fail")]
