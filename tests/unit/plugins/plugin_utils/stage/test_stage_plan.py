"""The plan of a weights stage (plugin_utils/stage/_stage_plan.py) and the sources an operator names
(plan/_model_sources.py): what each host lacks, the refusals before a byte moves, who pulls from whom in which
round (star and tree), one host's part in a round, the summary."""

from __future__ import annotations

import pytest

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _model_sources as sources
from ansible_collections.ascend.sglang.plugins.plugin_utils.stage._stage_plan import (
    SOURCE, lacking, plan_lines, plan_stage, round_view, rounds, summary,
)

SRC = {"config.json": [3, 100], "model-00001.safetensors": [1000, 100], "model-00002.safetensors": [2000, 100]}
PATH = "/data/models/M"


def obs(files=None, free=10 ** 9, source=None, staged=None, error=None):
    return {PATH: {"path": PATH, "files": files or {}, "staged": staged or {}, "free": free,
                   "source": None if error else (source or SRC), "source_error": error}}


def hosts(n):
    return [f"h{i}" for i in range(n)]


# ---- sources ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text,kind", [
    ("/mnt/share/models/M", "shared"), ("weights01:/export/M", "ssh"), ("ops@weights01.dc:/export/M", "ssh"),
    ("[fd00::1]:/export/M", "ssh"), ("rsync://weights01/models/M", "daemon"), ("rsync://10.0.0.9:8730/models", "daemon"),
])
def test_the_three_forms_of_a_source(text, kind):
    assert sources.kind(text) == kind and sources.problems(text) == []


@pytest.mark.parametrize("text", [
    "models/M", "weights01:models/M", "-e ssh:/x", "/a b", "/a;rm -rf /", "/a/../etc", "h:/x$(id)", "rsync://h/",
    "https://h/x", "", "h:/x\n",
])
def test_what_is_not_a_source(text):
    assert sources.kind(text) is None


def test_a_mapping_names_each_directory_and_a_string_the_model_path():
    assert sources.by_path("w:/x", "/data/M/") == {"/data/M": "w:/x"}
    assert sources.by_path({"/data/A/": "w:/a", "/data/B": "/mnt/b"}, "/data/A") == {"/data/A": "w:/a", "/data/B": "/mnt/b"}
    assert sources.by_path(None, "/data/M") == {}
    assert sources.problems({"data/A": "w:/a"}) and sources.problems({"/data/A": "/data/A"})
    assert "is not a source" in sources.problems({"/data/A": "w:a"})[0]


# ---- what a host lacks -------------------------------------------------------------------------------------

@pytest.mark.parametrize("source, path, refused", [
    ("/data/models/R1", "/data/models/R1", True), ("/data/models/R1/", "/data/models/R1", True),
    ("/data/models/R1", "/data/models/R1//", True), ("/export/models/R1", "/data/models/R1", False),
    ("weights01:/data/models/R1", "/data/models/R1", False),  # the same path on another host: a real source
    ({"/data/models/R1": "/export/R1"}, "/data/models/R1", False),  # the mapping form: problems() checks it
    (None, "/data/models/R1", False), ("/data/models/R1", None, False),
])
def test_a_single_source_that_is_the_model_path_is_refused_naming_both(source, path, refused):
    found = sources.own_source(source, path)
    assert bool(found) == refused
    if refused:
        assert "sglang_model_path" in found and "staged onto themselves" in found


def test_a_host_lacks_what_it_has_not_or_with_another_size_or_mtime():
    local = {"config.json": [3, 100], "model-00001.safetensors": [999, 100], "model-00002.safetensors": [2000, 101]}
    assert lacking(SRC, local, False) == ["model-00001.safetensors", "model-00002.safetensors"]
    assert lacking(SRC, {}, False) == sorted(SRC)
    assert lacking(SRC, {k: list(v) for k, v in SRC.items()}, False) == []
    # full: every file, which rsync compares by content
    assert lacking(SRC, {k: list(v) for k, v in SRC.items()}, True) == sorted(SRC)


def test_bytes_count_what_it_lacks_less_what_an_interrupted_run_staged_whole():
    stage = plan_stage({PATH: "w:/M"}, {"h0": [PATH]},
                       {"h0": obs(files={"config.json": [3, 100]}, staged={"model-00001.safetensors": 1000,
                                                                           "model-00002.safetensors": 5})},
                       parallel=4, fanout=1, tree=True, verify="sizes")
    (copy,) = stage.copies
    assert copy.lacking == ("model-00001.safetensors", "model-00002.safetensors")
    assert copy.bytes == 3000 and copy.staged == 1000  # a partial staged file (5 bytes) does not count


# ---- refused before a byte moves -------------------------------------------------------------------------

def test_too_little_free_space_is_refused_naming_the_host_and_the_bytes_missing():
    stage = plan_stage({PATH: "w:/M"}, {"h0": [PATH], "h1": [PATH]}, {"h0": obs(free=10 ** 9), "h1": obs(free=2000)},
                       parallel=4, fanout=1, tree=True, verify="sizes")
    (error,) = stage.errors
    assert error.startswith("host h1: /data/models/M needs 2.9 KiB free") and "1003 B missing" in error


def test_a_host_that_cannot_read_the_source_or_reads_another_is_refused():
    other = dict(SRC, **{"model-00002.safetensors": [1999, 100]})
    stage = plan_stage({PATH: "w:/M"}, {"h0": [PATH], "h1": [PATH], "h2": [PATH]},
                       {"h0": obs(), "h1": obs(error="ssh: connect to host w port 22: Connection refused"),
                        "h2": obs(source=other)}, parallel=4, fanout=1, tree=True, verify="sizes")
    assert any(e.startswith("host h1: cannot read w:/M (sglang_model_source for /data/models/M): ssh: connect")
               for e in stage.errors)
    assert any(e.startswith("host h2: reads another w:/M than h0 does (model-00002.safetensors)") for e in stage.errors)


# ---- rounds ------------------------------------------------------------------------------------------------

def test_a_star_takes_every_host_from_the_source_parallel_at_a_time():
    out = rounds([(h, 10) for h in hosts(5)], [], parallel=2, fanout=1, tree=False)
    assert out == [[("h0", SOURCE), ("h1", SOURCE)], [("h2", SOURCE), ("h3", SOURCE)], [("h4", SOURCE)]]


def test_a_tree_doubles_the_holders_each_round_and_the_source_sends_once_per_round():
    out = rounds([(h, 10) for h in hosts(8)], [], parallel=8, fanout=1, tree=True)
    assert [len(r) for r in out] == [1, 2, 4, 1]
    assert out[0] == [("h0", SOURCE)]
    assert out[1] == [("h1", "h0"), ("h2", SOURCE)]
    for index, this in enumerate(out):
        assert sum(1 for _h, s in this if s == SOURCE) <= 1
        holders = {h for r in out[:index] for h, _s in r}
        assert all(s == SOURCE or s in holders for _h, s in this)  # only hosts that hold a copy serve


def test_hosts_that_already_hold_a_copy_serve_from_the_first_round_peers_before_the_source():
    out = rounds([("h1", 10), ("h2", 10)], ["h0"], parallel=8, fanout=1, tree=True)
    assert out == [[("h1", "h0"), ("h2", SOURCE)]]


def test_the_bound_holds_in_every_round_and_every_host_pulls_once():
    for n in range(1, 20):
        for parallel in (1, 2, 3, 8):
            for fanout in (1, 2):
                for tree in (True, False):
                    out = rounds([(h, 10) for h in hosts(n)], [], parallel, fanout, tree)
                    assert all(1 <= len(r) <= parallel for r in out)
                    pulled = [h for r in out for h, _s in r]
                    assert sorted(pulled) == sorted(hosts(n))


def test_the_longest_transfers_start_first():
    out = rounds([("a", 1), ("b", 30), ("c", 20)], [], parallel=1, fanout=1, tree=False)
    assert [r[0][0] for r in out] == ["b", "c", "a"]


def test_a_tree_of_eight_takes_four_rounds_and_three_transfers_from_the_source_where_a_star_takes_eight():
    tree = rounds([(h, 10) for h in hosts(8)], [], parallel=8, fanout=1, tree=True)
    star = rounds([(h, 10) for h in hosts(8)], [], parallel=8, fanout=1, tree=False)
    assert len(tree) == 4 and sum(s == SOURCE for r in tree for _h, s in r) == 3
    assert len(star) == 1 and sum(s == SOURCE for r in star for _h, s in r) == 8


# ---- the plan, one host's part, the lines ------------------------------------------------------------------

def _stage(tree=True):
    wanted = {h: [PATH] for h in hosts(4)}
    seen = {h: obs() for h in hosts(4)}
    seen["h3"] = obs(files={k: list(v) for k, v in SRC.items()})  # holds the copy already
    return plan_stage({PATH: "w:/M"}, wanted, seen, parallel=4, fanout=1, tree=tree, verify="sizes").as_dict()


def test_one_hosts_part_in_a_round():
    stage = _stage()
    order = [[(t["host"], t["sender"]) for t in r] for r in stage["rounds"]]
    assert order == [[("h0", "h3"), ("h1", SOURCE)], [("h2", "h0")]]
    addresses = {h: f"10.0.0.{i}" for i, h in enumerate(hosts(4))}
    allowed = {h: [a, "192.168.0.1"] for h, a in addresses.items()}
    ports = {h: 8873 for h in hosts(4)}
    serving = round_view(stage, 0, "h3", addresses, allowed, ports, "tok")
    assert serving == {"serve": [{"name": "sglang-tok-0", "path": PATH}], "allow": ["10.0.0.0", "192.168.0.1"],
                       "pulls": []}
    pulling = round_view(stage, 0, "h0", addresses, allowed, ports, "tok")
    (pull,) = pulling["pulls"]
    assert pull["source"] == "rsync://10.0.0.3:8873/sglang-tok-0/" and pull["sender"] == "h3"
    assert pull["files"] == sorted(SRC) and pull["bytes"] == 3003 and pull["expected"]["config.json"] == 3
    assert round_view(stage, 0, "h1", addresses, allowed, ports, "tok")["pulls"][0]["source"] == "w:/M"
    assert round_view(stage, 5, "h1", addresses, allowed, ports, "tok") == {"serve": [], "allow": [], "pulls": []}
    v6 = round_view(stage, 1, "h2", dict(addresses, h0="fd00::10"), allowed, ports, "tok")
    assert v6["pulls"][0]["source"] == "rsync://[fd00::10]:8873/sglang-tok-0/"


def test_the_lines_say_what_each_host_receives_round_by_round():
    lines = plan_lines(_stage())
    assert lines[0] == "h3: /data/models/M holds the source's 3 files: nothing to receive"
    assert "round 1: h0 receives /data/models/M from h3: 3 file(s), 2.9 KiB" in lines
    assert "round 1: h1 receives /data/models/M from w:/M: 3 file(s), 2.9 KiB" in lines


def test_the_summary_tells_copies_that_disagree():
    stage = _stage()
    out = summary(stage, {"h0": [{"path": PATH, "sender": "h3", "moved": ["a"], "transferred": 3003, "seconds": 2.0,
                                  "digests": {"a": "1" * 64}}],
                          "h1": [{"path": PATH, "sender": "w:/M", "moved": ["a"], "transferred": 3003, "seconds": 1.0,
                                  "digests": {"a": "2" * 64}}]})
    assert out["rows"][0] == ["h0", PATH, "h3", "1", "2.9 KiB", "2.0", "1.5 KiB/s"]
    assert out["failed"] == ["/data/models/M/a: the hosts' sha256 differ (h0 111111111111, h1 222222222222)"]
