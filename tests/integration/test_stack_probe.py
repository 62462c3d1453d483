"""The stack probe for real: ``_server_stack.PROBE_SCRIPT`` run by a real interpreter (through ``_host_probe``,
bash and the launcher's environment lines, as on a host) against the stand-in torch / torch_npu
(tests/standins/torch, tests/standins/torch_npu) and metadata-only distributions of the rest of the
reference stack; its report goes through the preflight checks of a real plan.

Nothing is installed: the stand-ins are on the probe's PYTHONPATH only, the metadata in a temporary
directory, the NPU shape in a temporary stand-in directory.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ansible_collections.ascend.sglang.plugins.module_utils.checks._findings import Context
from ansible_collections.ascend.sglang.plugins.module_utils.collect._host_probe import observe, observe_toolkit, runtime_stack
from ansible_collections.ascend.sglang.plugins.module_utils.checks._preflight import check_host, requirements
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._planner import plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import load_profile
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._releases import load_release_tables
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _settings as table
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._topology import build_inventory

ROOT = Path(__file__).resolve().parents[2]
STANDINS = ROOT / "tests" / "standins"
TOOLKIT_INFO = str(STANDINS / "ascend/usr/local/Ascend/ascend-toolkit/latest/*-linux/ascend_toolkit_install.info")
PROFILE = "qwen3_480b_a3_8c_mixed_3k5_1k5_50ms"   # A3, reference release 0.5.6.post2, 16 devices of the node
REFERENCE = load_release_tables()["sglang"].stack("0.5.6.post2")


@pytest.fixture(scope="module")
def planned():
    profile = load_profile(PROFILE)
    inv = build_inventory({"mixed": ["node0"]}, {"node0": {"sglang_host_ip": "127.0.0.1"}},
                          {"sglang_model_path": "/models/m", "sglang_python": sys.executable})
    return profile, plan(profile, inv).as_dict()


@pytest.fixture
def host(tmp_path, monkeypatch):
    """A host whose server interpreter has the reference stack: stand-in torch / torch_npu at the reference
    versions, metadata of the other packages, an A3 node."""
    site = tmp_path / "site"
    packages = REFERENCE.known()
    for name in ("sglang", "transformers", "sgl-kernel-npu", "deep-ep"):
        dist = site / f"{name.replace('-', '_')}-{packages[name]}.dist-info"
        dist.mkdir(parents=True)
        (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {packages[name]}\n")
        # What packages_distributions() maps the import name from (the wheels' top-level package).
        (dist / "top_level.txt").write_text(name.replace("-", "_") + "\n")
    standin = tmp_path / "ascend-standin"
    standin.mkdir()
    (standin / "shape").write_text("a3\n")
    monkeypatch.setenv("PYTHONPATH", ":".join([str(STANDINS / "torch"), str(STANDINS / "torch_npu"), str(site)]))
    monkeypatch.setenv("ASCEND_STANDIN_DIR", str(standin))
    monkeypatch.setenv("STANDIN_TORCH_VERSION", packages["torch"])
    monkeypatch.setenv("STANDIN_TORCH_NPU_VERSION", packages["torch_npu"])
    for var in ("STANDIN_TORCH_NPU_IMPORT_ERROR", "STANDIN_TORCH_NPU_IMPORT_HANG", "ASCEND_RT_VISIBLE_DEVICES"):
        monkeypatch.delenv(var, raising=False)
    return standin


def probe(planned, policy="warn", timeout=120):
    """Runs the probe as the module does and returns (stack report, stack findings)."""
    profile, p = planned
    ctx = Context(hardware=profile.hardware, releases=p["releases"], profile=profile.id,
                  stack_reference=REFERENCE.as_dict(), stack_policy=policy)
    host_plan = p["hosts"]["node0"]
    req = requirements(host_plan, ctx)
    runtimes = {r["key"]: runtime_stack(r, timeout=timeout) for r in req["runtimes"]}
    observed = {"toolkit": observe_toolkit([TOOLKIT_INFO]), "runtimes": runtimes}
    findings = [f for f in check_host("node0", host_plan, observed, ctx) if f.check.startswith(("stack", "runtime"))]
    (result,) = runtimes.values()
    return result, findings


def failures(findings):
    return {(f.check, f.severity, f.found) for f in findings if f.severity != "ok"}


def test_matching_stack_passes(planned, host):
    result, findings = probe(planned)
    assert result["version"] == "0.5.6.post2" and result["stack"]["runtime"]["device_count"] == 16
    assert failures(findings) == set()
    (summary,) = [f for f in findings if f.check == "stack"]
    assert summary.found == ("sglang 0.5.6.post2, torch 2.8.0+cpu, torch_npu 2.8.0.post2.dev20251224, transformers "
                             "4.57.1, sgl-kernel-npu 2025.12.25, deep-ep 1.0.0+95728843.cann.8.3.rc2.b210, "
                             "mf_adapter -, 16 NPUs visible to torch")


def test_torch_npu_for_another_torch(planned, host, monkeypatch):
    monkeypatch.setenv("STANDIN_TORCH_VERSION", "2.9.1")
    _unused, findings = probe(planned)
    assert ("stack_torch_npu", "fail", "torch 2.9.1, torch_npu 2.8.0.post2.dev20251224") in failures(findings)
    assert ("stack_reference", "warn", "torch 2.9.1") in failures(findings)
    _unused, findings = probe(planned, policy="fail")
    assert ("stack_reference", "fail", "torch 2.9.1") in failures(findings)


def test_too_few_npus(planned, host, monkeypatch):
    (host / "shape").write_text("a2\n")   # the stand-in driver's node has 8 NPUs; the plan uses 16
    _unused, findings = probe(planned)
    assert failures(findings) == {("stack_npus", "fail", "torch.npu.device_count() = 8")}
    (host / "shape").write_text("a3\n")
    monkeypatch.setenv("ASCEND_RT_VISIBLE_DEVICES", "0,1,2,3")
    _unused, findings = probe(planned)
    assert failures(findings) == {
        ("stack_npus", "fail", "torch.npu.device_count() = 4 (ASCEND_RT_VISIBLE_DEVICES=0,1,2,3)")}


def test_torch_npu_import_failure_is_its_error_text(planned, host, monkeypatch):
    monkeypatch.setenv("STANDIN_TORCH_NPU_IMPORT_ERROR",
                       "libhccl.so: cannot open shared object file: No such file or directory")
    result, findings = probe(planned)
    assert failures(findings) == {("stack_import", "fail", "import torch_npu: ImportError: libhccl.so: cannot open "
                                   "shared object file: No such file or directory")}
    assert "Traceback" not in repr(result)


def test_missing_torch_npu_and_sglang(planned, host, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(STANDINS / "torch"))
    result, findings = probe(planned)
    assert ("stack_import", "fail", "import torch_npu: ModuleNotFoundError: No module named 'torch_npu'") \
        in failures(findings)
    assert result["version"] is None   # no sglang metadata on this path either: the runtime check says so
    assert ("runtime", "fail", f"{sys.executable}: sglang is not installed for {sys.executable}") in failures(findings)


def test_an_import_that_never_returns_is_bounded_and_keeps_the_versions(planned, host, monkeypatch):
    monkeypatch.setenv("STANDIN_TORCH_NPU_IMPORT_HANG", "1")
    result, findings = probe(planned, timeout=5)
    # The versions were printed before the import: the release check and the summary still have them.
    assert result["version"] == "0.5.6.post2"
    assert failures(findings) == {("stack_import", "fail", f"{sys.executable} ended while importing torch / torch_npu: "
                                   "timed out after 5 s")}


def test_stack_mode_after_the_install_runs_the_probe_and_reads_the_toolkit(planned, host, monkeypatch):
    """deploy.yml's check after sglang_server_install: the whole observe step of the module, the stack alone."""
    profile, p = planned
    monkeypatch.setenv("STANDIN_TORCH_NPU_VERSION", "2.7.1")
    ctx = Context(mode="stack", hardware=profile.hardware, releases=p["releases"], profile=profile.id,
                  stack_reference=REFERENCE.as_dict(), installed_by_roles=frozenset({"sglang"}))
    host_plan = p["hosts"]["node0"]
    run = table.defaults(table.RUN)
    observed = observe(requirements(host_plan, ctx), npu_smi="/nonexistent/npu-smi", toolkit_info=[TOOLKIT_INFO],
                       runtime_timeout=120, driver_info=run["sglang_npu_driver_info"],
                       probe_timeout=run["sglang_preflight_probe_timeout"], hccn_tool=run["sglang_hccn_tool"])
    assert observed["npu"] is None and observed["toolkit"]["version"] == "8.3.RC2"
    findings = check_host("node0", host_plan, observed, ctx)
    assert failures(findings) == {("stack_torch_npu", "fail", "torch 2.8.0+cpu, torch_npu 2.7.1"),
                                  ("stack_reference", "warn", "torch_npu 2.7.1")}
    assert {f.check for f in findings} <= {"runtime", "stack", "stack_torch_npu", "stack_npus", "stack_cann",
                                           "stack_reference"}
