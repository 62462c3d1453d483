"""Every profile's benchmark command through the argument parser its release's sglang.bench_serving builds.

The parser is built from the release's source in the parser cache (bench_parser.py says how); the importer, which
has no parser cache, checks a document's benchmark arguments against profiles/_flags/bench_serving-<release>.txt,
which test_bench_catalog_matches_the_parser keeps equal to the parser's own list.
"""

from __future__ import annotations

import functools

import pytest

import bench_parser
import parsers
import test_golden as golden
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _planner, _profile
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._releases import load_release_tables
from test_real_parsers import need

RELEASES = load_release_tables()["sglang"].releases
# Every shipped profile: the pages', the nightly tests', the January documents' and the retired ones.
PROFILES = [p for p in _profile.available_profiles() if p not in golden.ALIASES]


@functools.lru_cache(maxsize=None)
def benchmark(pid: str) -> tuple[str, list[str]]:
    """The profile's release and its benchmark's arguments as the planner renders them (after ``-m``)."""
    profile = _profile.load_profile(pid)
    plan = _planner.plan(profile, golden.golden_inventory(golden.golden_layout(profile)))
    return plan.releases["sglang"], list(plan.bench["argv"][3:]) if plan.bench else []


@pytest.mark.parametrize("release", RELEASES)
def test_bench_commands_parse_with_the_profiles_release(release: str) -> None:
    """An unknown or malformed benchmark argument fails here, naming the profile and argparse's message (which
    names the argument)."""
    need("server", release)
    mine = [pid for pid in PROFILES if benchmark(pid)[0] == release and benchmark(pid)[1]]
    failures = [f"{pid}: {result['error']}" for pid in mine
                if not (result := bench_parser.parse(release, benchmark(pid)[1]))["ok"]]
    assert not failures, "\n".join(failures)


def test_every_profile_has_a_benchmark() -> None:
    assert not [pid for pid in PROFILES if not benchmark(pid)[1]]


@pytest.mark.parametrize("argv, named", [(["--num-prompts", "many"], "--num-prompts"),
                                         (["--request-rat", "4"], "--request-rat"),
                                         (["--dataset-name", "randomly"], "--dataset-name"),
                                         (["--random-input-len", "1024", "touch", "/x"], "touch")])
def test_a_bad_argument_is_named(argv: list[str], named: str) -> None:
    """A malformed value, an abbreviation (abbreviations are off) and stray words are each refused by name."""
    release = RELEASES[-1]
    need("server", release)
    result = bench_parser.parse(release, argv)
    assert not result["ok"] and named in result["error"], result


@pytest.mark.parametrize("release", RELEASES)
def test_bench_catalog_matches_the_parser(release: str) -> None:
    """profiles/_flags/bench_serving-<release>.txt is what the importer checks a document's benchmark against."""
    need("server", release)
    committed = [line for line in parsers.bench_catalog_path(release).read_text().splitlines()
                 if line.startswith("--")]
    assert committed == bench_parser.option_strings(release), "run tests/validation/update_flag_catalog.py"
