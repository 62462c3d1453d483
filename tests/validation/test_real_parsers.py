"""Every rendered command, for every release a profile supports, through the real parsers.

The SGLang releases are installed by setup_parsers.sh (scripts/test.sh runs it and sets
SGLANG_PARSERS_REQUIRED=1, so in CI a missing parser fails instead of skipping).
"""

from __future__ import annotations

import functools
import os

import pytest
import yaml

import parsers
import test_golden as golden
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _packing, _planner, _profile, _records
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._releases import load_release_tables

TABLES = load_release_tables()
PROFILES = [p for p in _profile.available_profiles() if p not in golden.ALIASES]
# The profiles whose hosts can run several replicas (sglang_instances_per_host).
PACKABLE = [p for p in PROFILES if _packing.packable(_profile.load_profile(p), "mixed")]


MISTAKES = [["--tp", "16"], ["--dp", "16"], ["--moe-dense-tp", "1"],
            ["--load-balance-method", "decode_round_robin"], ["--dtype", "bfloat1"]]
CHANGE_VALUES = {"--cuda-graph-bs": ["4", "8"], "--cuda-graph-max-bs": ["4"],
                 "--mamba-scheduler-strategy": ["extra_buffer"]}


def change_probes(change) -> tuple[list[str], list[str]]:
    """A minimal command with the old flag, and its spelling after the change."""
    value = CHANGE_VALUES.get(change.flag, [])
    old = ["--model-path", "/m", "--tp-size", "16", change.flag, *value]
    new = ["--model-path", "/m", "--tp-size", "16"]
    for flag, v in change.to.items():
        new += [flag] if v is True else [flag, *(value if v == "{value}" else ["16"])]
    return old, new


@pytest.fixture(scope="session", autouse=True)
def _parse_everything_once():
    """One parser process per release for the whole session."""
    wanted: dict[tuple[str, str], list[list[str]]] = {}
    table = TABLES["sglang"]
    for pid in PROFILES:
        plan = rendered(pid)
        for release in table.releases:
            if release in plan.supported_releases["sglang"]:
                wanted.setdefault(("server", release), []).extend(
                    argv for _unused, argv in commands(rendered(pid, release), router=False))
        first = table.releases.index(plan.supported_releases["sglang"][0])
        if first:
            wanted.setdefault(("server", table.releases[first - 1]), []).extend(
                argv for _unused, argv in commands(plan, router=False))
    for pid in PACKABLE:
        for release in rendered(pid).supported_releases["sglang"]:
            wanted.setdefault(("server", release), []).extend(
                argv for _unused, argv in commands(rendered(pid, release, packed=True), router=False))
    for change in table.changes:
        old, new = change_probes(change)
        for release in table.releases:
            wanted.setdefault(("server", release), []).extend([old, new])
    for release in table.releases:
        wanted.setdefault(("server", release), []).extend(["--model-path", "/m", *m] for m in MISTAKES)
    for (kind, release), argvs in wanted.items():
        if parsers.available(kind, release):
            parsers.prime(kind, release, argvs)


def need(kind: str, release: str) -> None:
    if not parsers.available(kind, release):
        if os.environ.get("SGLANG_PARSERS_REQUIRED") == "1":
            pytest.fail(f"the {kind} parser of {release} is not installed (tests/validation/setup_parsers.sh)")
        pytest.skip(f"{kind} parser {release} not installed; run tests/validation/setup_parsers.sh")


@functools.lru_cache(maxsize=None)
def rendered(pid: str, release: str | None = None, router_release: str | None = None, packed: bool = False
             ) -> _records.Plan:
    """The profile on its documented layout; ``packed``: every server host runs as many replicas as it holds.
    Planned once per arguments: the session fixture and every test read the same plans, and none changes one."""
    profile = _profile.load_profile(pid)
    inv = golden.golden_inventory(golden.golden_layout(profile),
                                  {"sglang_instances_per_host": "max"} if packed else None)
    if release:
        inv.variables["sglang_release"] = release
    if router_release:
        inv.variables["sglang_router_release"] = router_release
    return _planner.plan(profile, inv)


def commands(plan: _records.Plan, router: bool) -> list[tuple[str, list[str]]]:
    return [(svc.name, svc.argv[3:]) for host in plan.hosts.values() for svc in host.services
            if (svc.role == "router") == router]


@pytest.mark.parametrize("release", TABLES["sglang"].releases)
def test_server_commands_parse_with_every_supported_release(release: str) -> None:
    need("server", release)
    batch, where = [], []
    for pid in PROFILES:
        plan = rendered(pid)
        if release not in plan.supported_releases["sglang"]:
            continue
        for name, argv in commands(rendered(pid, release), router=False):
            batch.append(argv)
            where.append(f"{pid} {name}")
    assert batch, f"no profile supports {release}"
    failures = [f"{w}: {r['error']}" for w, r in zip(where, parsers.parsed("server", release, batch)) if not r["ok"]]
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("release", TABLES["sglang"].releases)
def test_packed_replicas_parse_with_every_supported_release(release: str) -> None:
    """Every replica of a host packed to the full (its own --base-gpu-id and --port) is a valid launch."""
    need("server", release)
    batch, where = [], []
    for pid in PACKABLE:
        if release not in rendered(pid).supported_releases["sglang"]:
            continue
        plan = rendered(pid, release, packed=True)
        argvs = commands(plan, router=False)
        server_hosts = [h for h, hp in plan.hosts.items() if any(s.role == "mixed" for s in hp.services)]
        assert len(argvs) == _packing.max_replicas(_profile.load_profile(pid)) * len(server_hosts) > 1, pid
        for name, argv in argvs:
            batch.append(argv)
            where.append(f"{pid} {name}")
    assert batch, f"no packable profile supports {release}"
    failures = [f"{w}: {r['error']}" for w, r in zip(where, parsers.parsed("server", release, batch)) if not r["ok"]]
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("release", TABLES["sglang_router"].releases)
def test_router_commands_parse_with_every_router_release(release: str) -> None:
    need("router", release)
    batch, where = [], []
    for pid in PROFILES:
        for name, argv in commands(rendered(pid, router_release=release), router=True):
            batch.append(argv)
            where.append(f"{pid} {name}")
    # PD-mixed replicas behind a router use its regular mode; include one such fleet.
    fleet = _planner.plan(_profile.load_profile("qwen3_32b_a3_2c_mixed_3k5_1k5_50ms"),
                          _topology_fleet(router_release=release))
    for name, argv in commands(fleet, router=True):
        batch.append(argv)
        where.append(f"mixed fleet {name}")
    failures = [f"{w}: {r['error']}" for w, r in zip(where, parsers.parsed("router", release, batch)) if not r["ok"]]
    assert not failures, "\n".join(failures)


def _topology_fleet(router_release: str):
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._topology import build_inventory

    groups = {"mixed": ["m0", "m1", "m2"], "router": ["r0"]}
    hostvars = {f"m{i}": {"sglang_host_ip": f"10.0.3.{i + 1}"} for i in range(3)}
    return build_inventory(groups, hostvars, {"sglang_model_path": "/m", "sglang_draft_model_path": "/d",
                                              "sglang_router_release": router_release})


# The release the current pages' commands are written for (their profiles target it, or the first later release
# that takes their flags).
PAGES_RELEASE = yaml.safe_load((parsers.ROOT / "tests" / "golden" / "upstream_pages.yml").read_text())["release"]
# The release the profiles of SGLang's nightly tests are checked against (scripts/import_nightly.py), likewise.
NIGHTLY_RELEASE = yaml.safe_load((parsers.ROOT / "tests" / "golden" / "upstream_nightly.yml").read_text())["release"]


@pytest.mark.parametrize("pid", PROFILES)
def test_target_release_is_the_oldest_that_accepts_the_profile(pid: str) -> None:
    plan = rendered(pid)
    supported = plan.supported_releases["sglang"]
    table = TABLES["sglang"]
    profile = _profile.load_profile(pid)
    if profile.generation == _profile.FIRST_GENERATION:
        assert plan.releases["sglang"] == supported[0], "a profile targets the oldest release that accepts it"
    elif profile.retired:
        # A configuration the pages changed or dropped keeps the release its page named when it was read.
        assert plan.releases["sglang"] in supported, "a retired profile targets a release that accepts it"
    elif profile.source.get("kind") == "nightly":
        assert plan.releases["sglang"] == next(r for r in supported if table.at_least(r, NIGHTLY_RELEASE)), (
            "a profile of a nightly test targets the record's release, or the first later one that accepts it")
    else:
        assert plan.releases["sglang"] == next(r for r in supported if table.at_least(r, PAGES_RELEASE)), (
            "a profile of the current pages targets their release, or the first later one that accepts it")
    older = table.releases[: table.releases.index(supported[0])]
    if not older:
        return
    # The release right before the oldest supported one must really reject the commands.
    previous = older[-1]
    need("server", previous)
    argvs = [argv for _unused, argv in commands(plan, router=False)]
    assert not all(r["ok"] for r in parsers.parsed("server", previous, argvs)), (
        f"{previous} accepts {pid}: the 'added' table in profiles/_releases.yml claims otherwise")


@pytest.mark.parametrize("change", TABLES["sglang"].changes, ids=lambda c: f"{c.flag}@{c.since}")
def test_every_recorded_flag_change_is_real(change) -> None:
    table = TABLES["sglang"]
    before = table.releases[table.releases.index(change.since) - 1]
    need("server", before)
    need("server", change.since)
    old, new = change_probes(change)
    assert parsers.parsed("server", before, [old])[0]["ok"], f"{before} should accept {change.flag}"
    assert parsers.parsed("server", change.since, [new])[0]["ok"], f"{change.since} should accept {new}"
    last = table.releases[-1]
    need("server", last)
    if change.flag != "--prefill-round-robin-balance" or last != change.since:
        assert not parsers.parsed("server", last, [old])[0]["ok"], f"{last} still accepts {change.flag}"


# Releases that, measured, do accept one of the documented mistakes.
ACCEPTED_BY = {"decode_round_robin": {"0.5.7"}}


@pytest.mark.parametrize("flag", sorted(TABLES["sglang"].removed))
def test_every_recorded_removal_is_real(flag: str) -> None:
    """A flag profiles/_releases.yml records as removed is in the catalog of the release before and in none from
    the recorded one on (the catalogs are the parsers': test_flag_catalog_matches_the_parser)."""
    table = TABLES["sglang"]
    since = table.removed[flag][0]
    index = table.releases.index(since)
    assert flag in table.flags(table.releases[index - 1])
    assert not any(flag in table.flags(release) for release in table.releases[index:])


@pytest.mark.parametrize("argv", MISTAKES, ids=" ".join)
def test_documented_mistakes_are_rejected(argv: list[str]) -> None:
    """The deviations recorded for these are needed: the releases reject the documented text."""
    for release in TABLES["sglang"].releases:
        need("server", release)
    accepted = {r for r in TABLES["sglang"].releases
                if parsers.parsed("server", r, [["--model-path", "/m", *argv]])[0]["ok"]}
    assert accepted == ACCEPTED_BY.get(argv[-1], set())


@pytest.mark.parametrize("kind, release", [("server", r) for r in TABLES["sglang"].releases]
                         + [("router", r) for r in TABLES["sglang_router"].releases])
def test_flag_catalog_matches_the_parser(kind: str, release: str) -> None:
    """profiles/_flags/ is what the planner checks overrides against: it must be the parser's own list."""
    need(kind, release)
    committed = [line for line in parsers.catalog_path(kind, release).read_text().splitlines()
                 if line.startswith("--")]
    assert committed == parsers.option_strings(kind, release), "run tests/validation/update_flag_catalog.py"
