"""Planner time and memory for fleets of 8, 64, 512 and 4096 hosts (prints figures, asserts nothing).

Usage: .venv/bin/python bench/plan_scale.py [--repeat N]
Each fleet is the DeepSeek-R1 32-card PD layout scaled up: n/4 hosts run single-node
prefill instances, n/2 hosts run 2-node decode instances and up to 4 hosts run routers
(the rest of the n hosts stay idle), so every planner path (ranks, dist-init, bootstrap
ports, store URL, router upstreams, port checks) grows with n.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import conftest  # noqa: E402,F401  (puts the collection on sys.path)  # pylint: disable=unused-import

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._planner import plan  # noqa: E402
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import load_profile  # noqa: E402
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._topology import build_inventory  # noqa: E402


def fleet(n: int):
    prefill, decode = n // 4, n // 2
    routers = max(1, min(4, n - prefill - decode))
    groups = {"prefill": [f"p{i}" for i in range(prefill)], "decode": [f"d{i}" for i in range(decode)],
              "router": [f"r{i}" for i in range(routers)], "mixed": []}
    hostvars = {}
    for role, names in groups.items():
        for i, name in enumerate(names):
            hostvars[name] = {"sglang_host_ip": f"10.{ord(role[0]) % 200}.{i // 250}.{i % 250 + 1}", "sglang_nic": "ib0"}
    return groups, hostvars


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    profile = load_profile("deepseek_r1_a3_32c_pd_6k_1k6_20ms")
    print(f"{'hosts':>6} {'services':>9} {'median ms':>10} {'min ms':>8} {'peak MiB':>9} {'plan JSON KiB':>14}")
    for n in (8, 64, 512, 4096):
        groups, hostvars = fleet(n)
        times = []
        for _unused in range(args.repeat):
            start = time.perf_counter()
            result = plan(profile, build_inventory(groups, hostvars, {"sglang_model_path": "/m"}))
            times.append((time.perf_counter() - start) * 1000)
        tracemalloc.start()
        result = plan(profile, build_inventory(groups, hostvars, {"sglang_model_path": "/m"}))
        _unused, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        services = sum(len(h.services) for h in result.hosts.values())
        size = len(json.dumps(result.as_dict())) / 1024
        print(f"{n:>6} {services:>9} {statistics.median(times):>10.1f} {min(times):>8.1f} {peak / 2**20:>9.1f} {size:>14.0f}")


if __name__ == "__main__":
    main()
