"""Reading a best-practice document: summary tables (both flattened forms), sections, their parts and lines."""

from __future__ import annotations

import pytest

from ansible_collections.ascend.sglang.plugins.plugin_utils.importer._import_doc import (
    ImportRefusal, as_printed, detect_form, document_id, parse_meta, read_document, result_lines)
from ansible_collections.ascend.sglang.tests.unit.import_pages import MDX, cells_table

# One cell per line, headings ending with "#" (the first document's rendering).
CELLS = cells_table(("Qwen3-32B", "Atlas 800I A3", "2", "PD Mixed", "2K-2K", "W8A8", "48.30", "986.150")) + """\
Qwen3-32B Atlas 800I A3-2Card PD Mixed 2K-2K 50ms#

Model Deployment#

export HCCL_BUFFSIZE=400
python -m sglang.launch_server --model-path $MODEL_PATH \\
    --host 127.0.0.1 --port 7239

Benchmark#

We tested it based on the GSM8K dataset.

python3 -m sglang.bench_serving --dataset-name random \\
    --host 127.0.0.1 --port 7239
Backend: sglang
Mean TPOT (ms): 48.34
Output token throughput (tok/s): 1972.30

Qwen3-32B Atlas 800I A3-2Card PD Mixed 3.5K-1.5K 50ms#

Model Deployment#

Please Turn to Model Deployment

Benchmark#

python -m sglang.bench_serving --dataset-name random --port 7239
"""

# One row per line, cells run together (the second document's rendering), key/value line under each title.
ROWS = """Skip to main content
Low Latency

ModelHardwareCardsDeploy ModeDatasetTPOTQuantizationConfiguration
Qwen3.5-397BAtlas 800I A38PD Mixed128K+1K20msW4A8 INT8Optimal Configuration

Optimal Configuration

Qwen3.5-397B W4A8 8P IN128K OUT1K 20ms

Model: Qwen3.5-397B Hardware: Atlas 800I A3 Cards: 8 Deploy Mode: PD Mixed Quantization: W4A8 INT8 Dataset: 128K+1K TPOT: 20ms

Model Deployment

Command
# update MODEL_PATH first
MODEL_PATH=/path/to/model-weights

Benchmark

Command
python -m sglang.bench_serving \\
    --dataset-name random
"""


def test_cell_per_line_tables_and_sections() -> None:
    doc = read_document(CELLS, "000_abcdef.txt")
    assert doc.id == "000" and doc.form == "seed"
    [row] = doc.rows
    assert (row.table, row.model, row.hardware, row.cards, row.mode, row.dataset, row.quantization) == (
        "high_throughput", "Qwen3-32B", "A3", 2, "PD Mixed", "2K-2K", "W8A8")
    assert (row.tpot_ms, row.tps_text, row.tpot_is_target) == (48.3, "986.150", False)
    first, second = doc.sections
    assert first.title == "Qwen3-32B Atlas 800I A3-2Card PD Mixed 2K-2K 50ms"
    assert first.deploy.text.splitlines()[0] == "export HCCL_BUFFSIZE=400"
    # Line numbers are the document's (1-based), for refusals.
    assert CELLS.splitlines()[first.deploy.first - 1] == "export HCCL_BUFFSIZE=400"
    assert first.deploy.line_of("--host 127.0.0.1") == first.deploy.first + 2
    assert first.bench == "python3 -m sglang.bench_serving --dataset-name random --host 127.0.0.1 --port 7239"
    assert CELLS.splitlines()[first.bench_line - 1].startswith("python3 -m sglang.bench_serving")
    assert result_lines(first.result.text) == {"Backend": "sglang", "Mean TPOT (ms)": "48.34",
                                               "Output token throughput (tok/s)": "1972.30"}
    assert not first.reuses_deployment and second.reuses_deployment
    assert second.result.text == ""


def test_row_per_line_tables_and_key_value_sections() -> None:
    doc = read_document(ROWS, "001_x.txt")
    [row] = doc.rows
    assert (row.table, row.model, row.cards, row.dataset, row.quantization, row.tpot_ms) == (
        "low_latency", "Qwen3.5-397B", 8, "128K+1K", "W4A8 INT8", 20.0)
    assert row.tpot_is_target and row.tps_text is None
    [section] = doc.sections
    assert section.meta == {"Model": "Qwen3.5-397B", "Hardware": "Atlas 800I A3", "Cards": "8",
                            "Deploy Mode": "PD Mixed", "Quantization": "W4A8 INT8", "Dataset": "128K+1K",
                            "TPOT": "20ms"}
    # The script starts under "Command"; the benchmark's continuation lines are joined.
    assert section.deploy.text.splitlines()[0] == "# update MODEL_PATH first"
    assert section.bench == "python -m sglang.bench_serving --dataset-name random"


def test_meta_line_and_helpers() -> None:
    assert parse_meta("Model: A B Hardware: Atlas 800I A2 Cards: 4 TPOT: 9ms") == {
        "Model": "A B", "Hardware": "Atlas 800I A2", "Cards": "4", "TPOT": "9ms"}
    assert document_id("docs/002_2ab2911fe03928ae.txt") == "002"
    assert document_id("qwen3_32b.txt") == "qwen3_32b"
    assert as_printed("296") == 296 and isinstance(as_printed("311.750"), float)


def test_mdx_pages_without_configurations_are_refused() -> None:
    page = "---\ntitle: GLM\n---\n\n### Low Latency\n\n<table><tr><td>GLM</td></tr></table>\n"
    assert detect_form(page) == "mdx"
    with pytest.raises(ImportRefusal, match="no '## Optimal Configuration' heading"):
        read_document(page, "glm5_1.mdx")


def test_a_text_without_sections_is_refused() -> None:
    with pytest.raises(ImportRefusal, match="no 'Optimal Configuration' heading"):
        read_document("Some notes\nnothing here\n", "notes.txt")
    with pytest.raises(ImportRefusal, match="no configuration section"):
        read_document("Optimal Configuration#\n\njust prose\n", "prose.txt")


def test_mdx_pages_read_into_the_same_records() -> None:
    doc = read_document(MDX, "demo_32b.mdx")
    assert doc.form == "mdx" and doc.id == "demo_32b"
    [row] = doc.rows
    assert (row.table, row.model, row.hardware, row.cards, row.mode, row.dataset, row.tpot_ms, row.quantization) == (
        "low_latency", "Demo-32B", "A3", 2, "PD Mixed", "3.6K+1.5K", 50.0, "W8A8 INT8")
    assert row.tpot_is_target
    [section] = doc.sections
    assert section.title == "demo 32b w8a8 2p in3k5 out1k5 50ms"
    assert section.meta["Dataset"] == "3.6K+1.5K" and section.meta["TPOT"] == "50ms"
    # The script is the fenced block; its comment is not a heading; line numbers are the page's.
    assert section.deploy.text.splitlines()[0] == "# set up the host"
    assert MDX.splitlines()[section.deploy.first - 1] == "# set up the host"
    assert section.bench == ("python -m sglang.bench_serving --dataset-name random --host 127.0.0.1 --port 6688 "
                             "--random-input-len 3584 --random-output-len 1536")
    assert MDX.splitlines()[section.bench_line - 1] == "python -m sglang.bench_serving \\"
    assert section.result.text == ""
