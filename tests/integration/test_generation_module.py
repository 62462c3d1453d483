"""The sglang_generation module through real ansible-core, against localhost (connection local), every path under
tmp_path (no root: every owner is the current user's): a generation kept, the files changed as an upgrade changes
them, check mode reporting without changing, the generation put back, a service without one refused. The logic
itself: tests/unit/plugins/module_utils/files/test_generations.py."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from test_playbooks import adhoc

pytestmark = pytest.mark.ansible


def run_module(args: dict, *extra: str) -> dict:
    return adhoc("sglang_generation", args, *extra)


def test_keep_change_and_put_back_through_ansible(tmp_path: Path) -> None:
    etc = tmp_path / "etc"
    etc.mkdir()
    env, secrets, unit, dropin = etc / "s.env", etc / "s.secrets", etc / "s.service", etc / "s.service.d" / "x.conf"
    env.write_text("A=1\n")
    secrets.write_text("TOKEN=s3cret\n")
    secrets.chmod(0o600)
    unit.write_text("[Service]\n")
    generations = tmp_path / "generations"
    args = {"dir": str(generations), "state": "saved",
            "services": [{"name": "sglang-decode-0", "files": [str(p) for p in (env, secrets, unit, dropin)]}]}

    saved = run_module(args)
    assert not saved["failed"] and saved["changed"], saved
    assert saved["services"] == ["sglang-decode-0"]
    assert saved["saved"] == [{"service": "sglang-decode-0", "files": 3, "changed": True}]
    assert stat.S_IMODE(generations.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in (generations / "sglang-decode-0").iterdir())
    assert "s3cret" not in json.dumps(saved)
    assert not run_module(args)["changed"]

    # An upgrade's new files: new content, a wider mode, a drop-in that did not exist.
    env.write_text("A=2\n")
    secrets.chmod(0o644)
    dropin.parent.mkdir()
    dropin.write_text("[Service]\nNice=1\n")
    restore = {"dir": str(generations), "state": "restored", "services": [{"name": "sglang-decode-0"}]}
    expected = [{"service": "sglang-decode-0", "path": str(env), "action": "written"},
                {"service": "sglang-decode-0", "path": str(secrets), "action": "written"},
                {"service": "sglang-decode-0", "path": str(dropin), "action": "removed"}]
    checked = run_module(restore, "--check")
    assert checked["changed"] and checked["restored"] == expected and not checked["daemon_reload"], checked
    assert env.read_text() == "A=2\n" and dropin.exists()

    restored = run_module(restore)
    assert not restored["failed"] and restored["changed"] and restored["restored"] == expected, restored
    assert env.read_text() == "A=1\n" and secrets.read_text() == "TOKEN=s3cret\n"
    assert stat.S_IMODE(secrets.stat().st_mode) == 0o600 and not dropin.exists()
    assert "s3cret" not in json.dumps(restored)
    again = run_module(restore)
    assert not again["changed"] and again["restored"] == [] and not again["daemon_reload"]

    # A service without a generation: refused, naming it, nothing changed.
    env.write_text("A=3\n")
    refused = run_module({**restore, "services": [{"name": "sglang-decode-0"}, {"name": "sglang-prefill-0"}]})
    assert refused["failed"] and "sglang-prefill-0" in refused["msg"] and "sglang-decode-0" not in refused["msg"]
    assert env.read_text() == "A=3\n"
    bad = run_module({**args, "services": [{"name": "../x", "files": [str(env)]}]})
    assert bad["failed"] and "not a plain file name" in bad["msg"], bad
