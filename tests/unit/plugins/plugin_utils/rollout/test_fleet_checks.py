"""The preflight checks that compare hosts (plugin_utils/rollout/_fleet_checks.py): the ping plan of the documented layouts
(it grows linearly with the fleet), the TLS rule across hosts and the weights comparison. Pure Python on real plans."""

from __future__ import annotations

import pytest

from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._fleet_checks import (
    links, ping_plan, tls_findings, weights_findings,
)

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import typed_plan

from tests.unit import plans


def make_plan(*args, **groups):
    """A documented profile's plan, typed as the filter and the report action hand it over."""
    profile, plan = plans.make_plan(*args, **groups)
    return profile, typed_plan(plan)


def fabric(host_index: int, devices: range, tls: int = 0, missing_ip: tuple[int, ...] = ()) -> dict:
    """A host's preflight observations: hccn_tool's answers for its devices."""
    return {"fabric": {"available": True, "devices": {
        str(d): {"ip": {"value": {"address": None if d in missing_ip else f"10.90.{host_index}.{d}"}},
                 "tls": {"value": {"switch": tls}}, "link": {"value": "UP"}, "net_health": {"value": "Success"}}
        for d in devices}}}


def observed_for(plan, **overrides) -> dict:
    out = {}
    for index, host in enumerate(plan.hosts):
        out[host] = overrides.get(host) or fabric(index, range(16))
    return out


def test_pd32_pings_the_decode_ranks_and_each_decode_host_one_prefill_host() -> None:
    _unused, plan = make_plan("deepseek_r1_pd32", prefill=2, decode=2, router=1)
    assert links(plan) == [("decode1", "decode0", "ranks of decode instance 0"),
                           ("decode0", "prefill0", "KV transfer, prefill and decode"),
                           ("decode1", "prefill1", "KV transfer, prefill and decode")]
    pings = ping_plan(plan, observed_for(plan))
    assert set(pings) == {"prefill0", "prefill1", "decode0", "decode1", "router0"}
    assert pings["prefill0"] == [] and pings["router0"] == []
    # Device i pings device i of the peer, at the IP the peer's hccn_tool reported.
    assert len(pings["decode0"]) == 16 and len(pings["decode1"]) == 32
    assert pings["decode0"][3] == {"device": 3, "address": "10.90.0.3", "peer": "prefill0", "peer_device": 3,
                                   "why": "KV transfer, prefill and decode"}
    # A device without an IP on either end is not pinged (npu_ip reports it).
    fewer = ping_plan(plan, observed_for(plan, prefill0=fabric(0, range(16), missing_ip=(5,))))
    assert [p["device"] for p in fewer["decode0"]] == [d for d in range(16) if d != 5]


def test_the_16_card_pd_and_the_mixed_layouts() -> None:
    _unused, pd16 = make_plan("deepseek_r1_a3_16c_pd_2k_2k_50ms", prefill=1, decode=1, router=1)
    assert links(pd16) == [("decode0", "prefill0", "KV transfer, prefill and decode")]
    # PD-mixed 2-node instances: only the ranks of each instance talk; single-node mixed instances ping nothing.
    _unused, mixed = make_plan("qwen3_235b_a3_16c_mixed_2k_2k_50ms", mixed=4, router=1)
    assert links(mixed) == [("mixed1", "mixed0", "ranks of mixed instance 0"),
                            ("mixed3", "mixed2", "ranks of mixed instance 1")]
    _unused, single = make_plan("qwen3_32b_a3_2c_mixed_2k_2k_50ms", mixed=2, router=1)
    assert links(single) == [] and all(p == [] for p in ping_plan(single, observed_for(single)).values())
    # The 24-card PD layout: 1-node prefill instances, 2-node decode instances.
    experts = {"sglang_init_expert_location": "/models/e.json"}
    _unused, pd24 = make_plan("qwen3_235b_a3_24c_pd_3k5_1k5_50ms", experts, prefill=1, decode=2, router=1)
    assert links(pd24) == [("decode1", "decode0", "ranks of decode instance 0"),
                           ("decode0", "prefill0", "KV transfer, prefill and decode"),
                           ("decode1", "prefill0", "KV transfer, prefill and decode")]


@pytest.mark.parametrize("prefill, decode", [(2, 2), (8, 8), (64, 64), (200, 200), (96, 32)])
def test_the_plan_grows_linearly_with_the_fleet(prefill, decode) -> None:
    _unused, plan = make_plan("deepseek_r1_pd32", prefill=prefill, decode=decode, router=1)
    pairs = links(plan)
    # decode/2 rank pairs + max(prefill, decode) KV pairs: never prefill x decode.
    assert len(pairs) == decode // 2 + max(prefill, decode)
    assert len({frozenset(p[:2]) for p in pairs}) == len(pairs)
    # Every server host takes part.
    assert {h for p in pairs for h in p[:2]} == {h for h in plan.hosts if not h.startswith("router")}


def test_an_off_ping_check_plans_nothing() -> None:
    _unused, plan = make_plan("deepseek_r1_pd32", {"sglang_preflight_checks": {"npu_ping": "off"}},
                              prefill=2, decode=2, router=1)
    assert all(p == [] for p in ping_plan(plan, observed_for(plan)).values())


def test_tls_differs_on_one_host() -> None:
    _unused, plan = make_plan("deepseek_r1_pd32", prefill=2, decode=2, router=1)
    findings = tls_findings(plan, observed_for(plan, prefill1=fabric(1, range(16), tls=1)))
    bad = [f for f in findings if f.severity != "ok"]
    assert len(bad) == 1 and bad[0].host == "prefill1" and bad[0].check == "npu_tls"
    assert bad[0].found == "devices 0-15: tls switch 1" and bad[0].severity == "fail"
    assert bad[0].expected == "tls switch 0, as on decode0, decode1, prefill0"
    assert "cannot connect" in bad[0].fix and bad[0].service == "sglang-prefill-i1-r0"
    assert {f.host for f in findings if f.severity == "ok"} == {"prefill0", "decode0", "decode1"}
    # One device of one host, and the warn level.
    one = observed_for(plan)
    one["decode1"]["fabric"]["devices"]["7"]["tls"]["value"]["switch"] = 1
    _unused, warn = make_plan("deepseek_r1_pd32", {"sglang_preflight_checks": {"npu_tls": "warn"}},
                              prefill=2, decode=2, router=1)
    bad = [f for f in tls_findings(warn, one) if f.severity != "ok"]
    assert [(f.host, f.severity, f.found) for f in bad] == [("decode1", "warn", "device 7: tls switch 1")]
    assert all(f.severity == "ok" for f in tls_findings(plan, observed_for(plan)))


def copy(files: dict, digests: dict | None = None) -> dict:
    return {"exists": True, "error": None, "files": dict(files), "digests": dict(digests or {})}


FILES = {"config.json": 1200, "model.safetensors.index.json": 90000, "model-00001-of-00002.safetensors": 4_000_000,
         "model-00002-of-00002.safetensors": 3_000_000}
DIGESTS = {"config.json": "a" * 64, "model.safetensors.index.json": "b" * 64}


def weights(plan, **copies) -> dict:
    return {host: {"weights": {"/models/m": copies.get(host, copy(FILES, DIGESTS)),
                               "/models/draft": copy({"config.json": 10}, {"config.json": "c" * 64})}}
            for host in plan.hosts}


def test_a_large_fleet_names_three_hosts_and_counts_the_rest() -> None:
    """A cell of the table names a few hosts of a large fleet, not every one of them."""
    _unused, plan = make_plan("deepseek_r1_pd32", prefill=8, decode=8, router=1)
    bad = [f for f in tls_findings(plan, observed_for(plan, prefill1=fabric(1, range(16), tls=1)))
           if f.severity != "ok"]
    assert [f.host for f in bad] == ["prefill1"]
    assert bad[0].expected == "tls switch 0, as on decode0, decode1, decode2, and 12 more"
    short = dict(FILES, **{"model-00002-of-00002.safetensors": 1_000_000})
    bad = [f for f in weights_findings(plan, weights(plan, prefill3=copy(short, DIGESTS))) if f.severity != "ok"]
    assert [f.host for f in bad] == ["prefill3"]
    assert bad[0].found.startswith("/models/m differs from decode0, decode1, decode2, and 12 more: model-00002")


def test_weights_the_same_everywhere_pass() -> None:
    _unused, plan = make_plan("deepseek_r1_pd32", prefill=2, decode=2, router=1)
    findings = weights_findings(plan, weights(plan))
    assert findings and all(f.severity == "ok" for f in findings)


def test_a_shard_of_another_size_names_the_host_and_the_file() -> None:
    """The prefill and decode servers load one model: a copy that differs on one host is named, with the file."""
    _unused, plan = make_plan("deepseek_r1_pd32", prefill=2, decode=2, router=1)
    short = dict(FILES, **{"model-00002-of-00002.safetensors": 1_000_000})
    bad = [f for f in weights_findings(plan, weights(plan, prefill0=copy(short, DIGESTS))) if f.severity != "ok"]
    assert len(bad) == 1 and bad[0].host == "prefill0" and bad[0].check == "weights"
    assert bad[0].found == ("/models/m differs from decode0, decode1, prefill1: model-00002-of-00002.safetensors "
                            "1000000 bytes (others 3000000)")
    assert "rsync" in bad[0].fix and bad[0].service == "sglang-prefill-i0-r0"


def test_another_config_or_a_missing_file_is_named() -> None:
    _unused, plan = make_plan("deepseek_r1_pd32", prefill=2, decode=2, router=1)
    other = copy({k: v for k, v in FILES.items() if not k.startswith("model-00001")},
                 dict(DIGESTS, **{"config.json": "f" * 64}))
    bad = [f for f in weights_findings(plan, weights(plan, decode1=other)) if f.severity != "ok"]
    assert [f.host for f in bad] == ["decode1"]
    assert "model-00001-of-00002.safetensors missing" in bad[0].found
    assert "config.json sha256 ffffffffffff (others aaaaaaaaaaaa)" in bad[0].found


def test_two_hosts_two_copies_names_both() -> None:
    """No majority: both hosts of a 2-node instance are named, each against the other."""
    _unused, plan = make_plan("deepseek_r1_a3_16c_pd_2k_2k_50ms", prefill=1, decode=1, router=1)
    short = dict(FILES, **{"config.json": 1100})
    bad = [f for f in weights_findings(plan, weights(plan, decode0=copy(short, DIGESTS))) if f.severity != "ok"]
    assert sorted(f.host for f in bad) == ["decode0", "prefill0"]
    assert all("config.json" in f.found for f in bad)


def test_a_tie_names_another_copy_to_take() -> None:
    """Two copies on two hosts each: every host is named, against the hosts holding the other copy, and the copy
    to take is never its own."""
    _unused, plan = make_plan("deepseek_r1_pd32", prefill=2, decode=2, router=1)
    short = copy(dict(FILES, **{"config.json": 1100}), DIGESTS)
    bad = [f for f in weights_findings(plan, weights(plan, decode0=short, decode1=short)) if f.severity != "ok"]
    assert sorted(f.host for f in bad) == ["decode0", "decode1", "prefill0", "prefill1"]
    for finding in bad:
        others = ["decode0", "decode1"] if finding.host.startswith("prefill") else ["prefill0", "prefill1"]
        assert finding.found.startswith(f"/models/m differs from {', '.join(others)}: config.json "), finding.found
        assert f"rsync -a --checksum --delete {others[0]}:/models/m/" in finding.fix, finding.fix


def test_weights_off_and_unreadable_copies() -> None:
    _unused, plan = make_plan("deepseek_r1_pd32", {"sglang_preflight_checks": {"weights": "off"}},
                              prefill=2, decode=2, router=1)
    assert weights_findings(plan, weights(plan, prefill0=copy({}, {}))) == []
    _unused, plan = make_plan("deepseek_r1_pd32", prefill=2, decode=2, router=1)
    # A missing directory is the model check's; an observation error is the host's own finding: not compared.
    missing = dict(copy({}), exists=False)
    assert all(f.severity == "ok" for f in weights_findings(plan, weights(plan, prefill0=missing)))
