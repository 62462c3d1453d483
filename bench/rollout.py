"""Rollout wall time on the pd_separation Molecule layout (prints figures, asserts nothing).

Usage: MOLECULE_CMD=rollout scripts/molecule.sh pd_separation [-- --delay T]
(creates and prepares the scenario's five containers, runs this script, destroys them; it needs the environment
scripts/molecule.sh sets up). It deploys playbooks/deepseek_r1_pd32.yml with the scenario inventory and the
test overlay, exactly as the scenario's converge does, and prints the wall time of
  1. a first deploy (stand-in start-up delay 1 s, packages installed from the offline wheelhouse),
  2. a no-op re-run,
  3. a --check --diff run,
  4. a change that restarts every server: their start-up delay becomes T s (an environment change of every
     prefill and decode service), so that run cannot take less than T; overhead = wall - T. The watchdogs'
     start-up grace is set above T in every run, as a fleet sets it above its servers' start-up time.
Each line also gives the number of tasks the run went through and the PLAY RECAP's changed count.
With --profile N, each run is followed by its N slowest tasks (ansible.posix.profile_tasks, which the Molecule
venv's ansible package brings): where a rollout spends the time that is not the servers' start-up.
With --log-dir DIR, each run's ansible-playbook output is kept there (run-1.log ... run-4.log).
With --fabric N, after the first deploy: N no-op re-runs with the fabric, NPU health and weights checks off
(sglang_preflight_checks, what preflight did before them) alternating with N with their defaults, then the
minimum and median of each and what the checks add.
"""

from __future__ import annotations

import argparse
import os
import statistics
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "extensions" / "molecule" / "pd_separation"
# The environment Molecule gives converge (ANSIBLE_PIPELINING among it).
CONVERGE_ENV = yaml.safe_load((SCENARIO.parent / "config.yml").read_text(encoding="utf-8"))["ansible"]["env"]
ROUTER = {"args": {"--mini-lb": None, "--prometheus-host": "127.0.0.1", "--prometheus-port": 29100}}


def overlay(path: Path, delay: float, grace: int) -> Path:
    env = {"env": {"SGLANG_STANDIN_STARTUP_DELAY": str(delay)}}
    # The watchdogs' start-up grace covers the slowest start-up, as sglang_watchdog_startup_grace must in a
    # fleet (default 900 s): the scenario's 4 s would have them restart instances still starting (T > 4 s).
    path.write_text(yaml.safe_dump({"sglang_overrides": {"router": ROUTER, "prefill": env, "decode": env},
                                    "sglang_watchdog_startup_grace": grace}), encoding="utf-8")
    return path


def slowest(stdout: str) -> list[str]:
    """profile_tasks' summary lines ("<play> : <task> ---- 1.23s"), slowest first, as it prints them."""
    summary = stdout.rpartition("\nPLAY RECAP")[2]
    return [m.group(1).strip() + f"  {m.group(2)} s" for m in re.finditer(r"^(.+?) -{2,} (\d+\.\d+)s$", summary, re.M)]


def deploy(extra: Path, *flags: str, profile: int = 0, log: Path | None = None) -> tuple[float, int, int, list[str]]:
    """Wall seconds, tasks run, changed count of the PLAY RECAP (summed over hosts), slowest tasks (--profile)."""
    argv = [shutil.which("ansible-playbook") or "ansible-playbook", "-i", str(SCENARIO / "inventory"),
            str(ROOT / "playbooks" / "deepseek_r1_pd32.yml"), "-e", f"@{SCENARIO.parent / 'shared' / 'vars' / 'overlay.yml'}",
            "-e", f"@{extra}", *flags]
    env = dict(os.environ, **CONVERGE_ENV, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0")
    if profile:
        env.update(ANSIBLE_CALLBACKS_ENABLED="ansible.posix.profile_tasks",
                   PROFILE_TASKS_TASK_OUTPUT_LIMIT=str(profile), PROFILE_TASKS_SORT_ORDER="descending")
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if log is not None:
        log.write_text(proc.stdout, encoding="utf-8")
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-2000:]}")
    tasks = proc.stdout.count("\nTASK [")
    changed = sum(int(m) for m in re.findall(r"^\S+\s+: ok=\d+\s+changed=(\d+)", proc.stdout, re.M))
    return wall, tasks, changed, slowest(proc.stdout) if profile else []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=30.0, help="start-up delay T of the restarted servers (s)")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="print the N slowest tasks of each run")
    parser.add_argument("--log-dir", type=Path, help="write each run's ansible-playbook output to run-<n>.log there")
    parser.add_argument("--fabric", type=int, default=0, metavar="N",
                        help="N no-op re-runs with the fabric/weights checks off and N with them on, alternating")
    args = parser.parse_args()
    if not os.environ.get("SGLANG_MOLECULE_WHEELHOUSE"):
        sys.exit("run through scripts/molecule.sh (MOLECULE_CMD=rollout): it creates the containers and the wheelhouse")
    with tempfile.TemporaryDirectory() as tmp:
        grace = int(2 * args.delay) + 30  # the same in every run: only the servers' environment changes
        quick = overlay(Path(tmp) / "quick.yml", 1, grace)
        slow = overlay(Path(tmp) / "slow.yml", args.delay, grace)
        print(f"{'run':<44} {'wall s':>7} {'overhead s':>11} {'tasks':>6} {'changed':>8}", flush=True)
        if args.log_dir:
            args.log_dir.mkdir(parents=True, exist_ok=True)
        if args.fabric:
            fabric_cost(quick, Path(tmp) / "checks-off.yml", args.fabric, args.profile)
            return
        for n, (label, extra, flags, delay) in enumerate((
                ("first deploy", quick, (), None),
                ("no-op re-run", quick, (), None),
                ("--check --diff (no change)", quick, ("--check", "--diff"), None),
                (f"restart every server, start-up T = {args.delay:g} s", slow, (), args.delay)), 1):
            log = args.log_dir / f"run-{n}.log" if args.log_dir else None
            wall, tasks, changed, top = deploy(extra, *flags, profile=args.profile, log=log)
            overhead = f"{wall - delay:>11.1f}" if delay is not None else f"{'':>11}"
            print(f"{label:<44} {wall:>7.1f} {overhead} {tasks:>6} {changed:>8}", flush=True)
            for line in top:
                print(f"    {line}", flush=True)


def fabric_cost(quick: Path, off: Path, rounds: int, profile: int = 0) -> None:
    """No-op re-runs without and with the fabric, NPU health and weights checks, alternating (the machine's load
    falls on both alike). With profile N, the last round's runs each print their N slowest tasks."""
    checks = ("npu_link", "npu_net_health", "npu_ip", "npu_tls", "npu_ping", "npu_health", "weights")
    off.write_text(yaml.safe_dump({"sglang_preflight_checks": {c: "off" for c in checks}}), encoding="utf-8")
    wall, tasks, changed, _unused = deploy(quick)
    print(f"{'first deploy':<44} {wall:>7.1f} {'':>11} {tasks:>6} {changed:>8}", flush=True)
    runs: dict[str, list[float]] = {"off": [], "on": []}
    for round_ in range(rounds):
        for label, flags in (("off", ("-e", f"@{off}")), ("on", ())):
            wall, tasks, changed, top = deploy(quick, *flags, profile=profile if round_ == rounds - 1 else 0)
            runs[label].append(wall)
            print(f"{'no-op re-run, fabric checks ' + label:<44} {wall:>7.1f} {'':>11} {tasks:>6} {changed:>8}",
                  flush=True)
            for line in top:
                print(f"    {line}", flush=True)
    for label, walls in runs.items():
        print(f"fabric checks {label}: min {min(walls):.1f} s, median {statistics.median(walls):.1f} s")
    print(f"added by the checks: {statistics.median(runs['on']) - statistics.median(runs['off']):+.1f} s (medians), "
          f"{min(runs['on']) - min(runs['off']):+.1f} s (minimums)")


if __name__ == "__main__":
    main()
