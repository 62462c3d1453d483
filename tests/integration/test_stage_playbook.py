"""ascend.sglang.stage_weights through the real ansible-playbook.

The operator's staging values, given as -e, in the inventory's all: vars and as host vars (Ansible's own tagged
types), reach the plan's checks; a wrong one is refused before any host is contacted. Then a real stage on this
machine (a server host reached with the local connection, the real rsync): into an empty host, --check first
(nothing changes), then again (nothing to receive), into a copy with a truncated shard and a missing file, and
an interrupted stage (its time bound reached) resumed by the next run. A source the host cannot read is refused
before a byte moves, naming the host. Stages across several hosts (the tree, the daemons) run on Molecule
(pd_mixed, tasks/stage.yml)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
import yaml

from test_playbooks import ansible
from test_retire_playbook import FLEET, with_vars

pytestmark = pytest.mark.ansible


def stage(inventory: Path, *extra: str, cwd: Path):
    return ansible("ansible-playbook", "-i", str(inventory), "ascend.sglang.stage_weights", *extra, cwd=cwd,
                   check=False)


@pytest.mark.parametrize("how", ["extra-vars", "all-vars", "host-vars"])
@pytest.mark.parametrize("values,error", [
    ({"sglang_model_source": "weights01:models/Qwen3-32B"}, "'weights01:models/Qwen3-32B' is not a source"),
    ({"sglang_model_source": {"/data/models/Qwen3-32B-W8A8": "/x;reboot"}}, "'/x;reboot' (for /data/models/Qwen3-32B-W8A8) is not a source"),
    ({"sglang_model_source": "w:/m", "sglang_stage_verify": "fast"}, "sglang_stage_verify"),
    ({"sglang_model_source": "w:/m", "sglang_model_mode": "0644"}, "lets its owner read and enter"),
    ({"sglang_model_source": "w:/m", "sglang_model_owner": "root;id"}, "must be a user or user:group"),
    ({"sglang_model_source": "w:/m", "sglang_stage_parallel": 0}, "sglang_stage_parallel"),
])
def test_the_operators_values_reach_the_plans_check(tmp_path: Path, how: str, values: dict, error: str) -> None:
    if how == "extra-vars":
        proc = stage(FLEET, "-e", json.dumps(values), cwd=tmp_path)
    else:
        proc = stage(with_vars(tmp_path, how, values), cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    assert error in out, out[-3000:]
    assert "UNREACHABLE" not in out and "List the source" not in out  # refused in the plan, no host contacted


def test_a_server_hosts_own_port_is_checked_with_its_value(tmp_path: Path) -> None:
    inv = with_vars(tmp_path, "all-vars", {"sglang_model_source": "w:/m"})
    host = inv / "host_vars" / "a3-mixed-2.yml"
    host.write_text(host.read_text() + yaml.safe_dump({"sglang_stage_port": 70000}))
    proc = stage(inv, cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "sglang_stage_port" in out and "a3-mixed-2" in out, out[-3000:]


# ---- a real stage on this machine ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def rsync():
    if not shutil.which("rsync"):
        if os.environ.get("SGLANG_RSYNC_REQUIRED") == "1":
            pytest.fail("rsync is required here (SGLANG_RSYNC_REQUIRED=1) but not installed")
        pytest.skip("rsync is not installed (tests/validation/setup_rsync.sh installs it; Debian: apt-get install rsync)")


def _world(tmp_path: Path, how: str, values: dict) -> tuple[Path, Path, Path]:
    src = tmp_path / "store" / "Qwen3-32B"
    (src / "sub").mkdir(parents=True)
    (src / "config.json").write_text("{}")
    (src / "sub" / "tokenizer.json").write_text("tok" * 100)
    for i in (1, 2, 3):
        (src / f"model-0000{i}-of-00003.safetensors").write_bytes(os.urandom(300_000))
    model = tmp_path / "hosts" / "a2-mixed-0" / "Qwen3-32B"
    plain = {"sglang_profile": "qwen3_32b_a2_8c_mixed_6k_1k5_18ms", "sglang_model_path": str(model),
             "sglang_draft_model_path": str(tmp_path / "hosts" / "a2-mixed-0" / "Eagle3")}
    inv = tmp_path / "inv"
    (inv / "host_vars").mkdir(parents=True)
    values = {k: (str(src) if v == "SRC" else v) for k, v in values.items()}
    hosts = {"all": {"vars": dict(plain, **(values if how == "all-vars" else {})),
                     "children": {"mixed": {"hosts": {"a2-mixed-0": {
                         "ansible_connection": "local", "ansible_python_interpreter": sys.executable,
                         "sglang_host_ip": "127.0.0.1"}}}}}}
    (inv / "hosts.yml").write_text(yaml.safe_dump(hosts))
    if how == "host-vars":
        (inv / "host_vars" / "localhost.yml").write_text(yaml.safe_dump(dict(values, ansible_connection="local")))
    extra = ["-e", json.dumps(values)] if how == "extra-vars" else []
    return inv, src, model, extra


def _same(src: Path, model: Path) -> None:
    names = sorted(p.relative_to(src).as_posix() for p in src.rglob("*") if p.is_file())
    assert names == sorted(p.relative_to(model).as_posix() for p in model.rglob("*") if p.is_file())
    for name in names:
        assert (src / name).read_bytes() == (model / name).read_bytes(), name


@pytest.mark.parametrize("how", ["extra-vars", "all-vars", "host-vars"])
def test_a_stage_into_an_empty_host_then_nothing_then_what_broke(tmp_path: Path, how: str, rsync) -> None:
    inv, src, model, extra = _world(tmp_path, how, {"sglang_model_source": "SRC", "sglang_model_mode": "0750",
                                                    "sglang_stage_progress_interval": 1})
    checked = stage(inv, *extra, "--check", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-3000:]
    assert f"round 1: a2-mixed-0 receives {model} from {src}: 5 file(s), 879.2 KiB" in checked.stdout
    assert f"stage a2-mixed-0: {model} from {src}: would receive 5 file(s), up to 879.2 KiB" in checked.stdout
    assert not model.parent.exists()

    first = stage(inv, *extra, cwd=tmp_path)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    assert f"stage a2-mixed-0: {model} from {src}: done, 5 file(s) moved into place" in first.stdout
    assert "| a2-mixed-0 |" in first.stdout  # the summary table
    _same(src, model)
    assert oct(model.stat().st_mode & 0o777) == "0o750"
    assert not (model.parent / ".Qwen3-32B.sglang-stage").exists()

    again = stage(inv, *extra, cwd=tmp_path)
    assert again.returncode == 0 and f"{model} holds the source's 5 files: nothing to receive" in again.stdout
    assert "a2-mixed-0                 : ok=2    changed=0" in again.stdout

    os.truncate(model / "model-00002-of-00003.safetensors", 1000)
    (model / "sub" / "tokenizer.json").unlink()
    (model / "notes.txt").write_text("the operator's")
    healed = stage(inv, *extra, cwd=tmp_path)
    assert healed.returncode == 0, healed.stdout[-3000:] + healed.stderr[-3000:]
    assert f"round 1: a2-mixed-0 receives {model} from {src}: 2 file(s), 293.3 KiB" in healed.stdout
    assert f"{model} also holds 1 file(s) the source has not (notes.txt): left alone" in healed.stdout
    (model / "notes.txt").unlink()
    _same(src, model)


def test_an_interrupted_stage_keeps_nothing_partial_in_place_and_the_next_run_resumes(tmp_path: Path, rsync) -> None:
    inv, src, model, extra = _world(tmp_path, "extra-vars", {"sglang_model_source": "SRC"})
    # 100 KiB/s for about 880 KiB, bound to 2 s: the pull stops part way
    cut = stage(inv, "-e", json.dumps({"sglang_model_source": str(src), "sglang_stage_bwlimit": 100,
                                       "sglang_stage_timeout": 2, "sglang_stage_progress_interval": 1}), cwd=tmp_path)
    out = cut.stdout + cut.stderr
    assert cut.returncode != 0, out[-3000:]
    assert "the pull took more than 2 s (sglang_stage_timeout): stopped" in out
    assert "weights staging failed; nothing partial was moved into place and the next run resumes: a2-mixed-0:" in out
    assert not model.exists()
    resumed = stage(inv, *extra, cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    _same(src, model)


def test_a_source_the_host_cannot_read_is_refused_before_a_byte_moves(tmp_path: Path, rsync) -> None:
    inv, src, model, extra = _world(tmp_path, "extra-vars", {"sglang_model_source": "SRC"})
    proc = stage(inv, "-e", json.dumps({"sglang_model_source": str(tmp_path / "nowhere")}), cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert (f"weights staging refused before a byte moved:\n  host a2-mixed-0: cannot read {tmp_path / 'nowhere'} "
            f"(sglang_model_source for {model}): ") in out.replace("\\n", "\n"), out[-3000:]
    assert not model.parent.exists()


def test_without_a_source_stage_weights_says_what_to_set(tmp_path: Path) -> None:
    proc = stage(FLEET, cwd=tmp_path)
    assert proc.returncode != 0 and "stage_weights.yml needs sglang_model_source" in proc.stdout + proc.stderr
