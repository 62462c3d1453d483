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


# The current pages' other form (shortened from docs_new/.../best_practice/deepseek_r1.mdx and qwen3_5_397b.mdx):
# Markdown pipe tables whose rows link to their section, "PD Disaggregation", <your prefill ip> placeholders, a
# router in a command block of its own, <network-interface> on one-node instances, python3, and two rows that only
# their links (and the section titles' "prefix90") tell apart.
# MDX_PIPES's two PD-mixed sections: one deployment without and with prefix caching, which only the title and
# one flag tell apart.
_MIXED_64K = '''### Demo-R1 W4A8 8P IN64K OUT1K {variant}50ms

**Model**: Demo-R1

**Hardware**: Atlas 800I A3

**Cards**: 8

**Deploy Mode**: PD Mixed

**Quantization**: W4A8 INT8

**Dataset**: 64K+1K

**TPOT**: 50ms

#### Model Deployment

```bash Command
export GLOO_SOCKET_IFNAME=<network-interface>
export HCCL_SOCKET_IFNAME=<network-interface>
python3 -m sglang.launch_server --model-path $MODEL_PATH --host 127.0.0.1 --port 6688 \\
    --nnodes 1 --node-rank 0 --tp-size 16{extra}
```

#### Benchmark

```shell Command
python -m sglang.bench_serving --dataset-name random --host 127.0.0.1 --port 6688 \\
    --random-input-len 65536 --random-output-len 1024
```
'''

MDX_PIPES = '''---
title: "Demo-R1"
---

### High Throughput

| Model | Hardware | Cards | Deploy Mode | Dataset | TPOT | Quantization | Configuration |
| --- | --- | --- | --- | --- | --- | --- | --- |
| Demo-R1 | Atlas 800I A3 | 16 | PD Disaggregation | 3.5K+1.5K | 50ms | W4A8 INT8 | [Optimal Configuration](#demo-r1-w4a8-1p1d-16p-in3k5-out1k5-50ms) |
| Demo-R1 | Atlas 800I A3 | 8 | PD Mixed | 64K+1K | 50ms | W4A8 INT8 | [Optimal Configuration](#demo-r1-w4a8-8p-in64k-out1k-50ms) |
| Demo-R1 | Atlas 800I A3 | 8 | PD Mixed | 64K+1K | 50ms | W4A8 INT8 | [Optimal Configuration](#demo-r1-w4a8-8p-in64k-out1k-prefix90-50ms) |

## Optimal Configuration

### Demo-R1 W4A8 1P1D 16P IN3K5 OUT1K5 50ms

**Model**: Demo-R1

**Hardware**: Atlas 800I A3

**Cards**: 16

**Deploy Mode**: PD Disaggregation

**Quantization**: W4A8 INT8

**Dataset**: 3.5K+1.5K

**TPOT**: 50ms

#### Model Deployment

```bash Command
P_IP=('<your prefill ip>')
D_IP=('<your decode ip>')
export ASCEND_MF_STORE_URL="tcp://<your prefill ip>:24670"
MODEL_PATH=/path/to/model-weights
LOCAL_HOST1=`hostname -I|awk -F " " '{print$1}'`
LOCAL_HOST2=`hostname -I|awk -F " " '{print$2}'`
for i in "${!P_IP[@]}";
do
    if [[ "$LOCAL_HOST1" == "${P_IP[$i]}" || "$LOCAL_HOST2" == "${P_IP[$i]}" ]];
    then
        export HCCL_SOCKET_IFNAME=<network-interface>
        python3 -m sglang.launch_server \\
        --model-path ${MODEL_PATH} \\
        --disaggregation-mode prefill \\
        --host ${P_IP[$i]} \\
        --port 8000 \\
        --disaggregation-bootstrap-port 8998 \\
        --nnodes 1 \\
        --tp-size 16 \\
        --disaggregation-transfer-backend ascend \\
        --device npu
        NODE_RANK=$i
        break
    fi
done
for i in "${!D_IP[@]}";
do
    if [[ "$LOCAL_HOST1" == "${D_IP[$i]}" || "$LOCAL_HOST2" == "${D_IP[$i]}" ]];
    then
        export HCCL_SOCKET_IFNAME=<network-interface>
        python3 -m sglang.launch_server \\
        --model-path ${MODEL_PATH} \\
        --disaggregation-mode decode \\
        --host ${D_IP[$i]} \\
        --port 8001 \\
        --nnodes 1 \\
        --tp-size 16 \\
        --disaggregation-transfer-backend ascend \\
        --device npu
        NODE_RANK=$i
        break
    fi
done
```

The router runs on any host:

```shell Command
python -m sglang_router.launch_router \\
    --pd-disaggregation \\
    --prefill http://<your prefill ip>:8000 8998 \\
    --decode http://<your decode ip>:8001 \\
    --host 127.0.0.1 \\
    --port 6688
```

#### Benchmark

```shell Command
python -m sglang.bench_serving --dataset-name random --host 127.0.0.1 --port 6688 \\
    --random-input-len 3584 --random-output-len 1536
```

''' + "\n".join(_MIXED_64K.format(variant=variant, extra=extra) for variant, extra in (
    ("", ""), ("PREFIX90 ", " --chunked-prefill-size 8192")))
