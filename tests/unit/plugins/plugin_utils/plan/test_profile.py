"""Profile loading and checking."""

from __future__ import annotations

import pytest
import yaml

from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import PlanError
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import (
    FIRST_GENERATION, NODE_DEVICES, available_profiles, load_profile, profiles_dir,
)


def test_all_profiles_load():
    ids = available_profiles()
    # The January documents' 40 configurations, the deepseek_r1_pd32 alias, the current pages' 154: the 80
    # that import today (tests/golden/upstream_pages.yml), the 68 configurations the pages changed, kept as
    # <id>_at_<commit>, and the 6 of sections gone from the pages (retired); and the 27 configurations of SGLang's
    # nightly tests that no page documents (tests/golden/upstream_nightly.yml), and one nightly profile retired since
    # a page documents its configuration.
    assert len(ids) == 223
    loaded = {pid: load_profile(pid) for pid in ids}
    generations = [profile.generation for pid, profile in loaded.items() if profile.id == pid]
    assert generations.count(FIRST_GENERATION) == 40 and generations.count("2026-11") == 154
    assert generations.count("nightly") == 28
    assert sum(1 for profile in loaded.values() if profile.retired) == 68 + 6 + 1
    for profile in loaded.values():
        assert profile.hardware in NODE_DEVICES
        assert profile.releases["sglang"] and profile.releases["sglang_router"]


def test_alias_and_reused_deployment():
    assert load_profile("deepseek_r1_pd32").id == "deepseek_r1_a3_32c_pd_3k5_1k5_50ms"
    reused = load_profile("deepseek_r1_a3_32c_pd_3k9_1k_20ms")
    donor = load_profile("deepseek_r1_a3_32c_pd_6k_1k6_20ms")
    assert reused.roles == donor.roles
    assert reused.bench_args["--random-input-len"] == 3900
    assert any(d.get("inherited_from") == donor.id for d in reused.deviations)


def test_unknown_profile_names_the_variable():
    with pytest.raises(PlanError) as exc:
        load_profile("deepseek_r1_pd33")
    assert exc.value.findings[0].variable == "sglang_profile"
    assert "similar: " in str(exc.value)


def _write(tmp_path, pid, mutate):
    data = yaml.safe_load(open(f"{profiles_dir()}/qwen3_480b_a3_16c_mixed_3k5_1k5_50ms.yml"))
    data["id"] = pid
    mutate(data)
    (tmp_path / f"{pid}.yml").write_text(yaml.safe_dump(data))


@pytest.mark.parametrize("mutate, variable", [
    (lambda d: d["roles"]["mixed"]["args"].update({"tp-size": 32}), "roles.mixed.args.tp-size"),
    (lambda d: d["roles"]["mixed"].update(nnodes="two"), "roles.mixed.nnodes"),
    (lambda d: d["roles"]["mixed"]["args"].pop("--dist-init-addr"), "roles.mixed.args.--dist-init-addr"),
    (lambda d: d["roles"]["mixed"]["env"].update({"X": "{nonsense}"}), "roles.mixed"),
    (lambda d: d.update(hardware="A4"), "hardware"),
    (lambda d: d.update(deploy_mode="pd_separation"), "roles.prefill"),
    # A profile is held to a latency: a TPOT or a TTFT target, each a positive number of ms.
    (lambda d: d.pop("tpot_target_ms"), "tpot_target_ms"),
    (lambda d: d.update(tpot_target_ms="fast"), "tpot_target_ms"),
    (lambda d: d.update(ttft_target_ms=0), "ttft_target_ms"),
])
def test_broken_profiles_are_rejected(tmp_path, mutate, variable):
    _write(tmp_path, "broken", mutate)
    with pytest.raises(PlanError) as exc:
        load_profile("broken", str(tmp_path))
    assert variable in {f.variable for f in exc.value.findings}


def test_a_choice_a_later_release_added_restricts_the_releases():
    """``added`` may name a flag with one value ("--attention-backend dsv4"): a profile using that choice is planned
    only for the releases whose parser offers it (DeepSeek-V4-Flash's attention backend, 0.5.13.post1 on)."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._releases import load_release_tables, tokens

    table = load_release_tables()["sglang"]
    assert tokens({"--attention-backend": "dsv4", "--enable-dp-attention": True}) == {
        "--attention-backend", "--enable-dp-attention", "--attention-backend dsv4"}
    assert table.supported(tokens({"--attention-backend": "dsv4"}))[0] == "0.5.13.post1"
    assert table.supported(tokens({"--attention-backend": "ascend"}))[0] == table.releases[0]
    assert not table.takes("0.5.9", tokens({"--attention-backend": "dsv4"}))
    assert table.takes("0.5.16", tokens({"--attention-backend": "dsv4"}))
