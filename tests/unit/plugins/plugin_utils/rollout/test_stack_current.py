"""Whether deploy.yml's install has anything to do on a host, from preflight's look at its stack
(plugins/plugin_utils/rollout/_stack.py): pip's check-mode rule, and every doubt keeps the host in the stack play."""

from __future__ import annotations

import sys
import subprocess

from ansible_collections.ascend.sglang.plugins.module_utils.checks._server_stack import PROBE_SCRIPT, parse_probe
from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._stack import looks, present, stack_current

MARKERS = {"implementation_name": "cpython", "implementation_version": "3.11.6", "os_name": "posix",
           "platform_machine": "aarch64", "platform_release": "5.10.0", "platform_system": "Linux",
           "platform_version": "#1 SMP", "python_full_version": "3.11.6", "platform_python_implementation": "CPython",
           "python_version": "3.11", "sys_platform": "linux"}
# What the probe lists in a virtualenv of the reference environment (names as their metadata spells them).
DISTS = {"sglang": "0.5.16", "torch": "2.8.0+cpu", "torch_npu": "2.8.0.post2", "Transformers": "4.57.1",
         "fastapi": "0.115.0", "uvloop": "0.21.0", "pip": "24.0"}
REQUIRES = ["fastapi", "uvloop; sys_platform != 'win32'", "torch==2.8.0", "flashinfer_python==0.4.0",
            "pywin32; sys_platform == 'win32'", "pytest; extra == 'test'"]
VENV = {"sglang_server_venv": "/opt/sglang"}
INSTALL = {"requirements": ["torch==2.8.0+cpu", "torch_npu==2.8.0.post2", "transformers==4.57.1"],
           "sglang": "sglang==0.5.16", "exclude": ["flashinfer-python", "torch", "torch-npu", "transformers"],
           "problems": []}


def _look(**changes) -> dict:
    return dict({"distributions": DISTS, "requires": REQUIRES, "markers": MARKERS, "venv": True,
                 "prefix": "/opt/sglang"}, **changes)


def test_a_requirement_is_present_as_pips_check_mode_finds_it() -> None:
    installed = {"torch": "2.8.0+cpu", "torch-npu": "2.8.0.post2", "sglang": "0.5.16rc1"}
    assert present("torch==2.8.0+cpu", installed)
    assert present("Torch_NPU==2.8.0.post2", installed)  # canonical names
    assert present("sglang>=0.5.16rc0", installed)  # a pre-release counts, as in pip's check
    assert present("torch==2.8.0", installed)  # PEP 440: == without a local label matches any local build
    assert not present("torch==2.8.1", installed)
    assert not present("numpy", installed)
    # What pip would install or reinstall without this look seeing it: never taken as present.
    assert not present("torch[opt]==2.8.0+cpu", installed)
    assert not present("torch @ file:///wheels/torch-2.8.0+cpu-cp311-linux_aarch64.whl", installed)
    assert not present("not a requirement ==", installed)


def test_sglang_server_packages_are_current_when_every_one_is_present() -> None:
    settings = {"sglang_server_packages": ["sglang==0.5.16", "torch==2.8.0+cpu"], "sglang_server_venv": "/opt/sglang/"}
    assert stack_current(settings, None, _look())
    assert not stack_current(dict(settings, sglang_server_packages=["sglang==0.5.17"]), None, _look())
    assert not stack_current(settings, None, _look(venv=False))  # pip creates the virtualenv first
    assert not stack_current(settings, None, None)  # preflight did not look
    # The interpreter preflight looked at is not the one of the virtualenv pip installs into.
    assert not stack_current(settings, None, _look(prefix="/usr"))


def test_the_reference_environment_is_current_with_the_other_requirements_of_sglang_present() -> None:
    assert stack_current(VENV, INSTALL, _look())
    # An install cut short before sglang's other requirements: the play completes them.
    assert not stack_current(VENV, INSTALL, _look(distributions={k: v for k, v in DISTS.items() if k != "uvloop"}))
    # A requirement of an extra, or whose marker does not hold on the host (pywin32 above), is not asked for; on a
    # host where the marker holds it is.
    assert not stack_current(VENV, INSTALL, _look(markers=dict(MARKERS, sys_platform="win32")))
    # Whatever cannot be told keeps the host in the play.
    assert not stack_current(VENV, INSTALL, _look(requires=None))
    assert not stack_current(VENV, INSTALL, _look(requires=["fastapi; nonsense_marker == '1'"]))
    assert not stack_current(VENV, dict(INSTALL, problems=["deep-ep: no wheel"]), _look())
    assert not stack_current(VENV, None, _look())


def test_looks_are_read_from_the_preflight_result_of_a_host() -> None:
    look = _look()
    result = {"stack": {"findings": [], "status": "ok"},
              "observed": {"runtimes": {"/opt/sglang/bin/python3|sglang": {"stack": {"look": look}},
                                        "/opt/router/bin/python3|sglang-router": {"version": "0.3.2"}}}}
    assert looks(result) == [look]
    assert looks(dict(result, stack=None)) is None  # preflight checked no stack of the host
    assert looks({"skipped": True}) is None
    assert looks(None) is None


def test_the_probe_lists_what_this_interpreter_has() -> None:
    proc = subprocess.run([sys.executable, "-c", PROBE_SCRIPT, "--distributions", "sglang", "torch"],
                          capture_output=True, text=True, timeout=120, check=False)
    parsed = parse_probe(proc.returncode, proc.stdout, proc.stderr, sys.executable)
    look = parsed["stack"]["look"]
    import importlib.metadata
    assert look["distributions"]["packaging"] == importlib.metadata.version("packaging")
    assert look["markers"]["python_version"] == f"{sys.version_info.major}.{sys.version_info.minor}"
    assert set(MARKERS) <= set(look["markers"])
    # Without the flag the probe reports what it did before, and no look.
    proc = subprocess.run([sys.executable, "-c", PROBE_SCRIPT, "sglang"], capture_output=True, text=True,
                          timeout=120, check=False)
    assert "look" not in parse_probe(proc.returncode, proc.stdout, proc.stderr, sys.executable)["stack"]
