"""Weights staging throughput on Molecule-built hosts (prints figures, asserts nothing).

    MOLECULE_CMD=stage scripts/molecule.sh weights [SGLANG_STAGE_ARGS="--hosts 4,8 --size-mb 2048 --rate-mbit 400"]

Containers made here from the Molecule host image (scripts/molecule.sh builds it; it has rsync): a store (the
deployment's router host, serving a synthetic model directory from an rsync daemon, the source an operator would
name in sglang_model_source) and up to 8 PD-mixed hosts (qwen3_32b_a2_8c_mixed_6k_1k5_18ms, one replica each). Every
container's link is shaped to --rate-mbit (tc tbf on its eth0's egress: what each host can send, as a NIC would
limit it), so that the store's link matters as it does in a cluster, where here every container shares one machine.

First the limits, measured with plain copies: one rsync of the whole directory from the store to one host (the link
and the receiving disk together), and a 1 GiB dd write with fdatasync on a host (the disk alone). Then, for each
host count and for the star (sglang_stage_tree=false: every host pulls from the store) and the tree (hosts that hold
the copy serve the others), playbooks/stage_weights.yml into empty hosts, timed on the controller, and per run:
  - the aggregate throughput: hosts x directory size / wall time;
  - the limit the links allow that schedule: the star's is the store's link (every byte of every copy crosses it),
    the tree's is hosts x the plain copy's rate / its rounds (each round moves one copy per serving link at most);
  - the share of that limit reached (the target is 80 %), and whether the tree beats the star.
The synthetic directory is written once in the store with shards of realistic sizes (urandom, so that no transfer
compresses it): a config, a tokenizer, an index naming the shards, and --size-mb of shards of about 256 MiB.
The containers and their network are removed at the end, also when a run fails or the benchmark is interrupted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
PROFILE = "qwen3_32b_a2_8c_mixed_6k_1k5_18ms"
NETWORK = "sgw-stage-net"
STORE = "sgw-store"
MODEL = "/data/bench/Qwen3-32B-synthetic"
STORE_DIR = "/srv/models/Qwen3-32B-synthetic"
SOURCE = f"rsync://{STORE}/models/Qwen3-32B-synthetic"
SHARD_MB = 256


def podman(*args: str, check: bool = True, timeout: float = 3600) -> subprocess.CompletedProcess:
    return subprocess.run(["podman", *args], capture_output=True, text=True, check=check, timeout=timeout)


def sh(container: str, script: str, timeout: float = 3600) -> str:
    return podman("exec", container, "bash", "-ec", script, timeout=timeout).stdout


def hosts_of(count: int) -> list[str]:
    return [f"sgw-mixed-{i}" for i in range(count)]


def up(count: int, rate_mbit: int, size_mb: int) -> None:
    image = os.environ["SGLANG_MOLECULE_HOST_IMAGE"]
    if podman("network", "exists", NETWORK, check=False).returncode != 0:
        podman("network", "create", NETWORK)
    for name in [STORE] + hosts_of(count):
        podman("run", "-d", "--name", name, "--hostname", name, "--network", NETWORK, "--systemd", "always",
               "--cap-add", "NET_ADMIN", "--ulimit", "nofile=4096:4096", "--ulimit", "nproc=4096:4096",
               "--security-opt", "unmask=/proc/sys", image, "/sbin/init")
    for name in [STORE] + hosts_of(count):
        for _unused in range(100):  # bounded: systemd and the network come up within seconds
            if podman("exec", name, "true", check=False).returncode == 0:
                break
            time.sleep(0.2)
        sh(name, f"tc qdisc add dev eth0 root tbf rate {rate_mbit}mbit burst 1mb latency 200ms")
    shards = max(1, size_mb // SHARD_MB)
    names = [f"model-{i:05d}-of-{shards:05d}.safetensors" for i in range(1, shards + 1)]
    index = {"metadata": {"total_size": shards * SHARD_MB << 20}, "weight_map": {f"w{i}": n for i, n in enumerate(names)}}
    sh(STORE, f"""
mkdir -p {STORE_DIR}
cd {STORE_DIR}
echo '{{"architectures": ["Qwen3ForCausalLM"]}}' > config.json
echo '{{}}' > quant_model_description.json
head -c 11000000 /dev/urandom | base64 > tokenizer.json
echo '{json.dumps(index)}' > model.safetensors.index.json
for n in {' '.join(names)}; do head -c {SHARD_MB << 20} /dev/urandom > "$n"; done
printf 'use chroot = no\\nread only = yes\\n[models]\\n    path = /srv/models\\n' > /etc/rsyncd-bench.conf
systemd-run --unit bench-store /usr/bin/rsync --daemon --no-detach --port=873 --config=/etc/rsyncd-bench.conf
""")
    for _unused in range(100):
        if podman("exec", hosts_of(1)[0], "rsync", "--list-only", f"rsync://{STORE}/models/", check=False).returncode == 0:
            return
        time.sleep(0.2)
    raise SystemExit("the store's rsync daemon did not come up")


def down(count: int) -> None:
    podman("rm", "-f", "-t", "0", "--ignore", STORE, *hosts_of(count), check=False)
    podman("network", "rm", "-f", NETWORK, check=False)


def directory_bytes() -> int:
    return int(sh(STORE, f"du -sb {STORE_DIR} | cut -f1").split()[0])


def limits(host: str) -> tuple[float, float]:
    """(MB/s of one plain rsync of the directory from the store, MB/s of a 1 GiB dd write with fdatasync)."""
    started = time.monotonic()
    sh(host, f"rsync -a rsync://{STORE}/models/Qwen3-32B-synthetic/ /data/plain/")
    copy = directory_bytes() / (time.monotonic() - started) / 1e6
    out = sh(host, "dd if=/dev/zero of=/data/dd-test bs=1M count=1024 conv=fdatasync 2>&1; rm -f /data/dd-test /data/plain -r")
    disk = float(out.strip().splitlines()[-1].split(",")[-1].split()[0]) * (1000 if "GB/s" in out else 1)
    return copy, disk


def inventory(tmp: Path, count: int) -> Path:
    inv = tmp / f"inv-{count}"
    inv.mkdir()
    (inv / "hosts.yml").write_text(yaml.safe_dump({"all": {
        "vars": {"ansible_connection": "containers.podman.podman", "ansible_python_interpreter": "/usr/bin/python3",
                 "sglang_profile": PROFILE, "sglang_model_path": MODEL,
                 "sglang_draft_model_path": "/data/models/Qwen3-32B-Eagle3"},
        "children": {"mixed": {"hosts": {h: {} for h in hosts_of(count)}},
                     "router": {"hosts": {STORE: {}}}}}}), encoding="utf-8")
    return inv


def stage(inv: Path, tree: bool, log: Path | None) -> tuple[float, int, str]:
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_PIPELINING="True")
    argv = [shutil.which("ansible-playbook") or "ansible-playbook", "-i", str(inv), "ascend.sglang.stage_weights",
            "-e", json.dumps({"sglang_model_source": SOURCE, "sglang_stage_tree": tree,
                              "sglang_stage_progress_interval": 10})]
    started = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=7200, check=False)
    wall = time.monotonic() - started
    if log:
        log.write_text(proc.stdout + proc.stderr, encoding="utf-8")
    if proc.returncode != 0:
        raise SystemExit(f"stage_weights.yml failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-2000:]}")
    rounds = len({line.split(":")[0] for line in proc.stdout.splitlines() if line.strip().startswith('"round ')})
    return wall, rounds, proc.stdout


def reset(count: int) -> None:
    for host in hosts_of(count):
        sh(host, f"rm -rf {MODEL} /data/bench/.*.sglang-stage")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", default="4,8", help="host counts, comma-separated (at most 8)")
    parser.add_argument("--size-mb", type=int, default=2048, help="size of the synthetic model directory's shards")
    parser.add_argument("--rate-mbit", type=int, default=400, help="each container's link (tc tbf on eth0)")
    parser.add_argument("--log-dir", type=Path, help="keep each run's ansible-playbook output there")
    args = parser.parse_args()
    counts = [int(x) for x in args.hosts.split(",")]
    largest = max(counts)
    down(largest)
    try:
        up(largest, args.rate_mbit, args.size_mb)
        size = directory_bytes()
        copy, disk = limits(hosts_of(1)[0])
        print(f"synthetic model directory: {size / 1e6:.0f} MB; links shaped to {args.rate_mbit} Mbit/s "
              f"({args.rate_mbit / 8:.0f} MB/s)", flush=True)
        print(f"limits measured with plain copies: one rsync store -> host {copy:.1f} MB/s; "
              f"a host's disk (dd, fdatasync) {disk:.0f} MB/s", flush=True)
        print(f"\n{'hosts':>5} {'mode':<5} {'rounds':>6} {'wall s':>8} {'aggregate MB/s':>15} {'limit MB/s':>11} "
              f"{'of limit':>9}", flush=True)
        results = {}
        with tempfile.TemporaryDirectory() as tmp:
            for count in counts:
                inv = inventory(Path(tmp), count)
                for tree in (False, True):
                    reset(largest)
                    mode = "tree" if tree else "star"
                    log = args.log_dir / f"stage-{count}-{mode}.log" if args.log_dir else None
                    if log:
                        log.parent.mkdir(parents=True, exist_ok=True)
                    wall, rounds, _out = stage(inv, tree, log)
                    aggregate = count * size / wall / 1e6
                    limit = copy if not tree else count * copy / rounds
                    results[(count, mode)] = wall
                    print(f"{count:>5} {mode:<5} {rounds:>6} {wall:>8.1f} {aggregate:>15.1f} {limit:>11.1f} "
                          f"{aggregate / limit:>8.0%}", flush=True)
        for count in counts:
            star, tree = results[(count, "star")], results[(count, "tree")]
            print(f"{count} hosts: the tree took {tree:.1f} s, the star {star:.1f} s "
                  f"({'tree faster' if tree < star else 'star faster'}, x{star / tree:.2f})", flush=True)
    finally:
        down(largest)


if __name__ == "__main__":
    sys.exit(main())
