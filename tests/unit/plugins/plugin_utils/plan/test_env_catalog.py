"""The environment catalog check: every name a shipped profile sets is read by its release's stack
(profiles/_env/), or an env deviation of the profile names it and says so. Runs on the catalog in the repository
(no parser cache)."""

from __future__ import annotations

import pytest

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _env_catalog as ec
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import (
    _read_yaml, available_profiles, load_profile, profiles_dir)
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._releases import load_release_tables

PROFILES = [p for p in available_profiles() if not _read_yaml(f"{profiles_dir()}/{p}.yml").get("alias_of")]


def _raw(pid: str) -> dict:
    return _read_yaml(f"{profiles_dir()}/{pid}.yml")


@pytest.mark.parametrize("release", load_release_tables()["sglang"].releases)
def test_every_release_has_a_catalog(release: str) -> None:
    # Generated from the release's package by tests/validation/update_env_catalog.py; a release without one
    # would let every profile of it through unchecked.
    assert ec.release_known(release), f"no profiles/_env/sglang-{release}.txt: run update_env_catalog.py"
    assert len(ec.sglang_names(release)) > 200


def test_readers_cite_where_each_name_is_read() -> None:
    releases = set(load_release_tables()["sglang"].releases)
    for reader, spec in ec.readers()["readers"].items():
        assert spec["source"], reader
        assert spec["releases"] == "all" or set(spec["releases"]) <= releases, reader
        for name, where in spec["names"].items():
            assert isinstance(where, str) and where.strip(), f"{reader}: {name} names no place that reads it"


@pytest.mark.parametrize("pid", PROFILES)
def test_profile_env_is_read_or_explained(pid: str) -> None:
    profile = load_profile(pid)
    raw = _raw(pid)
    roles = _raw(raw["deployment_from"]) if raw.get("deployment_from") else raw
    missing = ec.unexplained(profile.releases["sglang"], roles, profile.deviations)
    assert not missing, (f"profile {pid} (sglang {profile.releases['sglang']}) sets names no reader of its release "
                         f"lists, and no env deviation explains them: {', '.join(missing)}")


@pytest.mark.parametrize("pid", PROFILES)
def test_env_deviations_name_what_the_profile_sets(pid: str) -> None:
    """An env deviation whose variable is read (or no longer set) is stale: the catalog and the profiles moved."""
    profile = load_profile(pid)
    raw = _raw(pid)
    roles = _raw(raw["deployment_from"]) if raw.get("deployment_from") else raw
    unread = set(ec.unread(profile.releases["sglang"], ec.profile_env(roles)))
    for dev in (d for d in raw.get("deviations") or [] if d.get("part") == "env"):
        assert dev["variable"] in unread, f"{pid}: {dev['variable']} is read by sglang {profile.releases['sglang']}"
        assert dev["seed"].split("=", 1)[0] == dev["variable"] and dev["rendered"] == dev["seed"], dev


def test_unexplained_names_profile_role_and_variable() -> None:
    data = {"roles": {"prefill": {"env": {"DEEPEP_NORMAL_MODE_USE_INT8_QUANT": "1", "TASK_QUEUE_ENABLE": "2"}},
                      "decode": {"env": {"DEEPEP_NORMAL_MODE_USE_INT8_QUANT": "1"}}}}
    assert ec.unexplained("0.5.16", data, []) == ["prefill DEEPEP_NORMAL_MODE_USE_INT8_QUANT",
                                                  "decode DEEPEP_NORMAL_MODE_USE_INT8_QUANT"]
    fix = ec.env_deviations("0.5.16", data)
    assert [d["variable"] for d in fix] == ["DEEPEP_NORMAL_MODE_USE_INT8_QUANT"]
    assert "DEEP_NORMAL_MODE_USE_INT8_QUANT" in fix[0]["reason"] and "prefill, decode" in fix[0]["reason"]
    assert ec.unexplained("0.5.16", data, fix) == []


@pytest.mark.parametrize("release", load_release_tables()["sglang"].releases)
def test_deep_ep_int8_switch_is_read_by_its_documented_name(release: str) -> None:
    # The pages' DEEP_NORMAL_MODE_USE_INT8_QUANT is what deep_ep reads; the nightly tests' DEEPEP_ spelling is not.
    assert "DEEP_NORMAL_MODE_USE_INT8_QUANT" in ec.catalog(release)
    assert "DEEPEP_NORMAL_MODE_USE_INT8_QUANT" not in ec.catalog(release)


def test_the_planner_refuses_an_unread_name_without_its_deviation(tmp_path) -> None:
    import yaml

    from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import PlanError

    pid = "qwen3_8b_a3_1c_mixed_3k5_1k5_37ms"
    data = _raw(pid)
    data["roles"]["mixed"]["env"]["DEEPEP_NORMAL_MODE_USE_INT8_QUANT"] = "1"
    (tmp_path / f"{pid}.yml").write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(PlanError, match="mixed sets DEEPEP_NORMAL_MODE_USE_INT8_QUANT, which no reader"):
        load_profile(pid, str(tmp_path))
    data["deviations"] = ec.env_deviations(data["releases"]["sglang"], data)
    (tmp_path / f"{pid}.yml").write_text(yaml.safe_dump(data), encoding="utf-8")
    assert load_profile(pid, str(tmp_path)).id == pid
