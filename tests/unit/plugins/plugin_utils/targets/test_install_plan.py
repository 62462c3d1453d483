"""What sglang_server_install installs (plugins/plugin_utils/targets/_install.py): the reference stack's pins, the
wheels the wheelhouse must hold (checked on the controller, each missing one named), and the sglang
wheel's requirements left out; plus the host-side script listing sglang's other requirements."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ansible_collections.ascend.sglang.plugins.plugin_utils.targets._install import install_plan, wheel_of

ROOT = Path(__file__).resolve().parents[5]
REQUIREMENTS_SCRIPT = ROOT / "roles" / "sglang_service" / "files" / "sglang_requirements.py"
WHEELS = ("torch-2.8.0+cpu-cp311-cp311-manylinux_2_28_aarch64.whl",
          "torch_npu-2.8.0.post2.dev20251224-cp311-cp311-manylinux_2_28_aarch64.whl",
          "sgl_kernel_npu-2025.12.25-cp311-cp311-linux_aarch64.whl",
          "deep_ep-1.0.0+95728843.cann.8.3.rc2.b210-cp311-cp311-linux_aarch64.whl")


def wheelhouse(tmp_path, names=WHEELS):
    for name in names:
        (tmp_path / name).write_bytes(b"")
    return str(tmp_path)


def test_reference_stack_with_every_wheel(tmp_path):
    got = install_plan("0.5.6.post2", {}, wheelhouse(tmp_path))
    assert got["problems"] == []
    assert got["requirements"] == ["torch==2.8.0+cpu", "torch_npu==2.8.0.post2.dev20251224", "torchvision==0.23.0",
                                   "torchao==0.9.0", "transformers==4.57.1", "sgl-kernel-npu==2025.12.25",
                                   "deep-ep==1.0.0+95728843.cann.8.3.rc2.b210"]
    assert got["sglang"] == "sglang==0.5.6.post2" and got["cann"] == "8.3.RC2"
    assert set(got["wheels"].values()) == set(WHEELS)
    # The CUDA build's requirements and everything the stack pins are left out of sglang's own list.
    assert {"torch", "torch-npu", "sgl-kernel", "flashinfer-python", "cuda-python", "transformers"} <= set(got["exclude"])
    assert "fastapi" not in got["exclude"] and "sglang-router" not in got["pins"]


def test_each_missing_wheel_is_named(tmp_path):
    got = install_plan("0.5.6.post2", {}, wheelhouse(tmp_path, WHEELS[:2]))
    assert got["problems"] == [
        f"sgl-kernel-npu 2025.12.25: no sgl_kernel_npu-2025.12.25-*.whl in sglang_wheelhouse {tmp_path}",
        f"deep-ep 1.0.0+95728843.cann.8.3.rc2.b210: no deep_ep-1.0.0+95728843.cann.8.3.rc2.b210-*.whl in "
        f"sglang_wheelhouse {tmp_path}"]
    # Another version of a wheel is not the documented one.
    (tmp_path / "sgl_kernel_npu-2025.11.01-cp311-cp311-linux_aarch64.whl").write_bytes(b"")
    assert any(p.startswith("sgl-kernel-npu 2025.12.25") for p in install_plan("0.5.6.post2", {}, str(tmp_path))["problems"])


def test_without_a_wheelhouse_and_with_a_wrong_one(tmp_path):
    got = install_plan("0.5.6.post2", {}, "")
    assert [p.split(" ", maxsplit=1)[0] for p in got["problems"]] == ["torch", "torch_npu", "sgl-kernel-npu", "deep-ep"]
    assert all("on no package index" in p for p in got["problems"])
    assert install_plan("0.5.6.post2", {}, str(tmp_path / "absent"))["problems"] == [
        f"sglang_wheelhouse {tmp_path / 'absent'} is not a directory on the controller"]


def test_undocumented_release_needs_the_stack_from_the_inventory(tmp_path):
    got = install_plan("0.5.9", {}, str(tmp_path))
    assert [p.split(":", maxsplit=1)[0] for p in got["problems"]] == ["torch", "torch_npu", "sgl-kernel-npu", "deep-ep"]
    assert "sglang_server_stack.torch" in got["problems"][0]
    wheels = ("torch-2.9.0+cpu-cp311-cp311-linux_aarch64.whl", "torch_npu-2.9.0-cp311-cp311-linux_aarch64.whl",
              "sgl_kernel_npu-2026.1.20-cp311-cp311-linux_aarch64.whl", "deep_ep-1.0.1-cp311-cp311-linux_aarch64.whl")
    stack = {"torch": "2.9.0+cpu", "Torch_NPU": "2.9.0", "sgl-kernel-npu": "2026.1.20", "deep-ep": "1.0.1",
             "memfabric-hybrid": "1.0.8"}
    got = install_plan("0.5.9", stack, wheelhouse(tmp_path, wheels))
    assert got["problems"] == []
    assert "torch_npu==2.9.0" in got["requirements"] and "memfabric-hybrid==1.0.8" in got["requirements"]
    assert "transformers==4.57.1" in got["requirements"]   # the wheel's own pin, kept
    assert install_plan("0.5.9", {"sglang": "0.5.8"}, str(tmp_path))["problems"][0].startswith("sglang_server_stack")


def test_wheel_names_are_matched_like_pip(tmp_path):
    (tmp_path / "Torch_NPU-2.8.0-cp311-cp311-linux_aarch64.whl").write_bytes(b"")
    (tmp_path / "torch_npu-2.8.0.tar.gz").write_bytes(b"")
    assert wheel_of(str(tmp_path), "torch-npu", "2.8.0") == "Torch_NPU-2.8.0-cp311-cp311-linux_aarch64.whl"
    assert wheel_of(str(tmp_path), "torch-npu", "2.8.0.post2") is None
    assert wheel_of(str(tmp_path / "absent"), "torch", "2.8.0+cpu") is None


def test_requirements_script_leaves_out_extras_and_the_excluded(tmp_path):
    dist = tmp_path / "sglang-0.5.6.post2.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("\n".join([
        "Metadata-Version: 2.1", "Name: sglang", "Version: 0.5.6.post2",
        "Requires-Dist: fastapi", "Requires-Dist: torch==2.9.1", "Requires-Dist: sgl-kernel==0.3.19",
        "Requires-Dist: Flashinfer_Python==0.5.3",
        'Requires-Dist: av; sys_platform == "linux" and platform_machine == "aarch64"',
        'Requires-Dist: sentence_transformers; extra == "test"', "Requires-Dist: transformers==4.57.1", ""]))
    dest = tmp_path / "req.txt"
    cmd = [sys.executable, str(REQUIREMENTS_SCRIPT), str(dest), "torch", "sgl-kernel", "flashinfer-python",
           "transformers"]
    env = {"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"}
    first = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    assert first.stdout.strip() == "2 requirements (written)"
    assert dest.read_text() == 'fastapi\nav; sys_platform == "linux" and platform_machine == "aarch64"\n'
    again = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    assert again.stdout.strip() == "2 requirements"   # unchanged: the task reports no change
