"""A unit's start record against its files (module_utils/files/_started.py), with the real record program
(roles/sglang_service/files/sglang_record_start.sh) writing the records: what it writes is what the judgement
reads. No systemd: the unit's state is given as `systemctl show` reports it."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
from pathlib import Path

import pytest

from ansible_collections.ascend.sglang.plugins.module_utils.files._started import (
    PROPERTIES, check_units, judge, parse_record, parse_show_many, pending_rows, record_path,
)

PROGRAM = Path(__file__).resolve().parents[5] / "roles" / "sglang_service" / "files" / "sglang_record_start.sh"
ACTIVE = {"LoadState": "loaded", "ActiveState": "active", "SubState": "running", "InvocationID": "0a1b",
          "NeedDaemonReload": "no", "FragmentPath": "/etc/systemd/system/x.service"}


def record(tmp_path: Path, files: list[Path], invocation: str = "0a1b") -> str:
    """What the unit's ExecStartPre writes (systemd gives it INVOCATION_ID)."""
    path = tmp_path / "run" / "x.service.started"
    subprocess.run(["sh", str(PROGRAM), str(path), *map(str, files)], check=True,
                   env=dict(os.environ, INVOCATION_ID=invocation))
    return path.read_text(encoding="utf-8")


@pytest.fixture(name="files")
def fixture_files(tmp_path: Path) -> list[Path]:
    env, launcher, absent = tmp_path / "x.env", tmp_path / "x.sh", tmp_path / "x.secrets"
    env.write_text("A='1'\n")
    launcher.write_text("#!/bin/bash\nexec true\n")
    return [env, launcher, absent]


def test_the_record_program_writes_a_root_only_record_that_matches_the_files(tmp_path, files) -> None:
    text = record(tmp_path, files)
    assert text.splitlines()[0] == "invocation 0a1b"
    # sha256sum's digests, as Python computes them; the missing file is marked.
    assert parse_record(text) == ("0a1b", [(str(files[0]), hashlib.sha256(files[0].read_bytes()).hexdigest()),
                                           (str(files[1]), hashlib.sha256(files[1].read_bytes()).hexdigest()),
                                           (str(files[2]), None)])
    # Digests of secret files: readable by root only, in a directory of root's.
    assert stat.S_IMODE((tmp_path / "run").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "run" / "x.service.started").stat().st_mode) == 0o600
    assert [p.name for p in (tmp_path / "run").iterdir()] == ["x.service.started"]  # no temporary file left
    assert judge("x.service", ACTIVE, text) == {"unit": "x.service", "running": True, "pending": False,
                                                "reason": None, "files": []}


def test_a_file_changed_after_the_start_is_a_restart_pending_naming_the_file(tmp_path, files) -> None:
    text = record(tmp_path, files)
    files[0].write_text("A='2'\n")
    got = judge("x.service", ACTIVE, text)
    assert got["pending"] and got["reason"] == "files changed since it started" and got["files"] == [str(files[0])]
    # A file missing at the start (a secrets file added since) counts as changed; so does one removed since.
    files[2].write_text("SGLANG_SECRET_0='k'\n")
    files[1].unlink()
    assert judge("x.service", ACTIVE, text)["files"] == [str(f) for f in files]


def test_the_same_content_again_is_no_change(tmp_path, files) -> None:
    """A file rewritten with its old content (a deployment that changed it and changed it back) runs what it has."""
    text = record(tmp_path, files)
    files[0].write_text("A='2'\n")
    files[0].write_text("A='1'\n")
    assert not judge("x.service", ACTIVE, text)["pending"]


@pytest.mark.parametrize("state", ["inactive", "failed", "activating", "deactivating"])
def test_a_unit_that_does_not_run_has_nothing_pending(tmp_path, files, state) -> None:
    """Its next start reads the files on disk (a start in progress runs its ExecStartPre first)."""
    text = record(tmp_path, files)
    files[0].write_text("changed\n")
    got = judge("x.service", dict(ACTIVE, ActiveState=state), text)
    assert not got["running"] and not got["pending"]
    assert not judge("x.service", dict(ACTIVE, ActiveState=state), None)["pending"]


def test_no_record_an_earlier_record_or_an_unreadable_one_is_pending(tmp_path, files) -> None:
    text = record(tmp_path, files)
    assert judge("x.service", ACTIVE, None)["reason"] == "no record of the files it started from"
    # Restarted since (by hand, the watchdog) without a new record: the record is not of this start.
    assert judge("x.service", dict(ACTIVE, InvocationID="ffff"), text)["reason"] == \
        "its start record is of an earlier start"
    # A record without an invocation id, from a start systemd gave one: not of this start.
    assert judge("x.service", ACTIVE, record(tmp_path, files, invocation=""))["pending"]
    for bad in ("", "garbage\n", text + "not a digest line\n", text.replace("invocation", "invocatio")):
        assert judge("x.service", ACTIVE, bad)["pending"], bad


def test_a_unit_file_systemd_has_not_loaded_is_pending(tmp_path, files) -> None:
    """Written, then the run was cut short before daemon-reload: the unit runs (and a restart alone would start)
    the unit systemd loaded earlier, whatever the record says."""
    text = record(tmp_path, files)
    got = judge("x.service", dict(ACTIVE, NeedDaemonReload="yes"), text)
    assert got["pending"] and got["files"] == ["/etc/systemd/system/x.service"]
    assert "systemd loaded it" in got["reason"]


def test_record_path_and_properties() -> None:
    assert record_path("sglang-decode-i0-r1.service") == "/run/sglang/sglang-decode-i0-r1.service.started"
    assert {"ActiveState", "InvocationID", "NeedDaemonReload"} <= set(PROPERTIES.split(","))


def test_one_systemctl_call_for_every_unit(tmp_path, files, monkeypatch) -> None:
    show = ("ActiveState=active\nInvocationID=0a1b\nNeedDaemonReload=no\nLoadState=loaded\nUnitFileState=enabled\n\n"
            "ActiveState=inactive\nInvocationID=\nNeedDaemonReload=yes\nLoadState=loaded\nUnitFileState=disabled\n")
    calls = []

    def run(argv):
        calls.append(argv)
        return 0, show, ""

    monkeypatch.setattr("ansible_collections.ascend.sglang.plugins.module_utils.files._started.read_record",
                        lambda unit: record(tmp_path, files) if unit == "a.service" else None)
    got = check_units(["a.service", "b.service"], run, "/bin/systemctl")
    assert calls == [["/bin/systemctl", "show", "--property=" + PROPERTIES, "--", "a.service", "b.service"]]
    assert not got["a.service"]["pending"] and got["a.service"]["running"]
    # Not running: nothing pending, but systemd must be reloaded before it starts.
    assert not got["b.service"]["pending"] and got["b.service"]["need_daemon_reload"]
    # Enabled as sglang_units judges it (a deployment leaves a running, enabled unit alone).
    assert got["a.service"]["enabled"] and not got["b.service"]["enabled"]
    assert pending_rows(got.values()) == []


def test_without_systemctl_nothing_is_told_and_nothing_pending() -> None:
    got = check_units(["a.service"], lambda argv: (1, "", "Failed to connect to bus"), "/bin/systemctl")
    assert got["a.service"]["unknown"] == "Failed to connect to bus" and not got["a.service"]["pending"]
    assert not got["a.service"]["enabled"] and not got["a.service"]["running"]
    assert check_units(["a.service"], lambda argv: (0, "", ""), None)["a.service"]["unknown"] == "systemctl not found"
    assert check_units([], lambda argv: (0, "", ""), "/bin/systemctl") == {}


def test_show_output_of_another_length_is_not_matched_to_the_units() -> None:
    assert parse_show_many("ActiveState=active\n", ["a.service", "b.service"]) == {}
    assert parse_show_many("A=1\n\nA=2\n", ["a", "b"]) == {"a": {"A": "1"}, "b": {"A": "2"}}


def test_systemd_without_invocation_ids_compares_the_files(tmp_path, files) -> None:
    """systemd before 232 sets no $INVOCATION_ID and shows no InvocationID: the record's files decide."""
    old = {k: v for k, v in ACTIVE.items() if k != "InvocationID"}
    text = record(tmp_path, files, invocation="")
    assert text.splitlines()[0] == "invocation "
    assert not judge("x.service", old, text)["pending"]
    assert not judge("x.service", dict(old, InvocationID=""), text)["pending"]
    files[0].write_text("changed\n", encoding="utf-8")
    got = judge("x.service", old, text)
    assert got["pending"] and got["files"] == [str(files[0])]


def test_files_the_units_share_are_hashed_once(tmp_path, files, monkeypatch) -> None:
    """cann_env.sh is in the record of every service of a host: one sha256 per file and call, not per unit."""
    module = "ansible_collections.ascend.sglang.plugins.module_utils.files._started"
    show = "ActiveState=active\nInvocationID=0a1b\nNeedDaemonReload=no\nLoadState=loaded\n\n" * 2
    text = record(tmp_path, files)
    monkeypatch.setattr(f"{module}.read_record", lambda unit: text)
    hashed = []
    real = __import__(module, fromlist=["file_digest"]).file_digest
    monkeypatch.setattr(f"{module}.file_digest", lambda path: hashed.append(path) or real(path))
    got = check_units(["a.service", "b.service"], lambda argv: (0, show.rstrip("\n") + "\n", ""), "/bin/systemctl")
    assert not got["a.service"]["pending"] and not got["b.service"]["pending"]
    assert sorted(hashed) == sorted(map(str, files))
