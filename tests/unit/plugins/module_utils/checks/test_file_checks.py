"""The file checks: the CANN scripts, the model directory with its config and quantisation description, the EAGLE3
draft model.  Pure Python, no host, no Ansible."""

from __future__ import annotations

from ansible_collections.ascend.sglang.plugins.module_utils.checks._preflight import check_host
from ansible_collections.ascend.sglang.tests.unit.preflight_hosts import ctx_of, healthy, only


def test_missing_cann_script(pd32):
    profile, p = pd32
    ctx = ctx_of(profile, p)
    obs = healthy(p["hosts"]["prefill0"], ctx)
    obs["paths"]["/usr/local/Ascend/nnal/atb/set_env.sh"] = "missing"
    f = only(check_host("prefill0", p["hosts"]["prefill0"], obs, ctx), "cann_scripts")
    assert [x.found for x in f] == ["/usr/local/Ascend/nnal/atb/set_env.sh missing"]


def test_model_dir_config_and_quant_description(pd32):
    profile, p = pd32
    ctx = ctx_of(profile, p)
    obs = healthy(p["hosts"]["prefill0"], ctx)
    obs["paths"]["/models/m/quant_model_description.json"] = "missing"
    f = only(check_host("prefill0", p["hosts"]["prefill0"], obs, ctx), "model")
    assert [x.found for x in f] == ["/models/m/quant_model_description.json missing"]
    assert "--quantization modelslim" in f[0].expected
    obs["paths"]["/models/m/config.json"] = "missing"
    assert len(only(check_host("prefill0", p["hosts"]["prefill0"], obs, ctx), "model")) == 2
    obs["paths"]["/models/m"] = "missing"
    f = only(check_host("prefill0", p["hosts"]["prefill0"], obs, ctx), "model")
    assert [x.found for x in f] == ["/models/m missing"]  # files of a missing directory are not repeated


def test_eagle3_draft_model(a2mixed):
    profile, p = a2mixed
    ctx = ctx_of(profile, p)
    obs = healthy(p["hosts"]["mixed0"], ctx, "a2_910b3_x8_healthy.txt")
    obs["paths"]["/models/draft/config.json"] = "missing"
    f = only(check_host("mixed0", p["hosts"]["mixed0"], obs, ctx), "model")
    assert [x.found for x in f] == ["/models/draft/config.json missing"] and "EAGLE3" in f[0].expected
