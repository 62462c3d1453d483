"""Size and time of the preflight's ping plan for fleets of 8 to 4096 hosts (prints figures, asserts nothing).

Usage: .venv/bin/python bench/fabric_scale.py [--repeat N]
The fleets are bench/plan_scale.py's: the DeepSeek-R1 32-card PD layout scaled up (n/4 single-node prefill hosts,
n/2 hosts in 2-node decode instances, routers). Every server host reports an IP for each of its 16 NPUs (what the
first preflight call observes); the controller then plans which NPUs ping which
(plugins/plugin_utils/rollout/_fleet_checks.py). Printed per fleet: host pairs, pings, pings per server host (constant:
the plan grows linearly), the median and minimum time of the planning, the median time of the TLS comparison of
every NPU of the fleet and of the weights comparison (every server loads /m: 165 files, one host's copy differs).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))
import conftest  # noqa: E402,F401  (puts the collection on sys.path)  # pylint: disable=unused-import
from plan_scale import fleet  # noqa: E402

from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._fleet_checks import (  # noqa: E402
    links, ping_plan, tls_findings, weights_findings,
)
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._planner import plan  # noqa: E402
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import load_profile  # noqa: E402
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._topology import build_inventory  # noqa: E402


def observed(plan_dict: dict) -> dict:
    """hccn_tool's answers of every server host: device d of the i-th host has 10.<i/250>.<i%250>.<d>."""
    out = {}
    for index, (host, host_plan) in enumerate(plan_dict["hosts"].items()):
        if not any(s["role"] != "router" for s in host_plan["services"]):
            continue
        devices = {str(d): {"ip": {"value": {"address": f"10.{index // 250}.{index % 250}.{d}"}},
                            "tls": {"value": {"switch": 0}}} for d in range(16)}
        out[host] = {"fabric": {"available": True, "devices": devices},
                     "weights": {"/m": weights(short=index == 1)}}
    return out


def weights(short: bool) -> dict:
    """A 163-shard model directory as preflight lists it (sizes, small files' digests); ``short``: one shard cut."""
    files = {f"model-{i:05d}-of-00163.safetensors": 4_000_000_000 for i in range(1, 164)}
    files.update({"config.json": 1800, "model.safetensors.index.json": 90_000})
    if short:
        files["model-00002-of-00163.safetensors"] = 1_000_000
    return {"exists": True, "error": None, "files": files,
            "digests": {"config.json": "a" * 64, "model.safetensors.index.json": "b" * 64}}


def timed(fn, repeat: int) -> tuple[float, float, object]:
    times, result = [], None
    for _unused in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    profile = load_profile("deepseek_r1_a3_32c_pd_6k_1k6_20ms")
    print(f"{'hosts':>6} {'servers':>8} {'pairs':>7} {'pings':>7} {'pings/server':>13} {'plan ms':>9} "
          f"{'min ms':>8} {'tls ms':>8} {'weights ms':>11}")
    for n in (8, 64, 512, 4096):
        groups, hostvars = fleet(n)
        plan_dict = plan(profile, build_inventory(groups, hostvars, {"sglang_model_path": "/m"})).as_dict()
        facts = observed(plan_dict)
        median, low, pings = timed(lambda: ping_plan(plan_dict, facts), args.repeat)
        tls_ms, _unused, _unused = timed(lambda: tls_findings(plan_dict, facts), args.repeat)
        weights_ms, _unused, _unused = timed(lambda: weights_findings(plan_dict, facts), args.repeat)
        total = sum(len(p) for p in pings.values())
        print(f"{n:>6} {len(facts):>8} {len(links(plan_dict)):>7} {total:>7} {total / len(facts):>13.1f} "
              f"{median:>9.1f} {low:>8.1f} {tls_ms:>8.1f} {weights_ms:>11.1f}")


if __name__ == "__main__":
    main()
