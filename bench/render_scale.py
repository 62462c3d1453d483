"""Render mode against the plan for fleets of 4, 16, 64 and 256 hosts (prints figures, asserts nothing).

Usage: .venv/bin/python bench/render_scale.py [--sizes 4,16,64,256] [--budget SECONDS]
Each fleet is the DeepSeek-R1 32-card PD layout of bench/plan_scale.py written as an inventory: n/4 hosts
run single-node prefill instances, n/2 hosts run 2-node decode instances and up to 4 hosts run routers.
For each fleet it times `ansible-playbook playbooks/plan.yml` and `playbooks/render.yml` (which plans too)
as wall time of the whole command, and prints them side by side with their ratio. A fleet whose render is
projected (linearly, from the previous fleet) to take longer than --budget seconds is skipped, saying so.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT / "bench"))
from plan_scale import fleet  # noqa: E402  # pylint: disable=wrong-import-position

PROFILE = "deepseek_r1_a3_32c_pd_6k_1k6_20ms"


def write_inventory(n: int, directory: Path) -> Path:
    groups, hostvars = fleet(n)
    inventory = {"all": {"vars": {"sglang_profile": PROFILE, "sglang_model_path": "/data/models/DeepSeek-R1"},
                         "children": {group: {"hosts": {name: hostvars[name] for name in names}}
                                      for group, names in groups.items() if names}}}
    path = directory / f"fleet{n}.yml"
    path.write_text(yaml.safe_dump(inventory), encoding="utf-8")
    return path


def timed(*args: str) -> float:
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_RETRY_FILES_ENABLED="0")
    start = time.perf_counter()
    proc = subprocess.run([str(BIN / "ansible-playbook"), *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"ansible-playbook {' '.join(args)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="4,16,64,256", help="comma-separated fleet sizes (hosts)")
    parser.add_argument("--budget", type=float, default=600.0,
                        help="skip a fleet whose render is projected to take longer (seconds)")
    args = parser.parse_args()
    print(f"{'hosts':>6} {'files':>6} {'plan s':>8} {'render s':>9} {'render/plan':>12}")
    previous: tuple[int, float] | None = None
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            if previous is not None:
                projected = previous[1] * n / previous[0]
                if projected > args.budget:
                    print(f"{n:>6} skipped: render projected at {projected:.0f} s (linear from {previous[0]} hosts), "
                          f"over the --budget of {args.budget:.0f} s")
                    continue
            inventory = write_inventory(n, Path(tmp))
            plan_s = timed("-i", str(inventory), "playbooks/plan.yml")
            out = Path(tmp) / f"render{n}"
            render_s = timed("-i", str(inventory), "playbooks/render.yml", "-e", f"sglang_render_dir={out}")
            files = sum(1 for p in out.rglob("*") if p.is_file())
            print(f"{n:>6} {files:>6} {plan_s:>8.1f} {render_s:>9.1f} {render_s / plan_s:>12.1f}", flush=True)
            previous = (n, render_s)


if __name__ == "__main__":
    main()
