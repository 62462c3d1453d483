"""The importer on small documents written here: multi-role scripts, host-matching loops, $((...)) ports, env in
and out of loops, router and benchmark blocks, published figures, and refusals that name the document line."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import Collector
from ansible_collections.ascend.sglang.plugins.plugin_utils.importer import _import_output
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _planner, _profile, _topology
from ansible_collections.ascend.sglang.plugins.plugin_utils.importer._import_doc import ImportRefusal, read_document
from ansible_collections.ascend.sglang.tests.unit.import_pages import MDX, MDX_PIPES, cells_table
from ansible_collections.ascend.sglang.plugins.plugin_utils.importer._import_profile import (
    Curation, curations_by_section, dataset_slug, import_document, import_section)

TABLE = cells_table(("Demo-R1", "Atlas 800I A3", "32", "PD Separation", "2K-1K", "W8A8", "20.10", "40.000"),
                    ("Demo-S", "Atlas 800I A3", "2", "PD Mixed", "1K-1K", "BF16", "30.00", "100.000"))

# Two single-node prefill instances and one two-node decode instance, host-matching loops over the documents'
# placeholders, a bootstrap port per instance, and the router after the servers.
PD = """Demo-R1 Atlas 800I A3-32Card PD Separation 2K-1K 20ms#

Model Deployment#

echo performance | tee /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor
sysctl -w vm.swappiness=0
export SGLANG_SET_CPU_AFFINITY=1
unset ASCEND_LAUNCH_BLOCKING
source /usr/local/Ascend/ascend-toolkit/set_env.sh
export PATH=/usr/local/Ascend/8.5.0/compiler/bishengir/bin:$PATH
export ASCEND_MF_STORE_URL="tcp://your prefill ip1:24669"
P_IP=('your prefill ip1' 'your prefill ip2')
D_IP=('your decode ip1' 'your decode ip2')
MODEL_PATH=xxx
LOCAL_HOST1=`hostname -I|awk -F " " '{print$1}'`
# prefill
for i in "${!P_IP[@]}";
do
    if [[ "$LOCAL_HOST1" == "${P_IP[$i]}" ]];
    then
        export HCCL_BUFFSIZE=1536
        export HCCL_SOCKET_IFNAME=lo
        python -m sglang.launch_server --model-path ${MODEL_PATH} --disaggregation-mode prefill --host ${P_IP[$i]} \\
        --port 8000 --disaggregation-bootstrap-port $((8998+$i)) --nnodes 1 --node-rank 0 --tp-size 16 \\
        --mem-fraction-static 0.81 --disable-radix-cache
        break
    fi
done
# decode
for i in "${!D_IP[@]}";
do
    if [[ "$LOCAL_HOST1" == "${D_IP[$i]}" ]];
    then
        export HCCL_BUFFSIZE=650
        export HCCL_SOCKET_IFNAME=xxx
        python -m sglang.launch_server --model-path ${MODEL_PATH} --disaggregation-mode decode --host ${D_IP[$i]} \\
        --port 8001 --dist-init-addr DIP1:5000 --nnodes 2 --node-rank $i --tp-size 32 --cuda-graph-bs 8 16
        break
    fi
done
export SGLANG_DP_ROUND_ROBIN=1
python -m sglang_router.launch_router \\
    --pd-disaggregation \\
    --prefill http://P_IP:8000 8998 \\
    --prefill http://P_IP:8000 8999 \\
    --decode http://D_IP:8001 \\
    --host 127.0.0.1 \\
    --port 6688

Benchmark#

python -m sglang.bench_serving --dataset-name random --host 127.0.0.1 --port 6688 --random-input-len 2048 --random-output-len 1024 --request-rate 0.5
========== Serving Benchmark Result ==========
Backend: sglang
Output token throughput (tok/s): 1280.00
Mean TTFT (ms): 900.00
Mean TPOT (ms): 20.10
Mean ITL (ms): 20.00

"""

# One PD-mixed server on one host, no host list: it serves whatever host runs it, on loopback.
MIXED = """Demo-S Atlas 800I A3-2Card PD Mixed 1K-1K 30ms#

Model Deployment#

MODEL_PATH=xxx
export HCCL_SOCKET_IFNAME=lo
python -m sglang.launch_server --model-path $MODEL_PATH \\
    --host 127.0.0.1 --port 7239 --nnodes 1 --node-rank 0 --tp-size 4 --base-gpu-id 4 \\
    --speculative-algorithm EAGLE3 --speculative-draft-model-path xxx

Benchmark#

python -m sglang.bench_serving --dataset-name random --host 127.0.0.1 --port 7239 --random-input-len 1000 --random-output-len 1000
"""


def document(*sections: str, name: str = "000_demo.txt"):
    return read_document(TABLE + "".join(sections), name)


def line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def test_pd_script_becomes_the_planners_profile() -> None:
    doc = document(PD, MIXED)
    [pd, _mixed] = import_document(doc)
    data = pd.data
    assert pd.id == "demo_r1_a3_32c_pd_2k_1k_20ms"
    assert data["source"] == {"document": "000", "section": "Demo-R1 Atlas 800I A3-32Card PD Separation 2K-1K 20ms"}
    assert (data["model"], data["hardware"], data["cards"], data["deploy_mode"], data["quantization"]) == (
        "Demo-R1", "A3", 32, "pd_separation", "W8A8")
    assert data["dataset"] == {"name": "2K-1K", "input_len": 2048, "output_len": 1024}
    assert data["memfabric_store_port"] == 24669
    assert data["host_tuning"] == {"cpu_governor": "performance", "sysctl": {"vm.swappiness": "0"}}
    prefill, decode, router = (data["roles"][r] for r in ("prefill", "decode", "router"))
    # Two instances from the host list; $((8998+$i)) is the first instance's bootstrap port plus its index.
    assert (prefill["nnodes"], prefill["documented_instances"], prefill["port"], prefill["bootstrap_port"]) == (
        1, 2, 8000, 8998)
    assert prefill["args"] == {
        "--model-path": "{model_path}", "--disaggregation-mode": "prefill", "--host": "{host}", "--port": "{port}",
        "--disaggregation-bootstrap-port": "{bootstrap_port}", "--nnodes": "{nnodes}", "--node-rank": "{node_rank}",
        "--tp-size": 16, "--mem-fraction-static": "0.81", "--disable-radix-cache": True}
    # Env set before the loops and inside them; the NIC variable of a single node is loopback.
    assert prefill["env"] == {"ASCEND_MF_STORE_URL": "{memfabric_store_url}", "HCCL_BUFFSIZE": "1536",
                              "HCCL_SOCKET_IFNAME": "{socket_ifname}", "SGLANG_SET_CPU_AFFINITY": "1"}
    assert prefill["cann"] == {"unset": ["ASCEND_LAUNCH_BLOCKING"],
                               "sources": ["/usr/local/Ascend/ascend-toolkit/set_env.sh"],
                               "path_prepend": ["/usr/local/Ascend/8.5.0/compiler/bishengir/bin"]}
    # One two-node instance: DIP1 is its rank 0, xxx its NIC.
    assert (decode["nnodes"], decode["documented_instances"], decode["dist_init_port"]) == (2, 1, 5000)
    assert decode["args"]["--dist-init-addr"] == "{dist_init_addr}"
    assert decode["args"]["--node-rank"] == "{node_rank}" and decode["args"]["--cuda-graph-bs"] == [8, 16]
    assert decode["env"]["HCCL_SOCKET_IFNAME"] == "{socket_ifname}" and decode["env"]["HCCL_BUFFSIZE"] == "650"
    # The router: every instance's rank 0 becomes the upstream placeholders; its own variable only.
    assert router == {"port": 6688, "env": {"SGLANG_DP_ROUND_ROBIN": "1"},
                      "args": {"--pd-disaggregation": True, "--prefill": "{prefill_upstreams}",
                               "--decode": "{decode_upstreams}", "--host": "127.0.0.1", "--port": "{port}"}}
    assert data["bench"]["args"] == {"--dataset-name": "random", "--host": "{entry_host}", "--port": "{entry_port}",
                                     "--random-input-len": 2048, "--random-output-len": 1024,
                                     "--request-rate": "0.5"}
    pub = data["published"]
    assert pub["summary"]["output_tps_per_card"] == 40.0 and pub["summary"]["tpot_ms"] == 20.1
    # 1280 tok/s over the 32 cards the servers occupy is the printed 40.000: nothing to recompute.
    assert pub["figures"] == {"mean_ttft_ms": 900.0, "mean_tpot_ms": 20.1, "mean_itl_ms": 20.0,
                              "output_throughput_tok_s": 1280.0, "output_tps_per_card": 40.0}
    assert "recomputed" not in pub
    # The router's SGLANG_DP_ROUND_ROBIN is read by no part of 0.5.6.post2's stack: kept, with the env deviation
    # the environment catalog writes (test_env_catalog.py).
    assert [(d["part"], d["variable"], d["seed"]) for d in data["deviations"]] == [
        ("env", "SGLANG_DP_ROUND_ROBIN", "SGLANG_DP_ROUND_ROBIN=1")]


def test_imported_profile_plans_the_documented_commands(tmp_path: Path) -> None:
    """Written, loaded and planned: the planner fills the placeholders back with the inventory's values."""
    [pd, _mixed] = import_document(document(PD, MIXED))
    (tmp_path / f"{pd.id}.yml").write_text(_import_output.render(pd, "000_demo.txt"), encoding="utf-8")
    profile = _profile.load_profile(pd.id, str(tmp_path))
    groups = {"prefill": ["p0", "p1"], "decode": ["d0", "d1"], "mixed": [], "router": ["r0"]}
    # sglang_nic on the 2-node decode instance only: the single-node prefill ranks get lo, as the document sets it.
    hostvars = {name: {"sglang_host_ip": f"192.0.2.{i + 1}", **({"sglang_nic": "eth9"} if name[0] == "d" else {})}
                for i, name in enumerate(["p0", "p1", "d0", "d1", "r0"])}
    variables = {"sglang_model_path": "/m", "sglang_metrics": False}
    plan = _planner.plan(profile, _topology.build_inventory(groups, hostvars, variables))
    services = {svc.name: svc for host in plan.hosts.values() for svc in host.services}
    p1 = services["sglang-prefill-i1-r0"]
    assert p1.argv[p1.argv.index("--disaggregation-bootstrap-port") + 1] == "8999"
    assert p1.env["ASCEND_MF_STORE_URL"] == "tcp://192.0.2.1:24669" and p1.env["HCCL_SOCKET_IFNAME"] == "lo"
    d1 = services["sglang-decode-i0-r1"]
    assert d1.argv[d1.argv.index("--dist-init-addr") + 1] == "192.0.2.3:5000"
    assert d1.env["HCCL_SOCKET_IFNAME"] == "eth9"


def test_a_redirection_on_a_launch_line_is_refused() -> None:
    text = TABLE + MIXED.replace("--node-rank 0", "--node-rank 0 > /tmp/pwned")
    doc = read_document(text, "000_demo.txt")
    with pytest.raises(ImportRefusal, match="redirects, pipes or chains"):
        import_section(doc, doc.sections[0], {})


def test_single_host_mixed_server() -> None:
    [_pd, mixed] = import_document(document(PD, MIXED))
    spec = mixed.data["roles"]["mixed"]
    assert mixed.id == "demo_s_a3_2c_mixed_1k_1k_30ms" and mixed.data["deploy_mode"] == "pd_mixed"
    # --host 127.0.0.1 of a script with no host list is the server's own address; 4 of the node's 16 dies.
    assert spec["args"]["--host"] == "{host}" and spec["args"]["--speculative-draft-model-path"] == \
        "{draft_model_path}"
    assert (spec["port"], spec["devices_per_node"], spec["base_gpu_id"]) == (7239, 4, 4)
    assert spec["env"] == {"HCCL_SOCKET_IFNAME": "{socket_ifname}"} and "router" not in mixed.data["roles"]
    assert mixed.data["quantization"] == "BF16" and "result" not in mixed.data["published"]


@pytest.mark.parametrize("bad, needle, message", [
    ("curl -s http://example.invalid/setup.sh | sh", "curl -s", "is not a construct the importer maps"),
    ("export ROLE=$(cat /etc/role)", "export ROLE=", "command substitution 'cat /etc/role'"),
    # The script runs in bash: nothing may run a command the recorders do not stand in for.
    ("echo `id`", "echo `id`", "command substitution 'id'"),
    ("echo \"$(touch pwned)\"", "touch pwned", "command substitution 'touch pwned'"),
    ("export A=1; touch pwned", "export A=1;", "redirects, pipes or chains"),
    ("echo hi > /tmp/pwned", "echo hi >", "is not a construct"),
    ("sysctl -w vm.swappiness=0 && touch pwned", "&& touch", "is not a construct"),
    (". /etc/profile", ". /etc/profile", "is not a construct"),
])
def test_unknown_constructs_are_refused_with_their_line(bad: str, needle: str, message: str) -> None:
    text = TABLE + MIXED.replace("MODEL_PATH=xxx", f"MODEL_PATH=xxx\n{bad}")
    doc = read_document(text, "000_demo.txt")
    with pytest.raises(ImportRefusal) as refused:
        import_section(doc, doc.sections[0], {})
    assert f"000_demo.txt line {line_of(text, needle)}" in str(refused.value) and message in str(refused.value)


@pytest.mark.parametrize("seed, rendered, needle, message", [
    ("--dist-init-addr DIP1:5000", "--dist-init-addr 141.61.1.1:5000", "--dist-init-addr 141", "rank-0 host"),
    ("--tp-size 32", "--tp 32", "--tp 32", "--tp is not a flag of any supported sglang release"),
    ("--port 8000 --disaggregation", "--port 8000 --port 8002 --disaggregation", "--port 8000 --port",
     "--port is given twice"),
    ("$((8998+$i))", "$((8998+2*$i))", "$((8998+2*", "the planner gives instance i port 8998+i"),
    ("http://P_IP:8000 8999", "http://P_IP:8000 9999", "8000 9999", "upstreams"),
    # The NIC placeholder on a one-node instance is the planner's lo (test_the_current_pages_form_imports); a NIC
    # the document names is not.
    ("export HCCL_SOCKET_IFNAME=lo", "export HCCL_SOCKET_IFNAME=eth7", "HCCL_SOCKET_IFNAME=eth7",
     "HCCL_SOCKET_IFNAME is eth7 on a 1-node"),
])
def test_what_the_planner_cannot_compute_is_refused_naming_the_line(seed, rendered, needle, message) -> None:
    text = TABLE + PD.replace(seed, rendered, 1)
    doc = read_document(text, "000_demo.txt")
    with pytest.raises(ImportRefusal) as refused:
        import_section(doc, doc.sections[0], {})
    assert f"line {line_of(text, needle)}" in str(refused.value), str(refused.value)
    assert message in str(refused.value)


def test_recorded_deviations_are_applied_and_stale_ones_reported() -> None:
    text = TABLE + PD.replace("--tp-size 32", "--tp 32")
    doc = read_document(text, "000_demo.txt")
    fix = {"part": "deploy", "seed": "--tp 32", "rendered": "--tp-size 32", "reason": "abbreviation of --tp-size"}
    stale = {"part": "bench", "seed": "--num-prompts 9", "rendered": "--num-prompts 10", "reason": "no longer there"}
    curation = {doc.sections[0].title: Curation(deviations=[fix, stale])}
    with pytest.raises(ImportRefusal, match="does not occur in the document"):
        import_section(doc, doc.sections[0], curation)
    item = import_section(doc, doc.sections[0], curation, strict=False)
    assert item.data["roles"]["decode"]["args"]["--tp-size"] == 32
    assert item.stale == [stale] and item.data["deviations"][:1] == [fix]
    # A recorded env deviation is not a text fix: the import writes it anew from the environment catalog.
    recorded = dict(item.data["deviations"][1], reason="recorded by hand")
    again = import_section(doc, doc.sections[0], {doc.sections[0].title: Curation(deviations=[fix, recorded])})
    assert again.stale == [] and again.data["deviations"] == item.data["deviations"]


def test_every_refused_section_is_reported_at_once() -> None:
    text = TABLE + PD.replace("--tp-size 32", "--tp 32") + MIXED.replace("--base-gpu-id 4", "--base-gpu 4")
    with pytest.raises(ImportRefusal) as refused:
        import_document(read_document(text, "000_demo.txt"))
    assert len(str(refused.value).splitlines()) == 2


def test_published_figures_with_a_recomputed_per_card_figure() -> None:
    text = TABLE.replace("40.000", "41.000") + PD
    [pd] = import_document(read_document(text, "000_demo.txt"))
    pub = pd.data["published"]
    assert pub["figures"]["output_tps_per_card"] == 41.0
    assert pub["recomputed"]["output_tps_per_card"]["value"] == 40.0
    assert pub["recomputed"]["output_tps_per_card"]["formula"] == "output_throughput_tok_s / 32"


def test_dataset_slugs() -> None:
    assert dataset_slug("3.5K-1.5K") == "3k5_1k5"
    assert dataset_slug("128K+1K (90% prefix cache hit rate)") == "128k_1k_prefix90"


def test_output_never_overwrites_a_file_it_did_not_write(tmp_path: Path) -> None:
    [pd, mixed] = import_document(document(PD, MIXED))
    planned = _import_output.plan_files([pd, mixed], "000_demo.txt", str(tmp_path), {})
    assert [p.status for p in planned] == ["new", "new"]
    assert planned[0].differences == ["no collection profile of this id"]
    (tmp_path / f"{pd.id}.yml").write_text("id: mine\n", encoding="utf-8")
    with pytest.raises(_import_output.NotOurs, match=f"{pd.id}.yml"):
        _import_output.check_destination(str(tmp_path), [f"{pd.id}.yml"], "sglang_profiles_dir")
    (tmp_path / f"{pd.id}.yml").write_text(planned[0].content, encoding="utf-8")
    _import_output.check_destination(str(tmp_path), [f"{pd.id}.yml"], "sglang_profiles_dir")
    assert yaml.safe_load(planned[0].content) == pd.data


def test_differences_name_flags_env_and_figures() -> None:
    [pd, _mixed] = import_document(document(PD, MIXED))
    old = copy.deepcopy(pd.data)
    old["roles"]["decode"]["args"]["--tp-size"] = 16
    old["roles"]["prefill"]["env"]["HCCL_BUFFSIZE"] = "1024"
    del old["roles"]["prefill"]["args"]["--disable-radix-cache"]
    old["published"]["figures"]["mean_tpot_ms"] = 19.0
    assert _import_output.differences(pd.data, old) == [
        "prefill flags: --disable-radix-cache added ((set))",
        "prefill env: HCCL_BUFFSIZE 1024 -> 1536",
        "decode flags: --tp-size 16 -> 32",
        "figures: mean_tpot_ms 19.0 -> 20.1",
    ]
    assert _import_output.differences(pd.data, pd.data) == []


def test_an_mdx_page_imports_like_the_text_form() -> None:
    [item] = import_document(read_document(MDX, "demo_32b.mdx"))
    data = item.data
    assert item.id == "demo_32b_a3_2c_mixed_3k6_1k5_50ms"
    assert data["source"] == {"document": "demo_32b", "section": "demo 32b w8a8 2p in3k5 out1k5 50ms"}
    assert data["quantization"] == "W8A8 INT8" and data["tpot_target_ms"] == 50
    assert data["dataset"] == {"name": "3.6K+1.5K", "input_len": 3584, "output_len": 1536}
    mixed = data["roles"]["mixed"]
    # $MODEL_PATH, which the page never assigns, is the inventory's model path.
    assert mixed["args"]["--model-path"] == "{model_path}" and mixed["args"]["--host"] == "{host}"
    assert mixed["devices_per_node"] == 4 and mixed["port"] == 6688
    assert data["published"] == {"summary": {
        "table": "low_latency", "model": "Demo-32B", "hardware": "A3", "cards": 2, "mode": "PD Mixed",
        "dataset": "3.6K+1.5K", "quantization": "W8A8 INT8", "tpot_ms": 50.0, "tpot_is_target": True}}


def test_the_current_pages_form_imports() -> None:
    """Pipe tables linking rows to sections, "PD Disaggregation", <your prefill ip>, the router in a block of its
    own, <network-interface> on one-node instances, python3, and prefix-cache variants told apart by title."""
    doc = read_document(MDX_PIPES, "demo_r1.mdx")
    assert [r.anchor for r in doc.rows] == ["demo-r1-w4a8-1p1d-16p-in3k5-out1k5-50ms", "demo-r1-w4a8-8p-in64k-out1k-50ms",
                                            "demo-r1-w4a8-8p-in64k-out1k-prefix90-50ms"]
    pd, mixed, cached = import_document(doc)
    assert (pd.id, mixed.id, cached.id) == ("demo_r1_a3_16c_pd_3k5_1k5_50ms", "demo_r1_a3_8c_mixed_64k_1k_50ms",
                                            "demo_r1_a3_8c_mixed_64k_1k_prefix90_50ms")
    assert pd.data["deploy_mode"] == "pd_separation" and pd.data["published"]["summary"]["mode"] == "PD Disaggregation"
    roles = pd.data["roles"]
    assert roles["prefill"]["args"]["--host"] == "{host}" and roles["decode"]["args"]["--host"] == "{host}"
    assert roles["prefill"]["env"]["ASCEND_MF_STORE_URL"] == "{memfabric_store_url}"
    assert pd.data["memfabric_store_port"] == 24670
    assert roles["router"]["args"]["--prefill"] == "{prefill_upstreams}"
    assert roles["router"]["args"]["--decode"] == "{decode_upstreams}"
    # On one host every rank is local: the NIC the page asks for is the planner's loopback binding.
    assert mixed.data["roles"]["mixed"]["env"]["GLOO_SOCKET_IFNAME"] == "{socket_ifname}"
    # Each row is the one that links to its section, although their key and TPOT are the same.
    assert [i.data["published"]["summary"]["dataset"] for i in (mixed, cached)] == ["64K+1K", "64K+1K"]
    assert cached.data["roles"]["mixed"]["args"]["--chunked-prefill-size"] == 8192
    # A concrete other NIC on a one-node instance is still refused, naming the line.
    other = MDX_PIPES.replace("export GLOO_SOCKET_IFNAME=<network-interface>", "export GLOO_SOCKET_IFNAME=eth7", 1)
    with pytest.raises(ImportRefusal, match=r"demo_r1.mdx line \d+ .*GLOO_SOCKET_IFNAME is eth7 on a 1-node mixed"):
        import_document(read_document(other, "demo_r1.mdx"))


def test_the_moved_pages_hardware_name_and_ttft_column() -> None:
    """The pages under docs/docs/ write the A3 nodes "Ascend A3 Series Products" and put a TTFT column between TPOT
    and Quantization: the same profiles as before, read by the header's column names."""
    before = import_document(read_document(MDX_PIPES, "demo_r1.mdx"))
    moved = MDX_PIPES.replace("Atlas 800I A3", "Ascend A3 Series Products").replace(
        "| TPOT | Quantization |", "| TPOT | TTFT | Quantization |").replace("| --- | --- | --- |", "| --- | --- | --- | --- |", 1)
    moved = moved.replace("| 50ms | W4A8 INT8 |", "| 50ms | - | W4A8 INT8 |")
    assert "Atlas" not in moved and moved.count("| - |") == 3
    doc = read_document(moved, "demo_r1.mdx")
    assert [(r.hardware, r.quantization, r.tpot_ms) for r in doc.rows] == [("A3", "W4A8 INT8", 50.0)] * 3
    after = import_document(doc)
    assert [i.id for i in after] == [i.id for i in before]
    for old, new in zip(before, after):
        assert new.data["published"] == old.data["published"] and new.data["roles"] == old.data["roles"]


def test_a_configuration_held_to_a_ttft_target_imports() -> None:
    """MiMo's TTFT-only sections (output 1 token, "**TTFT**: 5s", '-' in the table's TPOT column): a profile with
    ttft_target_ms and no tpot_target_ms, its id naming the TTFT target, its summary row found by its link."""
    ttft = MDX_PIPES.replace("| TPOT | Quantization |", "| TPOT | TTFT | Quantization |").replace(
        "| --- | --- | --- |", "| --- | --- | --- | --- |", 1).replace("| 50ms | W4A8 INT8 |", "| 50ms | - | W4A8 INT8 |")
    ttft = ttft.replace("| 64K+1K | 50ms | - | W4A8 INT8 | [Optimal Configuration](#demo-r1-w4a8-8p-in64k-out1k-50ms)",
                        "| 64K+1 | - | 5s | W4A8 INT8 | [Optimal Configuration](#demo-r1-w4a8-8p-in64k-out1-ttft-5s)")
    ttft = ttft.replace("### Demo-R1 W4A8 8P IN64K OUT1K 50ms\n", "### Demo-R1 W4A8 8P IN64K OUT1 TTFT 5s\n", 1)
    head, _sep, tail = ttft.partition("### Demo-R1 W4A8 8P IN64K OUT1 TTFT 5s\n")
    section, rest = tail.split("\n### ", 1)
    section = section.replace("**Dataset**: 64K+1K", "**Dataset**: 64K+1").replace("**TPOT**: 50ms", "**TTFT**: 5s")
    section = section.replace("--random-output-len 1024", "--random-output-len 1")
    doc = read_document(f"{head}### Demo-R1 W4A8 8P IN64K OUT1 TTFT 5s\n{section}\n### {rest}", "demo_r1.mdx")
    row = next(r for r in doc.rows if r.anchor == "demo-r1-w4a8-8p-in64k-out1-ttft-5s")
    assert (row.tpot_ms, row.ttft_ms, row.dataset) == (0.0, 5000.0, "64K+1")
    items = {i.id: i for i in import_document(doc)}
    item = items["demo_r1_a3_8c_mixed_64k_1_ttft5s"]
    assert item.data["ttft_target_ms"] == 5000 and "tpot_target_ms" not in item.data
    assert item.data["dataset"]["output_len"] == 1
    assert item.data["published"]["summary"]["ttft_ms"] == 5000.0
    # The planner takes it: the TTFT target is the profile's, no TPOT target.
    profile = _profile.parse_profile(item.id, item.data, item.data, Collector())
    assert (profile.tpot_target_ms, profile.ttft_target_ms) == (0.0, 5000.0)
    # A section with neither target is still refused, naming both.
    neither = f"{head}### Demo-R1 W4A8 8P IN64K OUT1 TTFT 5s\n{section.replace('**TTFT**: 5s', '')}\n### {rest}"
    with pytest.raises(ImportRefusal, match="gives no TPOT or TTFT"):
        import_document(read_document(neither, "demo_r1.mdx"))


def test_a_long_option_written_with_its_value_after_an_equals_sign() -> None:
    """``--flag=value`` is ``--flag value`` to argparse, so to the importer (not an unknown flag named
    ``--flag=value``)."""
    before = import_document(read_document(MDX_PIPES, "demo_r1.mdx"))
    joined = MDX_PIPES.replace("--chunked-prefill-size 8192", "--chunked-prefill-size=8192")
    assert joined != MDX_PIPES
    after = import_document(read_document(joined, "demo_r1.mdx"))
    assert [i.data["roles"] for i in after] == [i.data["roles"] for i in before]


def test_the_draft_model_placeholder_is_the_inventorys_draft_model_path() -> None:
    """DRAFT_MODEL_PATH=/path/to/draft-model-weights, passed as $DRAFT_MODEL_PATH, is the inventory's draft model
    path (as the model's own placeholder is its model path), not a literal path in the profile."""
    page = MDX_PIPES.replace("MODEL_PATH=/path/to/model-weights\n",
                             "MODEL_PATH=/path/to/model-weights\nDRAFT_MODEL_PATH=/path/to/draft-model-weights\n", 1)
    page = page.replace("--model-path ${MODEL_PATH} \\\n",
                        "--model-path ${MODEL_PATH} \\\n        --speculative-draft-model-path $DRAFT_MODEL_PATH \\\n", 1)
    page = page.replace("DRAFT_MODEL_PATH=/path/to/draft-model-weights\n",
                        "DRAFT_MODEL_PATH=/path/to/draft-model-weights\nexport PYTHONPATH=${DRAFT_MODEL_PATH}:$PYTHONPATH\n")
    assert page.count("$DRAFT_MODEL_PATH") == 1
    pd = import_document(read_document(page, "demo_r1.mdx"))[0]
    args = pd.data["roles"]["prefill"]["args"]
    assert args["--speculative-draft-model-path"] == "{draft_model_path}" and args["--model-path"] == "{model_path}"
    # The draft model's modelling code on the import path: the same placeholder, planned like the flag.
    assert pd.data["roles"]["prefill"]["env"]["PYTHONPATH"] == "{draft_model_path}:"


def test_a_newer_atlas_and_a_section_without_a_target_are_refused_by_name() -> None:
    atlas = MDX.replace("**Hardware**: Atlas 800I A3", "**Hardware**: Atlas 950")
    with pytest.raises(ImportRefusal, match=r"demo_32b.mdx line \d+: the section runs on Atlas 950, whose NPU layout "
                                            r"the planner does not model"):
        import_document(read_document(atlas, "demo_32b.mdx"))
    latency = MDX.replace("**TPOT**: 50ms", "**TTFT**: soon")
    with pytest.raises(ImportRefusal, match=r"the section gives no TPOT or TTFT .*; it gives Dataset: 3.6K\+1.5K; "
                                            r"TTFT: soon"):
        import_document(read_document(latency, "demo_32b.mdx"))


def test_pipeline_stages_count_in_the_devices_of_an_instance() -> None:
    """--tp-size 2 --pp-size 2 uses 4 NPUs of the node, as --tp-size 4 does."""
    page = MDX.replace("    --tp-size 4\n", "    --tp-size 2 \\\n    --pp-size 2\n")
    [item] = import_document(read_document(page, "demo_32b.mdx"))
    mixed = item.data["roles"]["mixed"]
    assert mixed["args"]["--pp-size"] == 2 and mixed["devices_per_node"] == 4


def test_a_configuration_the_page_repeats_under_another_title_is_one_profile() -> None:
    """A page that publishes the same deployment and benchmark twice (DeepSeek-V3.2's "... 26ms" and "... BS8"):
    one profile, from the first section, which names the other; its curation serves both titles. Another
    configuration under the same id is refused, naming the line."""
    first = MDX.split("## Optimal Configuration\n", 1)[1]
    again = first.replace("### demo 32b w8a8 2p in3k5 out1k5 50ms", "### demo 32b w8a8 2p in3k5 out1k5 BS8")
    [item] = import_document(read_document(MDX + "\n" + again, "demo_32b.mdx"))
    assert item.data["source"]["repeated_in"] == ["demo 32b w8a8 2p in3k5 out1k5 BS8"]
    curations = curations_by_section({item.id: item.data})
    assert set(curations) == {"demo 32b w8a8 2p in3k5 out1k5 50ms", "demo 32b w8a8 2p in3k5 out1k5 BS8"}
    other = again.replace("--tp-size 4", "--tp-size 2")
    with pytest.raises(ImportRefusal, match=r"'demo 32b w8a8 2p in3k5 out1k5 BS8': demo_32b.mdx line \d+: maps to "
                                            r"the profile id demo_32b_a3_2c_mixed_3k6_1k5_50ms of section"):
        import_document(read_document(MDX + "\n" + other, "demo_32b.mdx"))


def test_a_script_that_fails_in_bash_quotes_its_own_line() -> None:
    """bash numbers the lines of the temporary script it ran; the refusal quotes the document's text instead."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.importer._import_script import run_script

    with pytest.raises(ImportRefusal) as refused:
        run_script("export A=1\nexport B=$((8998/0))\nexport C=3", "192.0.2.1", "000_demo.txt section S")
    message = str(refused.value)
    assert message.startswith("000_demo.txt section S: the deployment script fails on host 192.0.2.1: ")
    assert "at the line 'export B=$((8998/0))'" in message and "script.sh" not in message


# --------------------------------------------------------------------------- a document is untrusted input


@pytest.mark.parametrize("bad, needle", [
    ("source /tmp/evil.sh", "source /tmp/evil.sh"),
    # Inside the tree by its prefix only: '..' is resolved first.
    ("source /usr/local/Ascend/../../tmp/evil.sh", "source /usr/local/Ascend/../"),
    ("export PATH=/home/someone/bin:$PATH", "export PATH=/home"),
    ("export LD_LIBRARY_PATH=/tmp/lib:$LD_LIBRARY_PATH", "export LD_LIBRARY_PATH=/tmp"),
])
def test_only_the_ascend_install_tree_is_sourced_or_prepended(bad: str, needle: str) -> None:
    """What a section sources reaches every server host's cann_env.sh, which root sources at each start."""
    text = TABLE + MIXED.replace("MODEL_PATH=xxx", f"MODEL_PATH=xxx\n{bad}")
    doc = read_document(text, "000_demo.txt")
    with pytest.raises(ImportRefusal) as refused:
        import_section(doc, doc.sections[0], {})
    assert f"000_demo.txt line {line_of(text, needle)}" in str(refused.value), str(refused.value)
    assert "is not under the CANN/Ascend install tree (/usr/local/Ascend/)" in str(refused.value)


def test_a_profile_naming_cann_lines_outside_the_tree_is_refused_by_the_planner() -> None:
    """The same rule for a profile the operator wrote by hand (sglang_profiles_dir): the plan refuses it."""
    data = yaml.safe_load(Path(_profile.profiles_dir(), "qwen3_32b_a3_2c_mixed_3k5_1k5_50ms.yml").read_text())
    data["roles"]["mixed"]["cann"] = {"sources": ["/usr/local/Ascend/ascend-toolkit/set_env.sh", "/tmp/x.sh"],
                                      "unset": ["A; touch /tmp/pwned"]}
    errors = _profile.Collector()
    _profile.parse_profile(data["id"], data, data, errors)
    messages = [f.message for f in errors.findings]
    assert any("'/tmp/x.sh' is not under the CANN/Ascend install tree" in m for m in messages), messages
    assert any("is not an environment variable name" in m for m in messages), messages


@pytest.mark.parametrize("part, bad, needle, name", [
    ("server", "--node-rank 0 --api-key sk-live-0123456789", "--api-key sk-live", "--api-key"),
    ("server", "--node-rank 0 --ssl-keyfile-password=hunter2secret", "--ssl-keyfile-password=", "--ssl-keyfile-password"),
    ("export", "MODEL_PATH=xxx\nexport HF_TOKEN=hf_0123456789abcdef", "HF_TOKEN", "HF_TOKEN"),
    ("bench", "--random-output-len 1000 --api-key sk-live-0123456789", "--api-key sk-live", "--api-key"),
])
def test_a_credential_in_the_clear_is_refused_without_repeating_it(part: str, bad: str, needle: str,
                                                                   name: str) -> None:
    seed = {"server": "--node-rank 0", "export": "MODEL_PATH=xxx", "bench": "--random-output-len 1000"}[part]
    text = TABLE + MIXED.replace(seed, bad, 1)
    doc = read_document(text, "000_demo.txt")
    with pytest.raises(ImportRefusal) as refused:
        import_document(doc)
    message = str(refused.value)
    assert f"000_demo.txt line {line_of(text, needle)}: {name} is given a value in the clear" in message, message
    # Named, never shown: the message carries the flag or variable and the line number only.
    assert "sk-live" not in message and "hunter2" not in message and "hf_0123" not in message, message


def test_the_weights_are_the_operators_whatever_path_the_document_writes() -> None:
    text = TABLE + MIXED.replace("MODEL_PATH=xxx", "MODEL_PATH=/home/someone/weights/Qwen3-32B").replace(
        "--speculative-draft-model-path xxx", "--speculative-draft-model-path /path/to/draft-model-weights")
    [mixed] = import_document(read_document(text, "000_demo.txt"))
    args = mixed.data["roles"]["mixed"]["args"]
    assert args["--model-path"] == "{model_path}" and args["--speculative-draft-model-path"] == "{draft_model_path}"


@pytest.mark.parametrize("tail, shown", [("; touch /tmp/pwned", ";"), (" && rm -rf /", "&&"),
                                         (" | tee /tmp/out", "|"), (" > /tmp/out", ">"),
                                         (" --output-file $(id)", "$(")])
def test_a_benchmark_block_is_one_command(tail: str, shown: str) -> None:
    text = TABLE + MIXED.replace("--random-output-len 1000", f"--random-output-len 1000{tail}")
    doc = read_document(text, "000_demo.txt")
    with pytest.raises(ImportRefusal) as refused:
        import_document(doc)
    assert f"line {line_of(text, 'bench_serving')}: the benchmark block holds more than the sglang.bench_serving " \
           f"command ('{shown}'" in str(refused.value), str(refused.value)


def test_a_document_of_too_many_sections_is_refused_at_once(monkeypatch) -> None:
    from ansible_collections.ascend.sglang.plugins.plugin_utils.importer import _import_profile
    monkeypatch.setattr(_import_profile, "MAX_SECTIONS", 1)
    with pytest.raises(ImportRefusal, match="2 configuration sections, more than the 1 the importer reads"):
        import_document(document(PD, MIXED))


def test_a_destination_under_a_file_is_refused_naming_it(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(_import_output.NotOurs, match=f"'{tmp_path}/file' is a file, not a directory"):
        _import_output.check_directory(str(tmp_path / "file" / "profiles"), "sglang_profiles_dir")


def test_the_node_list_of_a_mixed_instance_over_nodes_is_the_mixed_hosts() -> None:
    """The pages' PD-mixed instances over several nodes list NODE_IPS=('<your node1 ip>' '<your node2 ip>'): the
    placeholders are the mixed hosts in order (prefill and decode placeholders are left as they are)."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.importer._import_script import (
        Layout, substitute_placeholders)

    lay = Layout(prefill=["10.0.1.1"], decode=["10.0.2.1"], mixed=["10.0.3.1", "10.0.3.2"], router=None)
    assert substitute_placeholders("NODE_IPS=('<your node1 ip>' '<your node2 ip>')\n", lay).endswith(
        "NODE_IPS=('10.0.3.1' '10.0.3.2')\n")
    assert "'<your node3 ip>'" in substitute_placeholders("NODE_IPS=('<your node3 ip>')\n", lay)
    assert "10.0.1.1" in substitute_placeholders("P_IP=('<your prefill ip1>')\n", lay)


@pytest.mark.parametrize("bad, flag, hint", [("--max-attempts 5", "--max-attempts", ""),
                                             ("--num-prompt 4", "--num-prompt", " (an abbreviation of --num-prompts?)")])
def test_an_argument_the_benchmark_does_not_take_is_refused_naming_the_line(bad: str, flag: str, hint: str) -> None:
    """profiles/_flags/bench_serving-<release>.txt (the parser's own list) says what sglang.bench_serving takes."""
    text = TABLE + MIXED.replace("--random-output-len 1000", f"--random-output-len 1000 {bad}")
    with pytest.raises(ImportRefusal) as refused:
        import_document(read_document(text, "000_demo.txt"))
    assert f"000_demo.txt line {line_of(text, 'bench_serving')}: {flag} is not an argument of sglang.bench_serving " \
           f"in any supported sglang release{hint}" in str(refused.value), str(refused.value)
