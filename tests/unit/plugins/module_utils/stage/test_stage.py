"""The weights staging on a host (module_utils/stage): rsync's listing and progress as rsync prints them, and, with
the real rsync on this machine, a pull into the staging directory, its verification and its move into place,
the resume of an interrupted pull, a refusal that moves nothing, the digests of verify full through the cache, and
a pull from a serving host's read-only daemon on loopback."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from ansible_collections.ascend.sglang.plugins.module_utils.stage import _rsync, _stage

from tests.support.local import free_ports

# rsync --list-only --recursive --no-human-readable (rsync 3.2.7, Debian 12; TZ=UTC): a directory line, files.
LISTING = """\
drwxr-xr-x          4,096 2026/11/28 15:30:13 .
-rw-r--r--    4,302,290,944 2026/11/28 15:30:13 model-00001-of-00163.safetensors
-rw-r--r--              2 2026/11/28 15:30:14 sp ace.json
lrwxrwxrwx             10 2026/11/28 15:30:13 link -> target
drwxr-xr-x          4,096 2026/11/28 15:30:13 sub
-rw-r--r--         30000000 2026/11/28 15:30:13 sub/tokenizer.json
"""
# rsync --info=progress2 --outbuf=L (rsync 3.2.7): updates separated by carriage returns.
PROGRESS = ("\r         32,768   0%    0.00kB/s    0:00:00  \r     10,518,528  35%    9.78MB/s    0:00:01  "
            "\r     30,000,000  99%    9.96MB/s    0:00:02 (xfr#1, to-chk=3/5)\r")


def test_a_listing_as_rsync_prints_it():
    assert _rsync.parse_listing(LISTING) == {
        "model-00001-of-00163.safetensors": [4302290944, 1795879813],
        "sp ace.json": [2, 1795879814],
        "sub/tokenizer.json": [30000000, 1795879813],
    }


def test_the_last_progress_update():
    assert _rsync.last_progress(PROGRESS) == {"bytes": 30000000, "percent": 99, "rate": int(9.96 * (1 << 20)),
                                              "eta": 2}
    assert _rsync.last_progress("rsync: connection unexpectedly closed\n") is None


def test_the_pull_argv_names_each_file_below_the_source_or_the_whole_directory():
    argv = _rsync.pull_argv("rsync", "w:/export/M", "/d/.M.sglang-stage/files", ["config.json", "sub/tok.json"],
                            "/d/M", True, 1000)
    assert argv[0] == "rsync" and argv[-4:] == ["--relative", "w:/export/M/./config.json", "w:/export/M/./sub/tok.json",
                                                "/d/.M.sglang-stage/files/"]
    assert "--compare-dest=/d/M" in argv and "--checksum" in argv and "--bwlimit=1000" in argv
    assert "--partial-dir=.sglang-partial" in argv
    many = [f"model-{i:05d}-of-20000.safetensors" for i in range(20000)]
    whole = _rsync.pull_argv("rsync", "w:/export/M/", "/s", many, None, False, 0)
    assert whole[-2:] == ["w:/export/M/", "/s/"] and "--relative" not in whole


def test_a_daemon_serves_read_only_to_the_pullers_only():
    text = _rsync.daemon_config([{"name": "sglang-t-0", "path": "/data/M", "uid": 0, "gid": 0}], ["10.0.0.2"])
    assert "read only = yes" in text and "list = no" in text
    assert "[sglang-t-0]\n    path = /data/M\n    uid = 0\n    gid = 0\n    hosts allow = 10.0.0.2\n    hosts deny = *" in text


# ---- with the real rsync --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def rsync():
    found = shutil.which("rsync")
    if not found:
        if os.environ.get("SGLANG_RSYNC_REQUIRED") == "1":
            pytest.fail("rsync is required here (SGLANG_RSYNC_REQUIRED=1) but not installed")
        pytest.skip("rsync is not installed (tests/validation/setup_rsync.sh installs it; Debian: apt-get install rsync)")
    return found


def _source(root: Path, shard: int = 200_000, tail: int = 0) -> dict[str, int]:
    """A model directory; ``tail`` bytes more in a last file (its name sorts after the others), for a transfer that
    must still run when a test stops it."""
    (root / "sub").mkdir(parents=True)
    files = {"config.json": b"{}", "sub/tokenizer.json": b"tok" * 10}
    for i in (1, 2, 3):
        files[f"model-0000{i}-of-00003.safetensors"] = os.urandom(shard)
    if tail:
        files["zz-tail.bin"] = os.urandom(tail)
    for rel, data in files.items():
        (root / rel).write_bytes(data)
    return {rel: len(data) for rel, data in files.items()}


def _on_disk(stage: str) -> int:
    """The bytes rsync has written under staging's files, its hidden temporary file of the one in flight included."""
    total = 0
    for entry in Path(stage, "files").rglob("*"):
        try:
            total += entry.stat().st_size if entry.is_file() else 0
        except FileNotFoundError:  # a temporary file renamed as the walk passed it
            pass
    return total


def _listing(rsync: str, src: Path) -> dict[str, list[int]]:
    seen = _stage.observe("/nonexistent/M", str(src), rsync, 60)
    assert seen["source_error"] is None
    return seen["source"]


def _wait(path: str, bound: int = 600) -> dict:
    for _unused in range(bound):  # bounded: at most bound x 0.1 s
        state = _stage.poll(path)
        if not state["running"]:
            return state
        time.sleep(0.1)
    raise AssertionError("the pull did not end")


def _same(a: Path, b: Path, expected: dict[str, int]) -> None:
    for rel in expected:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


def test_observe_reports_the_copy_the_source_and_the_free_space(tmp_path, rsync):
    expected = _source(tmp_path / "src")
    seen = _stage.observe(str(tmp_path / "M"), str(tmp_path / "src"), rsync, 60)
    assert seen["exists"] is False and seen["files"] == {} and seen["free"] > 0
    assert {rel: v[0] for rel, v in seen["source"].items()} == expected
    broken = _stage.observe(str(tmp_path / "M"), str(tmp_path / "nothing"), rsync, 60)
    assert broken["source"] is None and "No such file or directory" in broken["source_error"]


def test_a_pull_stages_verifies_and_moves_into_place_with_the_operators_mode(tmp_path, rsync):
    expected = _source(tmp_path / "src")
    path = str(tmp_path / "M")
    assert _stage.start(path, str(tmp_path / "src"), sorted(expected), False, rsync, 0, False)["started"]
    assert _wait(path)["exit_code"] == 0
    assert not os.path.exists(path)  # nothing under the model directory before finish
    out = _stage.finish(path, expected, False, -1, -1, 0o750, str(tmp_path / "cache.json"), False)
    assert out["moved"] == sorted(expected) and out["bytes"] == sum(expected.values())
    _same(tmp_path / "src", tmp_path / "M", expected)
    assert oct(os.stat(path).st_mode & 0o777) == "0o750" and oct(os.stat(f"{path}/sub").st_mode & 0o777) == "0o750"
    assert oct(os.stat(f"{path}/config.json").st_mode & 0o777) == "0o640"
    assert not os.path.exists(_stage.staging_dir(path))
    # mtimes are the source's: the next quick check finds nothing lacking
    assert _stage.observe(path, str(tmp_path / "src"), rsync, 60)["files"] == _listing(rsync, tmp_path / "src")


def test_a_truncated_shard_and_a_missing_file_are_replaced_the_rest_left_alone(tmp_path, rsync):
    expected = _source(tmp_path / "src")
    shutil.copytree(tmp_path / "src", tmp_path / "M")
    subprocess_free_copy = tmp_path / "M"
    os.truncate(subprocess_free_copy / "model-00002-of-00003.safetensors", 1000)
    (subprocess_free_copy / "sub/tokenizer.json").unlink()
    kept = os.stat(subprocess_free_copy / "model-00001-of-00003.safetensors").st_ino
    files = ["model-00002-of-00003.safetensors", "sub/tokenizer.json"]
    path = str(tmp_path / "M")
    _stage.start(path, str(tmp_path / "src"), files, False, rsync, 0, False)
    assert _wait(path)["exit_code"] == 0
    out = _stage.finish(path, expected, False, -1, -1, 0o755, str(tmp_path / "cache.json"), False)
    assert out["moved"] == sorted(files)
    _same(tmp_path / "src", tmp_path / "M", expected)
    assert os.stat(subprocess_free_copy / "model-00001-of-00003.safetensors").st_ino == kept


@pytest.mark.parametrize("through", ["a shared directory", "a daemon"])
def test_an_interrupted_pull_keeps_its_bytes_out_of_the_model_directory_and_resumes(tmp_path, rsync, through):
    # 3 shards of 3 MB, then 60 MB more: at 2 MB/s the pull runs for half a minute after the point where it is
    # stopped, however slowly this test's polling is scheduled on a busy machine.
    expected = _source(tmp_path / "store" / "M", shard=3_000_000, tail=60_000_000)
    source = str(tmp_path / "store" / "M")
    serve_dir = str(tmp_path / "serve")
    if through == "a daemon":  # a delta transfer: the interrupted bytes are the resumed file's basis
        (port,) = free_ports(1)
        _stage.serve([{"name": "models", "path": str(tmp_path / "store")}], ["127.0.0.1"], port, rsync, False,
                     serve_dir)
        source = f"rsync://127.0.0.1:{port}/models/M"
    try:
        path = str(tmp_path / "M")
        files = sorted(expected)
        _stage.start(path, source, files, False, rsync, 2000, False)  # 2 MB/s: 1.5 s per shard, 35 s in all
        # Bounded: until more than one shard's worth of bytes is on disk in staging. Not rsync's progress figure: it
        # counts what the sender has sent, and on a busy machine the receiver may not have written any of it when it
        # is stopped (a local copy's receiver is told to exit, not to drain what is still in the socket).
        for _unused in range(600):
            on_disk = _on_disk(_stage.staging_dir(path))
            if on_disk > 3_500_000:
                break
            time.sleep(0.05)
        assert _stage.stop(path)
        stopped = _stage.poll(path)
        assert stopped["running"] is False and stopped["exit_code"] != 0
        assert not os.path.exists(path)
        kept = sum(p.stat().st_size for p in Path(_stage.staging_dir(path)).rglob("*.safetensors"))
        # a whole shard staged, and the bytes of the one in flight
        assert kept > 3_000_000, (on_disk, sorted(str(p) for p in Path(_stage.staging_dir(path)).rglob("*")))
        assert _stage.observe(path, source, rsync, 60)["staged"]  # the whole ones, not the partial one
        again = _stage.start(path, source, files, False, rsync, 0, False)
        assert again["started"] and _wait(path)["exit_code"] == 0, _stage.poll(path)
        _stage.finish(path, expected, False, -1, -1, 0o755, str(tmp_path / "cache.json"), False)
        _same(tmp_path / "store" / "M", tmp_path / "M", expected)
    finally:
        _stage.unserve(False, serve_dir)


def test_a_second_start_while_one_runs_attaches_to_it(tmp_path):
    """What is followed is the process the first start recorded: a stand-in named rsync that waits (the real rsync's
    transfer would end on its own). The second start comes at once, while the first may still be inside execve (its
    arguments not yet readable): it is followed all the same."""
    standin = tmp_path / "bin" / "rsync"
    standin.parent.mkdir()
    standin.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(120)\n")
    standin.chmod(0o755)
    path = str(tmp_path / "M")
    first = _stage.start(path, str(tmp_path / "src"), ["config.json"], False, str(standin), 0, False)
    try:
        second = _stage.start(path, str(tmp_path / "src"), ["config.json"], False, str(standin), 0, False)
        assert second == {"started": False, "attached": True, "pid": first["pid"]}
        assert _stage.poll(path)["running"] is True
    finally:
        assert _stage.stop(path)
    assert _stage.poll(path)["running"] is False


def test_a_staged_file_of_the_wrong_size_moves_nothing(tmp_path, rsync):
    expected = _source(tmp_path / "src")
    path = str(tmp_path / "M")
    _stage.start(path, str(tmp_path / "src"), sorted(expected), False, rsync, 0, False)
    assert _wait(path)["exit_code"] == 0
    wrong = dict(expected, **{"model-00003-of-00003.safetensors": 7})
    with pytest.raises(_stage.StageError, match=r"not moved into place, 1 file\(s\) do not match the source: "
                                                r"model-00003-of-00003.safetensors has 200000 bytes, the source 7"):
        _stage.finish(path, wrong, False, -1, -1, 0o755, str(tmp_path / "cache.json"), False)
    assert not os.path.exists(path)
    with pytest.raises(_stage.StageError, match="extra.json missing"):
        _stage.finish(path, dict(expected, **{"extra.json": 2}), False, -1, -1, 0o755, str(tmp_path / "c.json"), False)


def test_verify_full_returns_every_files_sha256_through_the_cache(tmp_path, rsync):
    expected = _source(tmp_path / "src")
    path = str(tmp_path / "M")
    cache = str(tmp_path / "cache.json")
    _stage.start(path, str(tmp_path / "src"), sorted(expected), True, rsync, 0, False)
    assert _wait(path)["exit_code"] == 0
    out = _stage.finish(path, expected, True, -1, -1, 0o755, cache, False)
    assert out["digests"] == {rel: hashlib.sha256((tmp_path / "src" / rel).read_bytes()).hexdigest() for rel in expected}
    assert out["hashed"] == len(expected)
    assert set(json.loads(Path(cache).read_text())) == {f"{path}/{rel}" for rel in expected}


def test_a_serving_host_serves_its_copy_read_only_on_loopback(tmp_path, rsync):
    expected = _source(tmp_path / "src")
    (port,) = free_ports(1)
    serve_dir = str(tmp_path / "serve")
    served = _stage.serve([{"name": "sglang-test-0", "path": str(tmp_path / "src")}], ["127.0.0.1"], port, rsync, False,
                          serve_dir)
    try:
        assert served["changed"]
        again = _stage.serve([{"name": "sglang-test-0", "path": str(tmp_path / "src")}], ["127.0.0.1"], port, rsync,
                             False, serve_dir)
        assert again == {"changed": False, "pid": served["pid"]}
        source = f"rsync://127.0.0.1:{port}/sglang-test-0/"
        path = str(tmp_path / "M")
        _stage.start(path, source, sorted(expected), False, rsync, 0, False)
        assert _wait(path)["exit_code"] == 0
        _stage.finish(path, expected, False, -1, -1, 0o755, str(tmp_path / "cache.json"), False)
        _same(tmp_path / "src", tmp_path / "M", expected)
        # another module name is refused: only the hosts told the name can ask for it
        seen = _stage.observe(str(tmp_path / "N"), f"rsync://127.0.0.1:{port}/sglang-other-0/", rsync, 30)
        assert seen["source"] is None and "Unknown module" in seen["source_error"]
    finally:
        assert _stage.unserve(False, serve_dir)
    assert not _stage.unserve(False, serve_dir)


def test_a_pull_of_some_files_from_a_daemon_module_that_serves_a_parent_without_chroot(tmp_path, rsync):
    """rsync 3.2's --files-from reports such files "vanished"; each file named below the source is fetched."""
    expected = _source(tmp_path / "store" / "M")
    (port,) = free_ports(1)
    serve_dir = str(tmp_path / "serve")
    _stage.serve([{"name": "models", "path": str(tmp_path / "store")}], ["127.0.0.1"], port, rsync, False, serve_dir)
    try:
        shutil.copytree(tmp_path / "store" / "M", tmp_path / "M")
        (tmp_path / "M" / "sub" / "tokenizer.json").unlink()
        os.truncate(tmp_path / "M" / "config.json", 1)
        path = str(tmp_path / "M")
        _stage.start(path, f"rsync://127.0.0.1:{port}/models/M", ["config.json", "sub/tokenizer.json"], False, rsync,
                     0, False)
        assert _wait(path)["exit_code"] == 0
        out = _stage.finish(path, expected, False, -1, -1, 0o755, str(tmp_path / "cache.json"), False)
        assert out["moved"] == ["config.json", "sub/tokenizer.json"]
        _same(tmp_path / "store" / "M", tmp_path / "M", expected)
    finally:
        _stage.unserve(False, serve_dir)


def test_the_daemon_configuration_takes_plain_values_only(tmp_path):
    with pytest.raises(_stage.StageError, match="refused module"):
        _stage.serve([{"name": "m\n[all]\npath = /", "path": str(tmp_path)}], [], 1, "rsync", True, str(tmp_path / "s"))
    with pytest.raises(_stage.StageError, match="refused module"):
        _stage.serve([{"name": "m", "path": f"{tmp_path}\n[all]"}], [], 1, "rsync", True, str(tmp_path / "s"))


def test_no_source_waits_for_a_password_or_a_silent_peer():
    ssh = _rsync.list_argv("rsync", "w:/export/M")
    assert "--rsh=ssh -o BatchMode=yes -o ConnectTimeout=30" in ssh and "--timeout=600" in ssh
    assert "--contimeout=30" in _rsync.pull_argv("rsync", "rsync://w/m/M", "/s", None, None, False, 0)
    shared = _rsync.list_argv("rsync", "/mnt/M")
    assert not any(a.startswith(("--rsh", "--contimeout")) for a in shared)
