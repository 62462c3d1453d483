"""sglang_server_install for real, on this machine (connection local, a temporary virtualenv): the role's
install tasks install the reference stack of 0.5.6.post2 offline from a wheelhouse of stand-in wheels (the
stand-in torch / torch_npu, metadata-only wheels of the other pinned packages, an sglang whose metadata
requires the CUDA build like the PyPI wheel's); a second run changes nothing; the installed interpreter then
passes the preflight stack checks. A wheelhouse without one of the Ascend wheels stops the run on the
controller, naming it, before anything is copied or created.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from ansible_collections.ascend.sglang.plugins.module_utils.collect._host_probe import runtime_stack
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._releases import load_release_tables
from ansible_collections.ascend.sglang.plugins.module_utils.checks._server_stack import check

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
STANDINS = ROOT / "tests" / "standins"
REFERENCE = load_release_tables()["sglang"].stack("0.5.6.post2")
pytestmark = pytest.mark.ansible

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  connection: local
  tasks:
    - name: The role's install tasks
      ansible.builtin.include_role:
        name: ascend.sglang.sglang_service
        tasks_from: install.yml
"""


def build_wheel(dest: Path, name: str, version: str, files: dict[str, bytes], requires: tuple[str, ...] = ()) -> None:
    dist = f"{name.replace('-', '_')}-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(f"Requires-Dist: {r}\n" for r in requires)
    content = dict(files)
    content[f"{dist}/METADATA"] = meta.encode()
    content[f"{dist}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: ascend.sglang tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = [f"{n},sha256={base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b'=').decode()},{len(d)}"
              for n, d in content.items()] + [f"{dist}/RECORD,,"]
    content[f"{dist}/RECORD"] = ("\n".join(record) + "\n").encode()
    with zipfile.ZipFile(dest / f"{name.replace('-', '_')}-{version}-py3-none-any.whl", "w") as zf:
        for n, d in content.items():
            zf.writestr(n, d)


def package(path: Path, prefix: str) -> dict[str, bytes]:
    return {f"{prefix}/{p.relative_to(path).as_posix()}": p.read_bytes() for p in sorted(path.rglob("*.py"))}


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory):
    house = tmp_path_factory.mktemp("wheelhouse")
    pins = REFERENCE.known()
    build_wheel(house, "torch", pins["torch"], package(STANDINS / "torch" / "torch", "torch"))
    build_wheel(house, "torch_npu", pins["torch_npu"], package(STANDINS / "torch_npu" / "torch_npu", "torch_npu"),
                requires=("torch",))
    for name, module in (("torchvision", "torchvision"), ("torchao", "torchao"), ("transformers", "transformers"),
                         ("sgl-kernel-npu", "sgl_kernel_npu"), ("deep-ep", "deep_ep")):
        build_wheel(house, name, pins[name], {f"{module}/__init__.py": b'"""test stand-in (metadata only)"""\n'})
    build_wheel(house, "ascend-sglang-test-dep", "1.0", {"ascend_sglang_test_dep/__init__.py": b""})
    # Like the PyPI wheel: the CUDA build's pins next to an ordinary requirement.
    build_wheel(house, "sglang", "0.5.6.post2", package(STANDINS / "sglang" / "sglang", "sglang"),
                requires=("torch==2.9.1", "sgl-kernel==0.3.19", "flashinfer_python==0.5.3", "transformers==4.57.1",
                          "ascend-sglang-test-dep", 'sentence_transformers; extra == "test"'))
    return house


def install(tmp_path: Path, house: Path) -> subprocess.CompletedProcess:
    playbook = tmp_path / "install.yml"
    playbook.write_text(PLAYBOOK)
    extra = ["-e", '{"sglang_plan": {"releases": {"sglang": "0.5.6.post2"}}}', "-e", "sglang_server_install=true",
             "-e", f"sglang_server_venv={tmp_path / 'venv'}", "-e", f"sglang_wheelhouse={house}",
             "-e", f"sglang_server_wheelhouse_dest={tmp_path / 'copied'}",
             "-e", f"sglang_server_virtualenv_command='{sys.executable} -m venv'",
             "-e", f"ansible_python_interpreter={sys.executable}"]
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", PIP_DISABLE_PIP_VERSION_CHECK="1")
    return subprocess.run([str(BIN / "ansible-playbook"), "-i", "localhost,", str(playbook), *extra], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=900, check=False)


def changed(stdout: str) -> int:
    line = next(line for line in stdout.splitlines() if line.startswith("localhost"))
    return int(line.split("changed=")[1].split()[0])


def test_installs_the_reference_stack_offline_then_changes_nothing(tmp_path, wheelhouse, monkeypatch):
    first = install(tmp_path, wheelhouse)
    assert first.returncode == 0, first.stdout[-4000:] + first.stderr[-2000:]
    # The wheelhouse reached the host whole (ascend.sglang.sglang_wheelhouse: one archive).
    copied = {p.name: p.read_bytes() for p in (tmp_path / "copied").iterdir()}
    assert copied == {p.name: p.read_bytes() for p in wheelhouse.iterdir()}
    python = tmp_path / "venv" / "bin" / "python"
    freeze = subprocess.run([str(python), "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True,
                            check=True).stdout.lower().splitlines()
    for name, version in REFERENCE.known().items():
        if name != "sglang-router":
            assert f"{name.replace('_', '-')}=={version}" in [f.replace("_", "-") for f in freeze], freeze
    assert "ascend-sglang-test-dep==1.0" in freeze
    # The CUDA build the sglang wheel asks for is not there.
    assert not [f for f in freeze if f.startswith(("sgl-kernel==", "flashinfer", "torch==2.9.1"))]
    again = install(tmp_path, wheelhouse)
    assert again.returncode == 0 and changed(again.stdout) == 0, again.stdout[-4000:]
    # The installed interpreter passes the stack checks (an A3 node: 16 NPUs).
    standin = tmp_path / "ascend-standin"
    standin.mkdir()
    (standin / "shape").write_text("a3\n")
    monkeypatch.setenv("ASCEND_STANDIN_DIR", str(standin))
    monkeypatch.delenv("PYTHONPATH", raising=False)
    for var in ("STANDIN_TORCH_VERSION", "STANDIN_TORCH_NPU_VERSION", "STANDIN_TORCH_NPU_IMPORT_ERROR"):
        monkeypatch.delenv(var, raising=False)
    result = runtime_stack({"python": str(python), "package": "sglang"}, timeout=120)
    assert result["version"] == "0.5.6.post2"
    findings = check(result["stack"], str(python), (16, "all dies"), "8.3.RC2", REFERENCE.as_dict(), "fail")
    assert [f for f in findings if f[1] != "ok"] == []


def test_a_missing_ascend_wheel_stops_before_anything_is_copied(tmp_path, wheelhouse):
    house = tmp_path / "house"
    house.mkdir()
    for wheel in wheelhouse.iterdir():
        if not wheel.name.startswith("deep_ep-"):
            (house / wheel.name).write_bytes(wheel.read_bytes())
    run = install(tmp_path, house)
    assert run.returncode != 0
    assert (f"deep-ep 1.0.0+95728843.cann.8.3.rc2.b210: no deep_ep-1.0.0+95728843.cann.8.3.rc2.b210-*.whl in "
            f"sglang_wheelhouse {house}") in " ".join(run.stdout.split())
    assert not (tmp_path / "copied").exists() and not (tmp_path / "venv").exists()


@pytest.mark.parametrize(("role", "extra", "installs"), [
    ("mixed", [], True),
    # deploy.yml's start plays: the stack play installed (its fact) or had nothing to install.
    ("mixed", ["-e", "sglang_server_packages_changed=false"], False),
    ("router", [], False),
])
def test_the_roles_main_tasks_install_only_where_nothing_installed_before(tmp_path, role, extra, installs):
    """The role's main tasks import the install behind a meta task (install_due.yml) that ends it on a host where
    nothing is to install: a server role's host with sglang_server_install installs (here it stops at the wheel the
    empty wheelhouse lacks, before anything is copied), one where this run installed already or a router does not."""
    house = tmp_path / "empty"
    house.mkdir()
    playbook = tmp_path / "install_due.yml"
    playbook.write_text(PLAYBOOK.replace("tasks_from: install.yml", "tasks_from: install_due.yml"))
    plan = {"releases": {"sglang": "0.5.6.post2"},
            "hosts": {"localhost": {"services": [{"name": f"sglang-{role}-i0", "role": role}]}}}
    run = subprocess.run(
        [str(BIN / "ansible-playbook"), "-i", "localhost,", str(playbook), "-e", json.dumps({"sglang_plan": plan}),
         "-e", "sglang_server_install=true", "-e", f"sglang_service_role={role}", "-e", f"sglang_wheelhouse={house}",
         "-e", f"sglang_server_venv={tmp_path / 'venv'}", "-e", f"ansible_python_interpreter={sys.executable}",
         *extra], cwd=ROOT, env=dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0"),
        capture_output=True, text=True, timeout=300, check=False)
    out = " ".join(run.stdout.split())
    if installs:
        assert run.returncode != 0 and f"in sglang_wheelhouse {house}" in out, out[-3000:]
    else:
        assert run.returncode == 0, out[-3000:]
        assert "Work out the stack to install" not in out, out[-3000:]
    assert not (tmp_path / "venv").exists()
