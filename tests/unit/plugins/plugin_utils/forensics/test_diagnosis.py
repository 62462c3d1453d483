"""The failure signature table (profiles/_failure_signatures.yml) against real log lines quoted from public issues
(tests/fixtures/failure_logs/signatures.yml), and against a healthy start-up log. Pure Python."""

from __future__ import annotations

import os

import pytest
import yaml

from ansible_collections.ascend.sglang.plugins.plugin_utils.forensics import _diagnosis

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "fixtures", "failure_logs")
TABLE = _diagnosis.load()
with open(os.path.join(FIXTURES, "signatures.yml"), encoding="utf-8") as _handle:
    REAL_LINES = yaml.safe_load(_handle)
CASES = [(sig_id, line) for sig_id, lines in REAL_LINES.items() for line in lines]
IDS = [f"{sig_id}-{number}" for number, (sig_id, _line) in enumerate(CASES)]


def _read(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        return handle.read()


def test_every_signature_has_real_lines_and_every_fixture_a_signature():
    assert {sig.id for sig in TABLE} == set(REAL_LINES)
    assert len(TABLE) >= 10


@pytest.mark.parametrize("sig_id,line", CASES, ids=IDS)
def test_real_line_matches_its_signature_only(sig_id, line):
    found = _diagnosis.match(line, TABLE)
    assert [entry[0].id for entry in found] == [sig_id]
    assert found[0][1] == line.strip()[: _diagnosis.LINE_CHARS]


@pytest.mark.parametrize("name", ["healthy.log", "healthy_npu_smi_health.txt"])
def test_healthy_logs_match_nothing(name):
    assert _diagnosis.match(_read(name), TABLE) == []


def test_every_row_names_a_cause_a_fix_and_a_public_source():
    for sig in TABLE:
        assert sig.cause and sig.fix and "\n" not in sig.cause
        assert "#" in sig.source or "reference" in sig.source, sig.id


def test_worst_first_root_causes_before_the_timeouts_they_cause():
    texts = {
        ("d1", "sglang-decode-i0-r1.service"): REAL_LINES["hccl_link_timeout"][0],
        ("d0", "sglang-decode-i0-r0.service"): REAL_LINES["device_occupied"][0] + "\n" + REAL_LINES["npu_oom"][0],
        ("r0", "sglang-router-i0.service"): REAL_LINES["router_workers"][0],
    }
    troubled = [("p0", "sglang-prefill-i0-r0.service"), ("d1", "sglang-decode-i0-r1.service")]
    diagnosis = _diagnosis.diagnose(texts, TABLE, troubled=troubled)
    assert [f.signature.id for f in diagnosis.findings] == [
        "device_occupied", "npu_oom", "hccl_link_timeout", "router_workers"]
    assert diagnosis.unexplained == [("p0", "sglang-prefill-i0-r0.service")]
    lines = _diagnosis.render(diagnosis, "/tmp/b.tar.gz")
    assert lines[0] == "[critical] d0 sglang-decode-i0-r0.service: the NPU is held by another process or container"
    assert lines[-1].startswith("[unknown] p0 sglang-prefill-i0-r0.service: no known signature; read /tmp/b.tar.gz")


def test_repeated_line_is_counted_once_with_its_first_occurrence():
    text = "\n".join([REAL_LINES["hccl_link_timeout"][0], "ok", REAL_LINES["hccl_link_timeout"][1]])
    ((sig, line, count),) = _diagnosis.match(text, TABLE)
    assert (sig.id, count) == ("hccl_link_timeout", 2) and line.startswith("[rank1]: EI0006")


def test_nothing_known_points_to_the_archive():
    diagnosis = _diagnosis.diagnose({("h", "u.service"): _read("healthy.log")}, TABLE)
    assert _diagnosis.render(diagnosis, "/x/a.tar.gz") == ["no known signature in any collected log; read /x/a.tar.gz"]


@pytest.mark.parametrize("row,error", [
    ({"id": "x", "severity": "fatal", "patterns": ["a"], "cause": "c", "fix": "f", "source": "s#1"}, "severity"),
    ({"id": "x", "severity": "error", "patterns": ["a", "("], "cause": "c", "fix": "f", "source": "s#1"}, "patterns"),
    ({"id": "x", "severity": "error", "patterns": [], "cause": "c", "fix": "f", "source": "s#1"}, "patterns"),
    ({"id": "x", "severity": "error", "patterns": ["a"], "cause": "c", "fix": "f"}, "exactly the fields"),
])
def test_malformed_table_rows_are_refused_naming_the_row(tmp_path, row, error):
    path = tmp_path / "t.yml"
    path.write_text(yaml.safe_dump({"signatures": [row]}))
    with pytest.raises(ValueError, match=error):
        _diagnosis.load(str(path))


def test_the_stand_in_server_prints_what_the_table_recognises():
    """Molecule's failing prefill stand-in (tests/standins) prints these lines before it exits: the diagnosis must
    name them exactly as it names the real ones."""
    import importlib.util  # pylint: disable=import-outside-toplevel

    path = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "standins", "sglang", "sglang", "launch_server.py")
    spec = importlib.util.spec_from_file_location("standin_launch_server", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for failure, lines in module.FAIL_LOGS.items():
        text = "\n".join(line.format(pid=4242, cann_time="2026-11-25-10:00:05.123.456") for line in lines)
        assert {entry[0].id for entry in _diagnosis.match(text, TABLE)} == {failure}
