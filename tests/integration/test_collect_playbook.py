"""playbooks/collect.yml end to end on the controller (connection local for four hosts of the example inventory,
the fifth unreachable): one archive, 0600, every host's directory with its index.json, the unreachable host listed
with the reason and not fatal, the plan inside, no task reported changed."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
pytestmark = pytest.mark.ansible


def test_collect_lists_an_unreachable_host_and_archives_the_others(tmp_path: Path) -> None:
    # With values of the operator's own in all: vars (the plan written into the bundle carries them as given).
    override = {"all": {"vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                                 "sglang_deployment": "on",
                                 "sglang_overrides": {"decode": {"env": {"A_YES": "y", "A_EXP": "1e3"}}}},
                        "hosts": {"router-0": {"ansible_connection": "ssh", "ansible_port": 1,
                                               "ansible_ssh_common_args": "-o ConnectTimeout=5"}}}}
    (tmp_path / "override.yml").write_text(yaml.safe_dump(override), encoding="utf-8")
    out = tmp_path / "bundles"
    out.mkdir()
    proc = subprocess.run(
        [str(BIN / "ansible-playbook"), "-i", "inventories/example", "-i", str(tmp_path / "override.yml"),
         "playbooks/collect.yml", "-e", "sglang_profile=deepseek_r1_pd32", "-e", f"sglang_collect_dir={out}"],
        cwd=ROOT, env=dict(os.environ, ANSIBLE_NOCOLOR="1"), capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    (archive,) = out.glob("sglang-deepseek_r1_a3_32c_pd_3k5_1k5_50ms-*.tar.gz")
    assert f"Archive: {archive}" in proc.stdout
    assert "Not collected (see their index.json): router-0" in proc.stdout
    assert "changed=0" in proc.stdout and "changed=1" not in proc.stdout
    assert stat.S_IMODE(archive.stat().st_mode) == 0o600
    root = archive.name[: -len(".tar.gz")]
    with tarfile.open(archive) as tar:
        names = set(tar.getnames())
        index = {h: json.load(tar.extractfile(f"{root}/{h}/index.json"))
                 for h in ("a3-prefill-0", "a3-prefill-1", "a3-decode-0", "a3-decode-1", "router-0")}
        plan = json.load(tar.extractfile(f"{root}/plan.json"))
    assert {f"{root}/plan.json", f"{root}/diagnosis.txt", f"{root}/index.json"} <= names
    assert index["router-0"]["reachable"] is False
    assert index["router-0"]["failed"][0]["what"] == "everything" and index["router-0"]["failed"][0]["reason"]
    for host in ("a3-prefill-0", "a3-decode-1"):
        assert index[host]["reachable"] is True
        assert f"{root}/{host}/index.json" in names
    assert "journal of sglang-decode-i0-r1.service" in [c["what"] for c in index["a3-decode-1"]["collected"]] + [
        f["what"] for f in index["a3-decode-1"]["failed"]]
    assert plan["profile"] == "deepseek_r1_a3_32c_pd_3k5_1k5_50ms" and plan["deployment"] == "on"
    decode = plan["hosts"]["a3-decode-1"]["services"][0]["env"]
    assert (decode["A_YES"], decode["A_EXP"]) == ("y", "1e3")
    # The private scratch directory went with the archive.
    assert not list(Path(os.environ.get("TMPDIR", "/tmp")).glob(f"sglang-collect-*/{root}"))
