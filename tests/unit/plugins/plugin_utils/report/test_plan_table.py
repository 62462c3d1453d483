"""What will run where: the plan table plan.yml prints (plugins/plugin_utils/report/_plan_table.py)."""

from __future__ import annotations

import json

from ansible_collections.ascend.sglang.plugins.plugin_utils.report import _plan_table
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._planner import plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import load_profile
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._topology import build_inventory

PD32 = "deepseek_r1_pd32"
MIXED_1NODE = "qwen3_32b_a3_2c_mixed_3k5_1k5_50ms"  # tp 4: NPUs 0-3


def inventory(prefill=0, decode=0, mixed=0, router=0, **variables):
    groups, hostvars = {}, {}
    for role, count, net in (("prefill", prefill, 1), ("decode", decode, 2), ("mixed", mixed, 3), ("router", router, 9)):
        groups[role] = [f"{role}{i}" for i in range(count)]
        for i, name in enumerate(groups[role]):
            hostvars[name] = {"sglang_host_ip": f"10.{net}.{i // 250}.{i % 250 + 1}", "sglang_nic": "ens1"}
    variables.setdefault("sglang_model_path", "/models/m")
    variables.setdefault("sglang_draft_model_path", "/models/draft")
    return build_inventory(groups, hostvars, variables)


def test_pd32_table_rows_ports_and_router_line():
    p = plan(load_profile(PD32), inventory(prefill=2, decode=2, router=1))
    lines = _plan_table.lines(p)
    assert lines[0] == (f"{p.title}: 5 hosts, 5 services, sglang {p.releases['sglang']}, "
                        f"sglang-router {p.releases['sglang_router']} (host runtime)")
    rows = _plan_table.rows(p)
    assert [(r["host"], r["role"], r["instance"], r["node_rank"]) for r in rows] == [
        ("prefill0", "prefill", 0, 0), ("prefill1", "prefill", 1, 0), ("decode0", "decode", 0, 0),
        ("decode1", "decode", 0, 1), ("router0", "router", 0, 0)]
    assert rows[0]["ports"] == {"http": 8000, "bootstrap": 8998, "memfabric": 24669}
    assert rows[2]["ports"] == {"http": 8001, "dist-init": 5000, "watchdog": 8990}
    assert rows[0]["npus"] == list(range(16)) and rows[4]["npus"] == []
    table = "\n".join(lines)
    assert "| decode1  | decode  | 0    | 1/2  | 10.2.0.2  | http 8001" in table
    assert lines[-1] == ("sglang-router-i0 on router0 (mini-lb, http://127.0.0.1:6688; a change of instances restarts "
                         "it): prefill http://10.1.0.1:8000 (bootstrap 8998), http://10.1.0.2:8000 (bootstrap 8999); "
                         "decode http://10.2.0.1:8001")
    doc = _plan_table.document(p)
    assert json.loads(json.dumps(doc))["services"][0]["service"] == "sglang-prefill-i0-r0" and doc["plan"] == p.as_dict()


def test_the_table_names_the_profiles_generation_source_and_release():
    january = plan(load_profile(PD32), inventory(prefill=2, decode=2, router=1))
    assert _plan_table.lines(january)[1] == (
        "source: generation 2026-01, document 000, section 'Deepseek-R1 Atlas 800I A3-32Card PD Separation "
        "3.5K-1.5K 50ms'; planned release sglang 0.5.6.post2")
    page = plan(load_profile("glm_5_1_a3_32c_pd_131k1_1k_50ms"),
                inventory(prefill=2, decode=2, router=1))
    assert _plan_table.lines(page)[1] == (
        "source: generation 2026-11, sgl-project/sglang docs/docs/hardware-platforms/ascend-npus/model-deployment/"
        "best-practices/glm_5_1.mdx@19264f4a01f3#glm-5-1-w4a8-1p1d-32p-in128k-out1k-56-4ms; planned release sglang "
        "0.5.16")
    # The configuration the page gave before it changed it stays plannable under its dated id.
    before = plan(load_profile("glm_5_1_a3_32c_pd_131k1_1k_50ms_at_06bd6c8"), inventory(prefill=2, decode=2, router=1))
    assert _plan_table.lines(before)[1] == (
        "source: generation 2026-11, sgl-project/sglang docs_new/docs/hardware-platforms/ascend-npus/best_practice/"
        "glm5_1.mdx@06bd6c834fe0#glm5-1-w4a8-1p1d-32p-in128k-out1k; planned release sglang 0.5.13.post1")


def test_no_router_no_router_release_and_one_host():
    p = plan(load_profile(MIXED_1NODE), inventory(mixed=1))
    assert _plan_table.summary(p) == f"{p.title}: 1 host, 1 service, sglang {p.releases['sglang']} (host runtime)"
    assert _plan_table.routers(p) == []
    assert [r["npus"] for r in _plan_table.rows(p)] == [[0, 1, 2, 3]]


def test_sixty_four_host_fleet_table():
    p = plan(load_profile(MIXED_1NODE), inventory(mixed=64, router=1))
    lines = _plan_table.lines(p)
    assert lines[0].startswith(f"{p.title}: 65 hosts, 65 services,")
    body = [line for line in lines if line.startswith("| mixed")]
    assert len(body) == 64 and body[63].startswith("| mixed63 | mixed  | 63   | 0/1  | 10.3.0.64 ")
    assert lines[-1].count("http://10.3.0.") == 64
