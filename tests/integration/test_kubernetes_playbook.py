"""ascend.sglang.kubernetes with the real ansible-playbook: files, modes, idempotence, check mode, refusals."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
import yaml

from go_yaml import load as go_load
from test_playbooks import ansible, recap_changed

pytestmark = pytest.mark.ansible
PD32 = ("-e", "sglang_profile=deepseek_r1_pd32", "-e", "sglang_nic=ens1", "-e", "sglang_model_path=/models/DeepSeek-R1")


def export(out: Path, *extra: str, check: bool = True):
    # By FQCN from another directory, with no inventory: the export needs none.
    return ansible("ansible-playbook", "ascend.sglang.kubernetes", "-e", f"sglang_k8s_dir={out}", *PD32, *extra,
                   cwd=out.parent, check=check)


def test_export_writes_one_manifest_per_object_and_changes_nothing_the_second_time(tmp_path: Path) -> None:
    out = tmp_path / "k8s"
    first = export(out)
    names = sorted(p.name for p in out.iterdir())
    # pd32's router is --mini-lb: a fixed list (no ServiceAccount), no exporter (no PodMonitor of its own).
    assert names == ["podmonitor-sglang-decode.yaml", "podmonitor-sglang-prefill.yaml", "prometheusrule-sglang.yaml",
                     "rolebasedgroup-sglang.yaml", "service-sglang-router.yaml"]
    assert recap_changed(first.stdout) == 1
    for path in out.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o640, path
    rbg = yaml.safe_load((out / "rolebasedgroup-sglang.yaml").read_text())
    roles = {r["name"]: r for r in rbg["spec"]["roles"]}
    assert (roles["prefill"]["replicas"], roles["decode"]["replicas"]) == (2, 1)
    assert roles["decode"]["leaderWorkerPattern"]["size"] == 2
    assert roles["router"]["dependencies"] == ["prefill", "decode"]
    second = export(out)
    assert recap_changed(second.stdout) == 0
    # Another kind into the same directory: the RoleBasedGroup there is not of this export.
    other = export(out, "-e", "sglang_k8s_kind=lws", check=False)
    assert other.returncode != 0
    assert "sglang_k8s_dir" in other.stdout and "rolebasedgroup-sglang.yaml" in other.stdout


def test_check_mode_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "k8s"
    proc = export(out, "--check")
    assert recap_changed(proc.stdout) == 1 and not out.exists()


def test_bad_values_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    out = tmp_path / "k8s"
    proc = export(out, "-e", '{"sglang_k8s_npu_resource": "huawei.com/Ascend 910", "sglang_k8s_kind": "sts", '
                             '"sglang_k8s_instances": {"decode": -1}, "sglang_k8s_namespace": "LLM"}', check=False)
    assert proc.returncode != 0
    for variable in ("sglang_k8s_npu_resource", "sglang_k8s_kind", "sglang_k8s_instances.decode",
                     "sglang_k8s_namespace"):
        assert f"variable '{variable}'" in proc.stdout, variable
    assert not out.exists()
    unset = ansible("ansible-playbook", "ascend.sglang.kubernetes", *PD32, cwd=tmp_path, check=False)
    assert unset.returncode != 0 and "sglang_k8s_dir" in unset.stdout


def test_the_upgrade_steps_differ_only_in_the_partitions(tmp_path: Path) -> None:
    """The guide's canary upgrade: the new version held, the last instance of each role, then every instance; each
    step an export (the partitions as -e JSON), read back as kubectl reads it."""
    def roles(step: str, *extra: str) -> dict:
        out = tmp_path / step
        export(out, "-e", "sglang_container_image=lmsysorg/sglang:new", *extra)
        rbg = go_load((out / "rolebasedgroup-sglang.yaml").read_text())
        return {r["name"]: r for r in rbg["spec"]["roles"]}

    hold = roles("hold", "-e", '{"sglang_k8s_rollout_partition": {"prefill": 2, "decode": 1}}')
    canary = roles("canary", "-e", '{"sglang_k8s_rollout_partition": {"prefill": 1, "decode": 0}}')
    new = roles("new")
    for role, held, first in (("prefill", 2, 1), ("decode", 1, 0)):
        assert hold[role]["rolloutStrategy"]["rollingUpdate"]["partition"] == held
        assert canary[role]["rolloutStrategy"]["rollingUpdate"]["partition"] == first
        assert "partition" not in new[role]["rolloutStrategy"]["rollingUpdate"]
        for step in (hold, canary):
            del step[role]["rolloutStrategy"]["rollingUpdate"]["partition"]
    assert hold == canary == new
