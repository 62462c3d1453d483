"""The server's runtime stack: parsing the probe's report and every finding on it (pure, no host).

Host plans come from the real planner, the reference environments from profiles/_releases.yml; the
probe output is what ``_server_stack.PROBE_SCRIPT`` prints (the integration test runs the script itself).
"""

from __future__ import annotations

import json

import pytest

from ansible_collections.ascend.sglang.plugins.module_utils.checks import _server_stack
from ansible_collections.ascend.sglang.plugins.module_utils.checks._findings import Context
from ansible_collections.ascend.sglang.plugins.module_utils.checks._preflight import check_host, requirements
from ansible_collections.ascend.sglang.plugins.plugin_utils.report._preflight_report import render_table
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._releases import load_release_tables
from ansible_collections.ascend.sglang.tests.unit.plans import make_plan

TABLE = load_release_tables()["sglang"]
REFERENCE = TABLE.stack("0.5.6.post2").as_dict()
A2_MIXED = "qwen3_32b_a2_8c_mixed_2k_2k_50ms"     # A2, --tp-size 4, --base-gpu-id 4: devices 4-7 of 8
PD32 = "deepseek_r1_a3_32c_pd_6k_1k6_20ms"


def matching(count: int = 16, **versions: str) -> dict:
    """A stack report equal to the reference environment (overridable per import name)."""
    ref = REFERENCE["packages"]
    wanted = {"sglang": ref["sglang"], "torch": ref["torch"], "torch_npu": ref["torch_npu"],
              "transformers": ref["transformers"], "sgl_kernel_npu": ref["sgl-kernel-npu"],
              "deep_ep": ref["deep-ep"], "mf_adapter": "1.0.8"}
    wanted.update(versions)
    return {"python": "3.11.6",
            "packages": {m: {"distribution": m, "version": v or None} for m, v in wanted.items()},
            "runtime": {"imports": {"torch": None, "torch_npu": None}, "visible_devices": None,
                        "torch_version": wanted["torch"], "torch_npu_version": wanted["torch_npu"],
                        "is_available": count > 0, "device_count": count, "cann_runtime": "8.3.RC2"},
            "error": None}


def run_check(stack, needed=(16, "svc uses devices 0-15 (--base-gpu-id 0)"), toolkit="8.3.RC2",
              reference=REFERENCE, policy="warn"):
    return _server_stack.check(stack, "/opt/sglang/bin/python3", needed, toolkit, reference, policy)


def bad(findings):
    return [(f[0], f[1]) for f in findings if f[1] != "ok"]


def named(findings, check):
    hits = [f for f in findings if f[0] == check and f[1] != "ok"]
    assert hits, f"no {check} finding in {bad(findings)}"
    return hits


# ------------------------------------------------------------------ the data

def test_every_supported_release_has_a_reference_environment():
    assert sorted(TABLE.stacks) == sorted(TABLE.releases)
    for release, stack in TABLE.stacks.items():
        assert stack.packages["sglang"] == release
        assert stack.source and stack.cann
        assert set(stack.wheelhouse) <= set(stack.packages)


def test_reference_image_stack_and_later_releases_unknowns():
    ref = TABLE.stack("0.5.6.post2")
    assert ref.cann == "8.3.RC2"
    assert ref.known()["torch"] == "2.8.0+cpu" and ref.known()["deep-ep"] == "1.0.0+95728843.cann.8.3.rc2.b210"
    later = TABLE.stack("0.5.23")
    # Nothing documents the Ascend side of later releases: unknown, so neither compared nor pinned.
    assert later.cann == "unknown" and "torch_npu" not in later.known() and later.known()["transformers"] == "5.19.0"


# ------------------------------------------------------------------ parsing the probe's output

def lines(**kinds) -> str:
    return "".join(f"{_server_stack.MARK}{kind} {json.dumps(data)}\n" for kind, data in kinds.items())


def test_parse_probe_keeps_versions_when_the_import_crashed():
    stack = matching()
    noise = "[W] some warning torch_npu printed\n"
    full = _server_stack.parse_probe(0, noise + lines(versions={"python": "3.11.6", "packages": stack["packages"]},
                                                      runtime=stack["runtime"]), "", "py")
    assert full["version"] == "0.5.6.post2" and full["error"] is None and full["stack"]["runtime"]["device_count"] == 16
    crashed = _server_stack.parse_probe(-11, lines(versions={"python": "3.11.6", "packages": stack["packages"]}),
                                        "Fatal Python error: Segmentation fault", "py")
    assert crashed["version"] == "0.5.6.post2" and crashed["stack"]["runtime"] is None
    assert "Segmentation fault" in crashed["stack"]["error"]
    findings = run_check(crashed["stack"])
    assert named(findings, "stack_import")[0][2] == crashed["stack"]["error"]


def test_parse_probe_without_output_reports_the_last_error_line():
    got = _server_stack.parse_probe(127, "", "line one\ninterpreter /opt/x/bin/python3 not found in PATH\n", "/opt/x/bin/python3")
    assert got == {"version": None, "error": "interpreter /opt/x/bin/python3 not found in PATH", "stack": None}
    stack = matching(sglang="")
    got = _server_stack.parse_probe(0, lines(versions={"python": "3.11", "packages": stack["packages"]},
                                             runtime=stack["runtime"]), "", "py")
    assert got["version"] is None and got["error"] == "sglang is not installed for py"


# ------------------------------------------------------------------ findings

def test_matching_stack_has_no_finding_and_one_summary_row():
    findings = run_check(matching())
    assert bad(findings) == []
    summary = [f for f in findings if f[0] == "stack"]
    assert len(summary) == 1
    assert "torch_npu 2.8.0.post2.dev20251224" in summary[0][2] and "16 NPUs visible" in summary[0][2]


def test_torch_and_torch_npu_major_minor_differ():
    f = named(run_check(matching(torch="2.9.1")), "stack_torch_npu")[0]
    assert f[1] == "fail" and f[2] == "torch 2.9.1, torch_npu 2.8.0.post2.dev20251224"
    assert "2.9" in f[3] and "2.8.0+cpu" in f[4]
    # Same major.minor, another patch: not this finding (the reference comparison notes the difference).
    assert not [x for x in run_check(matching(torch="2.8.1")) if x[0] == "stack_torch_npu" and x[1] != "ok"]


def test_torch_npu_version_from_the_module_when_metadata_is_absent():
    stack = matching(torch_npu="")
    stack["runtime"]["torch_npu_version"] = "2.7.1"
    assert named(run_check(stack), "stack_torch_npu")[0][2] == "torch 2.8.0+cpu, torch_npu 2.7.1"


def test_deep_ep_built_for_another_cann():
    assert _server_stack.built_for_cann("1.0.0+95728843.cann.8.3.rc2.b210") == "8.3.RC2"
    assert _server_stack.built_for_cann("1.0.0") is None
    f = named(run_check(matching(), toolkit="8.5.0"), "stack_cann")[0]
    assert f[1] == "fail" and "built for CANN 8.3.RC2" in f[2] and "8.5.0" in f[3]
    assert not [x for x in run_check(matching()) if x[0] == "stack_cann" and x[1] != "ok"]


def test_import_failure_is_the_error_text():
    stack = matching()
    stack["runtime"] = {"imports": {"torch": None, "torch_npu": "ImportError: libhccl.so: cannot open shared object "
                                    "file: No such file or directory"}, "visible_devices": None,
                        "torch_version": "2.8.0+cpu"}
    f = named(run_check(stack), "stack_import")[0]
    assert f[1] == "fail" and f[2] == ("import torch_npu: ImportError: libhccl.so: cannot open shared object file: "
                                       "No such file or directory")
    assert "Traceback" not in " ".join(f) and "does not load" in f[4]
    stack["runtime"]["imports"]["torch_npu"] = "ModuleNotFoundError: No module named 'torch_npu'"
    assert "install torch_npu" in named(run_check(stack), "stack_import")[0][4]


def test_too_few_npus_visible():
    f = named(run_check(matching(count=8)), "stack_npus")[0]
    assert f[1] == "fail" and f[2] == "torch.npu.device_count() = 8" and f[3].startswith(">= 16 NPUs")
    stack = matching(count=0)
    assert "is_available() is False" in named(run_check(stack), "stack_npus")[0][2]
    stack = matching(count=2)
    stack["runtime"]["visible_devices"] = "0,1"
    assert "ASCEND_RT_VISIBLE_DEVICES=0,1" in named(run_check(stack), "stack_npus")[0][2]


@pytest.mark.parametrize("policy, severity", [("warn", "warn"), ("fail", "fail")])
def test_versions_other_than_the_reference(policy, severity):
    findings = run_check(matching(transformers="4.57.3", deep_ep=""), policy=policy)
    got = {f[2]: f[1] for f in named(findings, "stack_reference")}
    assert got == {"transformers 4.57.3": severity, "deep-ep not installed": severity}
    assert not [f for f in run_check(matching(transformers="4.57.3"), policy="off") if f[0] == "stack_reference"]


def test_host_cann_other_than_the_reference():
    stack = matching(deep_ep="")
    f = [x for x in named(run_check(stack, toolkit="8.2.RC1"), "stack_reference") if "CANN" in x[2]][0]
    assert f[2] == "CANN 8.2.RC1" and "8.3.RC2" in f[3]


def test_unknown_reference_versions_are_not_compared():
    later = TABLE.stack("0.5.23").as_dict()
    findings = run_check(matching(sglang="0.5.23", transformers="5.19.0"), reference=later)
    # torch, torch_npu, the Ascend kernels and CANN are unknown for 0.5.23: nothing to differ from.
    assert bad(findings) == []


# ------------------------------------------------------------------ through the preflight (plan, table)


def stack_findings(profile, p, host, stack, **ctx_kw):
    ctx = Context(hardware=profile.hardware, releases=p["releases"], profile=profile.id,
                  stack_reference=TABLE.stack(p["releases"]["sglang"]).as_dict(), **ctx_kw)
    host_plan = p["hosts"][host]
    req = requirements(host_plan, ctx)
    observed = {"toolkit": {"version": "8.3.RC2"},
                "runtimes": {r["key"]: {"version": r["expected"], "error": None,
                                        "stack": stack if r["stack"] else None} for r in req["runtimes"]}}
    return req, [f for f in check_host(host, host_plan, observed, ctx) if f.check.startswith("stack")]


def test_one_stack_probe_per_server_interpreter_none_on_the_router():
    profile, p = make_plan(PD32, prefill=2, decode=2, router=1)
    ctx = Context(hardware=profile.hardware, releases=p["releases"], profile=profile.id)
    server = requirements(p["hosts"]["prefill0"], ctx)["runtimes"]
    assert [(r["package"], r["stack"]) for r in server] == [("sglang", True)]
    assert server[0]["modules"] == list(_server_stack.MODULES)
    router = requirements(p["hosts"]["router0"], ctx)["runtimes"]
    assert [(r["package"], r["stack"]) for r in router] == [("sglang-router", False)]


def test_npus_needed_count_base_gpu_id():
    profile, p = make_plan(A2_MIXED, mixed=1)
    # --tp-size 4 from --base-gpu-id 4: devices 4-7, so 8 must be visible although 4 are used.
    _unused, findings = stack_findings(profile, p, "mixed0", matching(count=4))
    f = [x for x in findings if x.check == "stack_npus"][0]
    assert f.severity == "fail" and f.expected.startswith(">= 8 NPUs") and "--base-gpu-id 4" in f.expected
    _unused, findings = stack_findings(profile, p, "mixed0", matching(count=8))
    assert [(x.check, x.severity) for x in findings if x.severity != "ok"] == []


def test_stack_rows_are_in_the_table_even_when_ok():
    profile, p = make_plan(A2_MIXED, mixed=1)
    _unused, findings = stack_findings(profile, p, "mixed0", matching(count=8))
    rows = [line for line in render_table(findings, widths=(6, 24, 30, 300, 120, 52)) if line.startswith("| OK")]
    assert len(rows) == 1 and "| stack " in rows[0] and "torch_npu 2.8.0.post2.dev20251224" in rows[0]
    assert "8 NPUs visible to torch" in rows[0]  # the other ok rows (stack_npus, ...) stay hidden


def test_stack_installed_by_the_role_is_only_looked_at_before_start():
    """Preflight probes it as it is now, with every distribution, for deploy.yml's install decision: whatever the
    probe finds (here no NPU visible) is not a finding of preflight (the stack play, or the look's own stack
    checks, report it)."""
    profile, p = make_plan(A2_MIXED, mixed=1)
    req, findings = stack_findings(profile, p, "mixed0", matching(count=0), installed_by_roles=frozenset({"sglang"}))
    assert [(r["package"], r["distributions"]) for r in req["runtimes"]] == [("sglang", True)] and findings == []


# ------------------------------------------------------------------ stack mode: after the roles installed the stack

def test_stack_mode_looks_at_the_server_interpreter_and_the_toolkit_alone():
    profile, p = make_plan(PD32, prefill=1, decode=2, router=1)
    ctx = Context(mode="stack", hardware=profile.hardware, releases=p["releases"], profile=profile.id,
                  installed_by_roles=frozenset({"sglang", "sglang-router"}))
    req = requirements(p["hosts"]["decode1"], ctx)
    # Installed by the roles, yet probed: this mode runs right after the install.
    assert [(r["package"], r["stack"]) for r in req["runtimes"]] == [("sglang", True)]
    assert req["toolkit"] is True and req["npu"] is False
    assert not any(req[key] for key in ("paths", "names", "nics", "ports", "probes", "units", "health"))
    router = requirements(p["hosts"]["router0"], ctx)
    assert router["runtimes"] == [] and router["toolkit"] is False


def test_stack_mode_reports_the_runtime_and_stack_findings_only():
    profile, p = make_plan(PD32, prefill=1, decode=2, router=1)
    host_plan = p["hosts"]["prefill0"]
    ctx = Context(mode="stack", hardware=profile.hardware, releases=p["releases"], profile=profile.id,
                  stack_reference=TABLE.stack(p["releases"]["sglang"]).as_dict())
    req = requirements(host_plan, ctx)
    (runtime,) = req["runtimes"]
    # Nothing but the interpreter and the toolkit was observed: no npu-smi, port, path or peer finding.
    observed = {"toolkit": {"version": "8.3.RC2"},
                "runtimes": {runtime["key"]: {"version": runtime["expected"], "error": None,
                                              "stack": matching(torch_npu="2.7.1")}}}
    findings = check_host("prefill0", host_plan, observed, ctx)
    assert {f.check for f in findings} == {"runtime", "stack", "stack_torch_npu", "stack_npus", "stack_cann",
                                           "stack_reference"}
    assert [(f.check, f.severity, f.found) for f in findings if f.severity == "fail"] == [
        ("stack_torch_npu", "fail", "torch 2.8.0+cpu, torch_npu 2.7.1")]
    # The interpreter that did not run is the runtime finding, as in preflight.
    observed["runtimes"][runtime["key"]] = {"version": None, "error": "interpreter /opt/sglang/bin/python3 not found",
                                            "stack": None}
    findings = check_host("prefill0", host_plan, observed, ctx)
    assert [(f.check, f.severity) for f in findings] == [("runtime", "fail")]
    assert "not found" in findings[0].found
