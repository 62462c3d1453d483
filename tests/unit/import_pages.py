"""Pages the importer's unit tests read, shared by the document reader's and the profile builder's tests
(ansible-test units collects each test file on its own: a test module cannot import another)."""

# The current per-model pages (MDX): front matter, HTML summary tables, "###" sections with bold key/value lines and
# fenced command blocks (shortened from the layout of docs_new/.../best_practice/qwen3_32b.mdx).
MDX = '''---
title: "Best Practice for Demo-32B on Ascend NPU"
---

This section describes the best practice data for Demo-32B on the Ascend NPU.

### Low Latency

<table style={{width: "100%"}}>
  <thead>
    <tr><th>Model</th><th>Hardware</th><th>Cards</th><th>Deploy Mode</th><th>Dataset</th><th>TPOT</th><th>Quantization</th><th>Configuration</th></tr>
  </thead>
  <tbody>
    <tr>
      <td style={{padding: "9px 12px"}}>Demo-32B</td>
      <td>Atlas 800I A3</td>
      <td>2</td>
      <td>PD Mixed</td>
      <td>3.6K+1.5K</td>
      <td>50ms</td>
      <td>W8A8 INT8</td>
      <td><a href="#demo-32b-w8a8-2p-in3k5-out1k5-50ms">Optimal Configuration</a></td>
    </tr>
  </tbody>
</table>

## Optimal Configuration

### demo 32b w8a8 2p in3k5 out1k5 50ms

**Model**: Demo-32B

**Hardware**: Atlas 800I A3

**Cards**: 2

**Deploy Mode**: PD Mixed

**Quantization**: W8A8 INT8

**Dataset**: 3.6K+1.5K

**TPOT**: 50ms

#### Model Deployment

```bash Command
# set up the host
sysctl -w vm.swappiness=0
export HCCL_SOCKET_IFNAME=lo
python -m sglang.launch_server --model-path $MODEL_PATH --host 127.0.0.1 --port 6688 \\
    --nnodes 1 \\
    --node-rank 0 \\
    --tp-size 4
```

#### Benchmark

We tested it based on the `RANDOM` dataset.

```shell Command
python -m sglang.bench_serving \\
    --dataset-name random \\
    --host 127.0.0.1 \\
    --port 6688 \\
    --random-input-len 3584 \\
    --random-output-len 1536
```
'''


# The summary table's columns in the seeds' rendered text form (one cell per line, headings ending with "#").
HEAD = ("Model", "Hardware", "CardNum", "Deploy Mode", "Dataset", "Quantization", "TPOT(ms)", "Output TPS(per card)",
        "Configuration")


def cells_table(*rows: tuple[str, ...], title: str = "High Throughput") -> str:
    """The head of a document in that form: its heading, one summary table of ``rows`` (each row's cells but the
    last, its 'Optimal Configuration' link) and the heading the configuration sections follow."""
    cells = [*HEAD] + [cell for row in rows for cell in (*row, "Optimal Configuration")]
    return f"Best Practice on Ascend NPU#\n\n{title}#\n\n" + "".join(f"{c}\n\n" for c in cells) + \
        "Optimal Configuration#\n\n"
