"""The nightly test reader (plugin_utils/importer/_import_nightly.py) on test files written here in the shapes of
SGLang's nightly Ascend performance tests: a one-server test class, a PD test with a model config, a two-node
PD-mixed config, and the refusals (non-literals, size, shapes it cannot read), each naming its line."""

from __future__ import annotations

import pytest

from ansible_collections.ascend.sglang.plugins.plugin_utils.importer import _import_nightly as n
from ansible_collections.ascend.sglang.plugins.plugin_utils.importer._import_doc import ImportRefusal
from ansible_collections.ascend.sglang.plugins.plugin_utils.importer._import_profile import import_section

MIXED = '''import unittest

from harness.perf import (
    DEMO_8B_MODEL_PATH,
    DEMO_8B_DRAFT_MODEL_PATH,
    PerfOneServerTestCaseBase,
)

run_nightly(suite="demo")

DEMO_ENVS = {
    "HCCL_SOCKET_IFNAME": "lo",
    "GLOO_SOCKET_IFNAME": "lo",
    "SGLANG_ENABLE_SPEC_V2": "1",
    "HCCL_ALGO": "level0:NA;level1:ring",
}

DEMO_ARGS = [
    "--trust-remote-code",
    "--attention-backend",
    "ascend",
    "--device",
    "npu",
    "--tp-size",
    2,
    "--mem-fraction-static",
    0.8,
    "--chunked-prefill-size",
    -1,
    "--cuda-graph-bs",
    8,
    16,
    "--speculative-algorithm",
    "EAGLE3",
    "--speculative-draft-model-path",
    DEMO_8B_DRAFT_MODEL_PATH,
]


class TestDemo8B(PerfOneServerTestCaseBase):
    model = DEMO_8B_MODEL_PATH
    other_args = DEMO_ARGS
    envs = DEMO_ENVS
    dataset_name = "random"
    max_concurrency = 4
    num_prompts = 16
    input_len = 3500
    output_len = 1500
    random_range_ratio = 1
    tpot = 20
    output_token_throughput = 150.5

    def test_it(self):
        self.run_throughput()
'''

PD = '''import os

from harness.multi_node import NIC_NAME
from harness.perf import DEMO_MOE_MODEL_PATH, DEMO_MOE_DRAFT_MODEL_PATH, PerfMultiNodePdSepTestCaseBase

PREFILL_ENVS = {
    "HCCL_SOCKET_IFNAME": NIC_NAME,
    "GLOO_SOCKET_IFNAME": NIC_NAME,
    "HCCL_BUFFSIZE": "2500",
    "PYTHONPATH": f"{DEMO_MOE_DRAFT_MODEL_PATH}:{os.environ.get('PYTHONPATH', '')}",
}

MODEL_CONFIG = {
    "model_path": DEMO_MOE_MODEL_PATH,
    "prefill_envs": PREFILL_ENVS,
    "decode_envs": {"HCCL_SOCKET_IFNAME": NIC_NAME, "GLOO_SOCKET_IFNAME": NIC_NAME, "HCCL_BUFFSIZE": "1600"},
    "prefill_args": ["--disaggregation-mode", "prefill", "--tp-size", 16, "--device", "npu",
                     "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", DEMO_MOE_DRAFT_MODEL_PATH],
    "decode_args": ["--disaggregation-mode", "decode", "--tp-size", 16, "--device", "npu", "--cuda-graph-bs", 2, 4],
    "router_args": ["--policy", "round_robin"],
}


class TestDemoMoePd(PerfMultiNodePdSepTestCaseBase):
    model_config = MODEL_CONFIG
    dataset_name = "random"
    max_concurrency = 8
    num_prompts = 32
    input_len = 131072
    output_len = 1024
    aisbench_repeat_rate = 0.9
    tpot = 50
    ttft = 9000
'''

MIX_2NODE = '''from harness.multi_node import NIC_NAME
from harness.perf import DEMO_BIG_MODEL_PATH, PerfMultiNodePdMixTestCaseBase

CONFIG = {
    "model_path": DEMO_BIG_MODEL_PATH,
    "other_args": ["--tp-size", 32, "--nnodes", 2, "--device", "npu", "--enable-dp-attention", "--dp-size", 16],
    "node_envs": {"HCCL_SOCKET_IFNAME": NIC_NAME, "GLOO_SOCKET_IFNAME": NIC_NAME},
}


class TestDemoBig(PerfMultiNodePdMixTestCaseBase):
    model_config = CONFIG
    dataset_name = "random"
    max_concurrency = 16
    num_prompts = 32
    input_len = 8192
    output_len = 1024
    request_rate = float("inf")
    tpot = 50
'''


def test_one_server_test_reads_as_a_page_section():
    test = n.parse_test(MIXED, "perf/demo/test_demo_8b_w8a8_1p_in3k5_out1k5_20ms.py")
    assert test.shape == "pd_mixed" and test.test_class == "TestDemo8B"
    assert test.thresholds == {"tpot": 20, "output_token_throughput": 150.5}
    section = n.section_of(test, "Demo-8B", test.name)
    assert section.meta == {"Model": "Demo-8B", "Hardware": "Atlas 800I A3", "Cards": "1", "Deploy Mode": "PD Mixed",
                            "Dataset": "3.5K+1.5K", "TPOT": "20ms", "Quantization": "W8A8"}
    assert "--random-input-len 3500 --random-output-len 1500" in section.bench
    assert 'export HCCL_ALGO="level0:NA;level1:ring"' in section.deploy.text


def test_one_server_profile_takes_the_operators_paths():
    doc = n.read_nightly(MIXED, "perf/demo/test_demo_8b_w8a8_1p_in3k5_out1k5_20ms.py", "Demo-8B")
    item = import_section(doc, doc.sections[0], {})
    mixed = item.data["roles"]["mixed"]
    assert item.id == "demo_8b_a3_1c_mixed_3k5_1k5_20ms"
    assert mixed["args"]["--model-path"] == "{model_path}"
    assert mixed["args"]["--speculative-draft-model-path"] == "{draft_model_path}"
    assert mixed["args"]["--cuda-graph-bs"] == [8, 16] and mixed["args"]["--chunked-prefill-size"] == -1
    assert mixed["env"]["HCCL_SOCKET_IFNAME"] == "{socket_ifname}"
    assert item.data["bench"]["args"]["--max-concurrency"] == 4


def test_pd_test_reads_roles_router_and_prefix_benchmark():
    name = "perf/demo/test_demo_moe_w8a8_1p1d_16p_in128k_out1k_prefix90_50ms.py"
    doc = n.read_nightly(PD, name, "Demo-MoE")
    section = doc.sections[0]
    assert section.meta["Cards"] == "16" and section.meta["Deploy Mode"] == "PD Separation"
    assert section.meta["Dataset"] == "128K+1K (90% prefix cache hit rate)"
    item = import_section(doc, section, {})
    assert item.id == "demo_moe_a3_16c_pd_128k_1k_prefix90_50ms"
    roles = item.data["roles"]
    assert set(roles) == {"prefill", "decode", "router"}
    assert roles["prefill"]["env"]["PYTHONPATH"] == "{draft_model_path}:"
    assert roles["router"]["args"]["--policy"] == "round_robin"
    bench = item.data["bench"]["args"]
    assert bench["--gsp-system-prompt-len"] == 117965 and bench["--gsp-question-len"] == 131072 - 117965
    assert n.thresholds_of(n.parse_test(PD, name)) == {"tpot_ms": 50, "ttft_ms": 9000}


def test_two_node_mixed_instance():
    doc = n.read_nightly(MIX_2NODE, "perf/demo/test_demo_big_w4a8_16p_in8k_out1k_50ms.py", "Demo-Big")
    item = import_section(doc, doc.sections[0], {})
    mixed = item.data["roles"]["mixed"]
    assert mixed["nnodes"] == 2 and mixed["args"]["--dist-init-addr"] == "{dist_init_addr}"
    assert item.data["cards"] == 16 and item.data["bench"]["args"]["--request-rate"] == "inf"


def test_whole_number_arithmetic_on_the_class_attributes_is_read():
    # The harness's tests compute the prompt count from the concurrency (num_prompts = int(max_concurrency) * 4).
    text = MIXED.replace("    num_prompts = 16\n", "    num_prompts = int(max_concurrency) * 4 + 0 // 1\n")
    assert text != MIXED
    doc = n.read_nightly(text, "perf/demo/test_demo_8b_w8a8_1p_in3k5_out1k5_bs4.py", "Demo-8B")
    assert "--num-prompts 16" in doc.sections[0].bench


@pytest.mark.parametrize("old, new, message", [
    ('    "--tp-size",\n    2,', '    "--tp-size",\n    float("2"),',
     "line 25: TestDemo8B.other_args: a call is not a literal (only int() of a whole number is read"),
    ('    "--tp-size",\n    2,', '    "--tp-size",\n    2 ** 64,', "and // of whole numbers are read"),
    ('    "--tp-size",\n    2,', '    "--tp-size",\n    "2" * 3,', "and // of whole numbers are read"),
    ('    "--tp-size",\n    2,', '    "--tp-size",\n    99999 * 99999,', "not a whole number up to 1000000000"),
    ("    num_prompts = 16\n", "    num_prompts = num_prompts * 4\n", "names bound to names more than 32 deep"),
    ("DEMO_ARGS = [", "DEMO_ARGS = [*BASE_ARGS,", "an unpacked list is not a literal"),
    ('"--device",\n    "npu",', '"--device",\n    DEVICE,', "'DEVICE' is not a literal the file binds"),
    ("    tpot = 20\n", "",
     "sets no TPOT or TTFT threshold (output_token_throughput 150.5) and its name no TPOT target"),
    ("    input_len = 3500\n", "", "no positive integer input_len"),
    ('"EAGLE3"', '"EAGLE3\\ntouch /x"', "holds a control character"),
    ('"SGLANG_ENABLE_SPEC_V2": "1"', '"SGLANG_ENABLE_SPEC_V2": "1\\nrm -rf /"', "holds a control character"),
    ("class TestDemo8B(PerfOneServerTestCaseBase)", "class TestDemo8B(object)", "0 test classes"),
])
def test_refusals_name_what_and_where(old, new, message):
    text = MIXED.replace(old, new)
    assert text != MIXED
    with pytest.raises(ImportRefusal, match=message.replace("(", r"\(").replace(")", r"\)")):
        n.read_nightly(text, "perf/demo/test_demo_8b_w8a8_1p_in3k5_out1k5_bs4.py", "Demo-8B")


def test_the_threshold_else_the_name_gives_the_target_and_the_name_the_cards():
    # The TPOT the test asserts is the profile's target (the name's may be stale); the name counts the cards.
    text = MIXED.replace("tpot = 20", "tpot = 18.5")
    test = n.parse_test(text, "perf/demo/test_demo_8b_w8a8_2p_in3k5_out1k5_20ms.py")
    section = n.section_of(test, "Demo-8B", test.name)
    assert section.meta["TPOT"] == "18.5ms" and section.meta["Cards"] == "2"
    assert n.thresholds_of(test)["tpot_ms"] == 18.5
    untimed = n.parse_test(MIXED.replace("    tpot = 20\n", ""), test.name)
    assert n.section_of(untimed, "Demo-8B", test.name).meta["TPOT"] == "20ms"
    # An A2 card is one device, whatever the name counts.
    a2 = n.parse_test(text, "perf/demo/test_demo_8b_w8a8_2p_in3k5_out1k5_20ms_a2.py")
    assert n.section_of(a2, "Demo-8B", a2.name).meta["Cards"] == "2"
    assert n.section_of(a2, "Demo-8B", a2.name).meta["Hardware"] == "Atlas 800I A2"


def test_a_harness_constant_takes_the_recorded_value_only():
    text = MIXED.replace('"--device",\n    "npu",', '"--device",\n    DEVICE,').replace(
        "    PerfOneServerTestCaseBase,\n", "    PerfOneServerTestCaseBase,\n    DEVICE,\n")
    name = "perf/demo/test_demo_8b_w8a8_1p_in3k5_out1k5_20ms.py"
    with pytest.raises(ImportRefusal, match="'DEVICE' is not a literal the file binds"):
        n.parse_test(text, name)
    assert "--device npu" in n.read_nightly(text, name, "Demo-8B", {"DEVICE": "npu"}).sections[0].deploy.text
    with pytest.raises(ImportRefusal, match="recorded value of DEVICE is not a string or a number"):
        n.parse_test(text, name, {"DEVICE": ["npu"]})


def test_the_file_is_never_run():
    # A call anywhere the configuration reads is refused, not evaluated.
    text = MIXED.replace('"SGLANG_ENABLE_SPEC_V2": "1"', '"SGLANG_ENABLE_SPEC_V2": __import__("os").system("x")')
    message = r"line 14: TestDemo8B.envs\[SGLANG_ENABLE_SPEC_V2\]: a call is not a literal"
    with pytest.raises(ImportRefusal, match=message):
        n.parse_test(text, "t.py")


def test_pd_refusals():
    with pytest.raises(ImportRefusal, match="no instance counts"):
        n.parse_test(PD, "perf/demo/test_demo_moe_w8a8_16p_in128k_out1k_50ms.py")
    with pytest.raises(ImportRefusal, match="accuracy variant"):
        n.read_nightly(PD, "perf/demo/test_demo_moe_w8a8_1p1d_16p_in128k_out1k_50ms_gpqa.py", "Demo-MoE")
    without_value = MIX_2NODE.replace('"--nnodes", 2,', '"--nnodes", 2, "--node-rank", "--device", "npu",')
    with pytest.raises(ImportRefusal, match="--node-rank without a value"):
        n.read_nightly(without_value, "perf/demo/test_demo_big_w4a8_16p_in8k_out1k_50ms.py", "Demo-Big")


def test_what_the_deployment_gives_each_host_replaces_the_tests_own():
    # A two-node instance's rank and address are each host's (one test gives "--node-rank 0" to both hosts).
    two_node = MIX_2NODE.replace('"--nnodes", 2,', '"--nnodes", 2, "--node-rank", 0, "--dist-init-addr", "x:1",')
    doc = n.read_nightly(two_node, "perf/demo/test_demo_big_w4a8_16p_in8k_out1k_50ms.py", "Demo-Big")
    script = doc.sections[0].deploy.text
    assert "--node-rank 0" not in script and "x:1" not in script and script.count("--node-rank $((") == 1
    # The prefill's bootstrap port is the one the router names; the harness's loopback MemFabric store is the
    # first prefill host's.
    pd = PD.replace('"--disaggregation-mode", "prefill",', '"--disaggregation-mode", "prefill", '
                    '"--disaggregation-bootstrap-port", 8995,').replace(
        '"HCCL_BUFFSIZE": "2500",', '"HCCL_BUFFSIZE": "2500", "ASCEND_MF_STORE_URL": "tcp://127.0.0.1:24669",')
    doc = n.read_nightly(pd, "perf/demo/test_demo_moe_w8a8_1p1d_16p_in128k_out1k_prefix90_50ms.py", "Demo-MoE")
    script = doc.sections[0].deploy.text
    assert "8995" not in script and script.count("--disaggregation-bootstrap-port") == 1
    assert 'export ASCEND_MF_STORE_URL="tcp://your prefill ip1:24669"' in script
    roles = import_section(doc, doc.sections[0], {}).data["roles"]
    # The decode's store, which the test leaves to its harness, is the same one.
    assert roles["prefill"]["env"]["ASCEND_MF_STORE_URL"] == roles["decode"]["env"]["ASCEND_MF_STORE_URL"] == \
        "{memfabric_store_url}"


def test_an_accuracy_class_beside_the_performance_one_is_not_a_configuration():
    accuracy = "class TestDemo8BGpqa(PerfAccuracyTestCaseBase):\n    model = DEMO_8B_MODEL_PATH\n\n\nclass TestDemo8B("
    text = MIXED.replace("class TestDemo8B(", accuracy)
    assert n.parse_test(text, "perf/demo/test_demo_8b_w8a8_1p_in3k5_out1k5_20ms.py").test_class == "TestDemo8B"


@pytest.mark.parametrize("name, text, quantization", [
    ("test_demo_8b_w4a8_1p_in3k5_out1k5_20ms.py", MIXED, "W4A8"),  # the name's
    ("test_demo_8b_1p_in3k5_out1k5_20ms.py", MIXED.replace("DEMO_8B_MODEL_PATH", "DEMO_8B_W8A8_MODEL_PATH"), "W8A8"),
    ("test_demo_8b_1p_in3k5_out1k5_20ms.py", MIXED, "BF16"),  # no server quantizes
    ("test_demo_8b_1p_in3k5_out1k5_20ms.py", MIXED.replace('"--device",', '"--quantization",\n    "modelslim",\n'
                                                           '    "--device",'), None),
])
def test_the_quantization_from_the_name_else_the_model_path_constant(name, text, quantization):
    test = n.parse_test(text, f"perf/demo/{name}")
    assert n.quantization_of(test, name[:-3]) == quantization


def test_a_ttft_threshold_alone_is_the_target():
    text = MIXED.replace("    tpot = 20\n", "    ttft = 5000\n")
    test = n.parse_test(text, "perf/demo/test_demo_8b_w8a8_1p_in3k5_out1k5_bs4.py")
    meta = n.section_of(test, "Demo-8B", test.name).meta
    assert meta["TTFT"] == "5000ms" and "TPOT" not in meta


def test_bounds():
    with pytest.raises(ImportRefusal, match="characters, more than"):
        n.parse_test("x = 1\n" * (n.MAX_CHARACTERS // 6 + 1), "big.py")
    with pytest.raises(ImportRefusal, match="syntax nodes, more than"):
        n.parse_test("x = [" + "1, " * n.MAX_NODES + "]\n", "wide.py")
    with pytest.raises(ImportRefusal, match="line 1: not Python"):
        n.parse_test("def (:\n", "broken.py")


def test_an_instance_that_no_host_holds_is_refused():
    # 32 devices on one A3 node (16 per node): the harness lays the hosts out otherwise than the file says.
    text = MIX_2NODE.replace('"--nnodes", 2,', '"--nnodes", 1,')
    with pytest.raises(ImportRefusal, match=r"the mixed instance runs 32 devices \(tp x pp\) on 1 node\(s\); an A3 "
                                            "node has 16"):
        n.read_nightly(text, "perf/demo/test_demo_big_w4a8_16p_in8k_out1k_50ms.py", "Demo-Big")


def test_an_eagle3_server_without_its_draft_model_is_refused():
    text = MIXED.replace('    "--speculative-draft-model-path",\n    DEMO_8B_DRAFT_MODEL_PATH,\n', "")
    with pytest.raises(ImportRefusal, match="the mixed arguments run EAGLE3 without --speculative-draft-model-path"):
        n.read_nightly(text, "perf/demo/test_demo_8b_w8a8_1p_in3k5_out1k5_20ms.py", "Demo-8B")


def test_the_image_benchmark():
    image = '    dataset_name = "image"\n    backend = "sglang-oai-chat"\n    image_resolution = "1024x1024"\n' \
        '    image_count = 1\n'
    text = MIXED.replace('    dataset_name = "random"\n', image).replace("input_len = 3500", "input_len = 30")
    name = "perf/demo/test_demo_8b_w8a8_1p_in1024x1024_30_out1k5_20ms.py"
    section = n.read_nightly(text, name, "Demo-8B").sections[0]
    assert section.meta["Dataset"] == "1024x1024 (30)+1.5K"
    assert "--dataset-name image --backend sglang-oai-chat" in section.bench
    assert "--random-input-len 30 --random-output-len 1500" in section.bench
    assert section.bench.endswith("--image-resolution 1024x1024 --image-count 1")
    for old, new, message in (('"1024x1024"', '"1024x1024; touch /x"', "is not WxH"),
                              ("image_count = 1", "image_count = 1000", "not a small positive integer"),
                              ('"sglang-oai-chat"', '"vllm"', "not one bench_serving serves images through")):
        with pytest.raises(ImportRefusal, match=message):
            n.read_nightly(text.replace(old, new), name, "Demo-8B")
