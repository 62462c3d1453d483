"""Rollout cost on Molecule-built hosts (prints figures, asserts nothing).

Two layouts, each through scripts/molecule.sh, which sets up the images, the wheelhouse and the venv it needs:
  MOLECULE_CMD=rollout scripts/molecule.sh pd_separation [SGLANG_ROLLOUT_ARGS="--delay T"]
      the pd_separation scenario's five containers (deepseek_r1_pd32: 2 prefill hosts, a 2-node decode instance,
      a router host), created and prepared by Molecule, measured, destroyed;
  MOLECULE_CMD=rollout SGLANG_ROLLOUT_ARGS="--fleet 5,10,20" scripts/molecule.sh fleet
      for each N, a fresh fleet of N containers made here from the Molecule host image: N - 1 PD-mixed A2 hosts
      (qwen3_32b_a2_8c_mixed_6k_1k5_18ms, one replica each) and one router host, prepared with the scenarios'
      prepare playbook, measured, removed (also when a run fails or the benchmark is interrupted). Memory: each
      host holds a systemd, a stand-in server (about 40 MB) or the real router, a watchdog; 20 hosts use about
      2 GB besides the controller's ansible-playbook (its peak is printed).
Each layout deploys its playbook with its inventory and the scenarios' test overlay, as a converge does, and
prints for
  1. a first deploy (stand-in start-up delay 1 s, packages installed from the offline wheelhouse),
  2. a no-op re-run,
  3. a --check --diff run,
  4. a change that restarts every server: their start-up delay becomes T s (an environment change of every
     server), so that run cannot take less than T; overhead = wall - T. The watchdogs' start-up grace is set
     above T in every run, as a fleet sets it above its servers' start-up time,
the wall time, the tasks the run went through, the PLAY RECAP's changed count, the controller's CPU seconds
(user + sys of ansible-playbook and every process it started, from wait4) and its peak memory (the summed RSS
of ansible-playbook's process group, sampled every 0.2 s), and the CPU seconds the hosts' containers used
meanwhile (their cgroups; on this machine the hosts share the controller's cores, so the wall time holds their
work as well); the fleet mode adds each figure's ratio to the first N, and with --noops N makes the no-op re-run N
times in a row and prints the controller CPU per added server host of their least and of their median (one run's
CPU varies by a few tenths of a second per host on a shared machine). Each run is bounded (--timeout, default
1800 s).
With --profile N, each run is followed by its N slowest tasks (ansible.posix.profile_tasks, which the Molecule
venv's ansible package brings): where a rollout spends the time that is not the servers' start-up.
With --log-dir DIR, each run's ansible-playbook output is kept there (run-1.log ... run-4.log).
With --fabric N (pd_separation), after the first deploy: N no-op re-runs with the fabric, NPU health and weights
checks off (sglang_preflight_checks, what preflight did before them) alternating with N with their defaults,
then the minimum and median of each and what the checks add.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
MOLECULE = ROOT / "extensions" / "molecule"
SCENARIO = MOLECULE / "pd_separation"
# The environment Molecule gives converge (ANSIBLE_PIPELINING among it).
CONVERGE_ENV = yaml.safe_load((MOLECULE / "config.yml").read_text(encoding="utf-8"))["ansible"]["env"]
FLEET_PROFILE = "qwen3_32b_a2_8c_mixed_6k_1k5_18ms"
FLEET_NETWORK = "sgf-fleet-net"
PAGE = os.sysconf("SC_PAGE_SIZE")
NOOP = "no-op re-run"


@dataclass(frozen=True)
class Layout:
    """What a series of runs deploys: inventory, playbook, the server roles whose start-up is delayed and the
    overrides every run keeps (the scenario inventory's own sglang_overrides, which -e replaces)."""

    inventory: Path
    playbook: Path
    roles: tuple[str, ...]
    keep: dict
    # The hosts' containers, whose CPU time each run is measured in as well.
    containers: tuple[str, ...] = ()
    # Further inventory sources of every run: the connection piece of a layout reached over ssh.
    connection: tuple[str, ...] = ()
    # The containers that run no server (the router hosts): their module runs are counted apart.
    others: tuple[str, ...] = ()


def ssh_piece(run_dir: Path) -> tuple[str, ...]:
    """The connection piece Molecule's prepare wrote into a run's directory (extensions/molecule/shared/prepare.yml:
    address, account, key, known_hosts), as the scenarios' own commands add it: their inventories name no
    connection, their hosts are reached over ssh as an operator's are. Nothing where the run has none."""
    piece = run_dir / "ssh" / "inventory"
    return ("-i", str(piece)) if piece.is_dir() else ()


PD32 = Layout(SCENARIO / "inventory", ROOT / "playbooks" / "deepseek_r1_pd32.yml", ("prefill", "decode"),
              yaml.safe_load((SCENARIO / "inventory" / "group_vars" / "all.yml").read_text(encoding="utf-8"))
              ["sglang_overrides"],
              tuple(p["name"] for p in yaml.safe_load((SCENARIO / "molecule.yml").read_text(encoding="utf-8"))
                    ["platforms"]),
              # scripts/molecule.sh gives the run's directory.
              ssh_piece(Path(os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", "/nonexistent"))), ("sgm-router-0",))


@dataclass
class Run:
    wall: float
    tasks: int
    changed: int
    cpu: float
    peak_mb: float
    slowest: list
    hosts_cpu: float | None = None
    # Module runs on the host that had the most, on the server hosts and on the others (the router's).
    modules: tuple[int, int] | None = None


def overlay(path: Path, layout: Layout, delay: float, grace: int) -> Path:
    env = {"env": {"SGLANG_STANDIN_STARTUP_DELAY": str(delay)}}
    overrides = dict(layout.keep, **{role: env for role in layout.roles})
    # The watchdogs' start-up grace covers the slowest start-up, as sglang_watchdog_startup_grace must in a
    # fleet (default 900 s): the scenario's 4 s would have them restart instances still starting (T > 4 s).
    path.write_text(yaml.safe_dump({"sglang_overrides": overrides, "sglang_watchdog_startup_grace": grace}),
                    encoding="utf-8")
    return path


def slowest(stdout: str) -> list[str]:
    """profile_tasks' summary lines ("<play> : <task> ---- 1.23s"), slowest first, as it prints them."""
    summary = stdout.rpartition("\nPLAY RECAP")[2]
    return [m.group(1).strip() + f"  {m.group(2)} s" for m in re.finditer(r"^(.+?) -{2,} (\d+\.\d+)s$", summary, re.M)]


def containers_cpu(names: tuple[str, ...]) -> float | None:
    """CPU seconds the containers have used so far, all their processes together (their cgroups: v2 cpu.stat, or
    v1 cpuacct.usage); None when one cannot be read. Here the hosts share the controller's cores: the run's wall
    time holds their work too, which a real fleet does on each host, in parallel."""
    total = 0.0
    for name in names:
        done = podman("inspect", "--format", "{{.State.CgroupPath}}", name, check=False)
        path = done.stdout.strip()
        if done.returncode != 0 or not path:
            return None
        try:
            v2 = Path("/sys/fs/cgroup" + path) / "cpu.stat"
            if v2.exists():
                usage = dict(line.split() for line in v2.read_text().splitlines())
                total += int(usage["usage_usec"]) / 1e6
            else:
                total += int((Path("/sys/fs/cgroup/cpuacct" + path) / "cpuacct.usage").read_text()) / 1e9
        except (OSError, ValueError, KeyError):
            return None
    return total


def module_runs(names: tuple[str, ...]) -> dict[str, int] | None:
    """Module runs each host has seen so far: every task that reaches a host over ssh with become is one sudo of
    Ansible's BECOME-SUCCESS command, which sudo logs to the host's journal. None when a journal cannot be read."""
    counts = {}
    for name in names:
        done = podman("exec", name, "journalctl", "-q", "-o", "cat", "SYSLOG_IDENTIFIER=sudo", check=False)
        if done.returncode != 0:
            return None
        counts[name] = done.stdout.count("BECOME-SUCCESS-")
    return counts


def group_rss(pgid: int) -> int:
    """Summed resident memory (bytes) of the processes of a process group."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
            if int(fields[2]) == pgid:  # fields after "(comm)": state, ppid, pgrp, ...
                total += int((stat.parent / "statm").read_text().split()[1]) * PAGE
        except (OSError, ValueError, IndexError):
            continue
    return total


def run_playbook(argv: list[str], env: dict, timeout: float, log: Path | None) -> tuple[int, str, float, float, float]:
    """Runs argv in a process group of its own, bounded by timeout: returncode, output, wall s, CPU s of the
    process and its children (wait4), peak summed RSS (MB) of its group (sampled)."""
    out = tempfile.TemporaryFile(mode="w+", encoding="utf-8")
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    peak, done = [0], threading.Event()

    def sample() -> None:
        while not done.wait(0.2):
            peak[0] = max(peak[0], group_rss(proc.pid))
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    timer = threading.Timer(timeout, lambda: os.killpg(proc.pid, signal.SIGKILL))
    timer.start()
    try:
        _pid, status, usage = os.wait4(proc.pid, 0)
    finally:
        timer.cancel()
        done.set()
        sampler.join()
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    out.seek(0)
    text = out.read()
    out.close()
    if log is not None:
        log.write_text(text, encoding="utf-8")
    return proc.returncode, text, wall, usage.ru_utime + usage.ru_stime, peak[0] / 2**20


def task_count(stdout: str) -> int:
    """The tasks a run went through: its TASK banners, a banner repeated right after itself counted once (Ansible
    prints a meta task's banner once per host it evaluates it for, e.g. the roles' ``meta: end_role``)."""
    banners = [line for line in stdout.splitlines() if line.startswith("TASK [")]
    return sum(1 for n, line in enumerate(banners) if n == 0 or line != banners[n - 1])


def deploy(layout: Layout, extra: Path, *flags: str, profile: int = 0, log: Path | None = None,
           timeout: float = 1800) -> Run:
    """One ansible-playbook run of the layout; exits the benchmark when it fails."""
    argv = [shutil.which("ansible-playbook") or "ansible-playbook", "-i", str(layout.inventory), *layout.connection,
            str(layout.playbook), "-e", f"@{MOLECULE / 'shared' / 'vars' / 'overlay.yml'}", "-e", f"@{extra}", *flags]
    env = dict(os.environ, **CONVERGE_ENV, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0")
    if profile:
        env.update(ANSIBLE_CALLBACKS_ENABLED="ansible.posix.profile_tasks",
                   PROFILE_TASKS_TASK_OUTPUT_LIMIT=str(profile), PROFILE_TASKS_SORT_ORDER="descending")
    before, runs_before = containers_cpu(layout.containers), module_runs(layout.containers)
    rc, stdout, wall, cpu, peak = run_playbook(argv, env, timeout, log)
    after, runs_after = containers_cpu(layout.containers), module_runs(layout.containers)
    if rc != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({rc}):\n{stdout[-4000:]}")
    tasks = task_count(stdout)
    changed = sum(int(m) for m in re.findall(r"^\S+\s+: ok=\d+\s+changed=(\d+)", stdout, re.M))
    hosts = after - before if before is not None and after is not None else None
    modules = None
    if runs_before is not None and runs_after is not None:
        per_host = {name: runs_after[name] - runs_before[name] for name in layout.containers}
        servers = [n for n in layout.containers if n not in layout.others]
        modules = (max((per_host[n] for n in servers), default=0),
                   max((per_host[n] for n in layout.others), default=0))
    return Run(wall, tasks, changed, cpu, peak, slowest(stdout) if profile else [], hosts, modules)


HEADER = (f"{'run':<44} {'wall s':>7} {'overhead s':>11} {'tasks':>6} {'changed':>8} {'CPU s':>7} {'peak MB':>8} "
          f"{'hosts CPU s':>12} {'modules/host':>13}")


def row(label: str, run: Run, delay: float | None) -> str:
    overhead = f"{run.wall - delay:>11.1f}" if delay is not None else f"{'':>11}"
    hosts = f"{run.hosts_cpu:>12.1f}" if run.hosts_cpu is not None else f"{'-':>12}"
    # Server host / router host, the most of each.
    modules = f"{run.modules[0]:>8} / {run.modules[1]:<2}" if run.modules is not None else f"{'-':>13}"
    return (f"{label:<44} {run.wall:>7.1f} {overhead} {run.tasks:>6} {run.changed:>8} {run.cpu:>7.1f} "
            f"{run.peak_mb:>8.0f} {hosts} {modules}")


def series(layout: Layout, tmp: Path, delay: float, profile: int, log_dir: Path | None,
           timeout: float, prefix: str = "", noops: int = 1) -> list[tuple[str, Run, float | None]]:
    """The four runs of a layout, printed as they end (the no-op re-run ``noops`` times, one after the other)."""
    grace = int(2 * delay) + 30  # the same in every run: only the servers' environment changes
    quick = overlay(tmp / "quick.yml", layout, 1, grace)
    slow = overlay(tmp / "slow.yml", layout, delay, grace)
    rows = []
    again = [(f"{NOOP} {n}", quick, (), None) for n in range(2, noops + 1)]
    for n, (label, extra, flags, wait) in enumerate((
            ("first deploy", quick, (), None),
            (NOOP, quick, (), None),
            *again,
            ("--check --diff (no change)", quick, ("--check", "--diff"), None),
            (f"restart every server, start-up T = {delay:g} s", slow, (), delay)), 1):
        log = log_dir / f"{prefix}run-{n}.log" if log_dir else None
        run = deploy(layout, extra, *flags, profile=profile, log=log, timeout=timeout)
        print(row(label, run, wait), flush=True)
        for line in run.slowest:
            print(f"    {line}", flush=True)
        rows.append((label, run, wait))
    return rows


# ------------------------------------------------------------------------------------------------ the fleet
def fleet_names(size: int) -> tuple[list[str], str]:
    return [f"sgf-{size}-mixed-{i}" for i in range(size - 1)], f"sgf-{size}-router-0"


def podman(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["podman", *args], capture_output=True, text=True, check=check, timeout=300)


def fleet_up(size: int, tmp: Path, timeout: float) -> Layout:
    """N fresh containers booted with systemd from the Molecule host image, as the scenarios' platforms are
    (extensions/molecule/config.yml), an inventory for them, and the scenarios' prepare playbook run on them."""
    image = os.environ["SGLANG_MOLECULE_HOST_IMAGE"]
    mixed, router = fleet_names(size)
    if podman("network", "exists", FLEET_NETWORK, check=False).returncode != 0:
        podman("network", "create", FLEET_NETWORK)
    for name in mixed + [router]:
        podman("run", "-d", "--name", name, "--hostname", name, "--network", FLEET_NETWORK, "--systemd", "always",
               "--ulimit", "nofile=4096:4096", "--ulimit", "nproc=4096:4096", "--security-opt", "unmask=/proc/sys",
               image, "/sbin/init")
    children = {"mixed": {"hosts": {h: {} for h in mixed}}, "router": {"hosts": {router: {}}}}
    # The operator's inventory: no connection; the hosts are reached over ssh through the connection piece the
    # prepare playbook writes into the run's directory (its own inventory, below, reaches them with podman exec).
    inventory, prepared, run_dir = tmp / f"fleet-{size}", tmp / f"prepare-{size}", tmp / f"run-{size}"
    (inventory / "group_vars").mkdir(parents=True)
    (inventory / "hosts.yml").write_text(yaml.safe_dump({"all": {
        "vars": {"ansible_python_interpreter": "/usr/bin/python3"}, "children": children}}), encoding="utf-8")
    (inventory / "group_vars" / "all.yml").write_text(yaml.safe_dump({
        "sglang_model_path": "/data/models/Qwen3-32B-W8A8", "sglang_draft_model_path": "/data/models/Qwen3-32B-Eagle3"}),
        encoding="utf-8")
    prepared.mkdir()
    (prepared / "hosts.yml").write_text(yaml.safe_dump({"all": {
        "vars": {"ansible_connection": "containers.podman.podman", "ansible_python_interpreter": "/usr/bin/python3",
                 "standin_npu_shape": "a2", "molecule_ssh": True},
        "children": children}}), encoding="utf-8")
    env = dict(os.environ, **CONVERGE_ENV, ANSIBLE_NOCOLOR="1", MOLECULE_EPHEMERAL_DIRECTORY=str(run_dir),
               MOLECULE_SCENARIO_NAME=f"fleet-{size}")
    rc, out, *_unused = run_playbook([shutil.which("ansible-playbook") or "ansible-playbook", "-i", str(prepared),
                                      str(MOLECULE / "shared" / "prepare.yml")], env, timeout, None)
    if rc != 0:
        raise SystemExit(f"preparing the {size}-host fleet failed ({rc}):\n{out[-4000:]}")
    return Layout(inventory, ROOT / "playbooks" / f"{FLEET_PROFILE}.yml", ("mixed",), {}, tuple(mixed + [router]),
                  ssh_piece(run_dir), (router,))


def fleet_down(size: int) -> None:
    mixed, router = fleet_names(size)
    podman("rm", "-f", "-t", "0", "--ignore", *mixed, router, check=False)


def fleet(sizes: list[int], delay: float, profile: int, log_dir: Path | None, timeout: float,
          noops: int = 1) -> None:
    """The four runs on fresh fleets of each size, then every figure as a ratio to the first size."""
    results: dict[int, list[tuple[str, Run, float | None]]] = {}
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            fleet_down(size)  # leftovers of an interrupted benchmark
            try:
                layout = fleet_up(size, Path(tmp), timeout)
                print(f"\n{size} hosts ({size - 1} PD-mixed replicas of {FLEET_PROFILE}, 1 router)\n{HEADER}",
                      flush=True)
                results[size] = series(layout, Path(tmp), delay, profile, log_dir, timeout, prefix=f"fleet-{size}-",
                                       noops=noops)
            finally:
                fleet_down(size)
    base = sizes[0]
    print(f"\nratio to {base} hosts: wall (overhead for the restart) / CPU / peak memory")
    for index, (label, _run, wait) in enumerate(results[base]):
        cells = []
        for size in sizes[1:]:
            run, ref = results[size][index][1], results[base][index][1]
            spent = (run.wall - wait) / (ref.wall - wait) if wait is not None else run.wall / ref.wall
            cells.append(f"{size} hosts: {spent:.2f} / {run.cpu / ref.cpu:.2f} / {run.peak_mb / ref.peak_mb:.2f}")
        print(f"{label:<44} " + "; ".join(cells), flush=True)
    # The fleet's decisions are the controller's, whatever the size; what grows with it is each server host's share.
    print(f"\ncontroller CPU per added server host (s, from {base} hosts)")
    for index, (label, _run, _wait) in enumerate(results[base]):
        ref = results[base][index][1]
        cells = [f"{size} hosts: {(results[size][index][1].cpu - ref.cpu) / (size - base):.2f}" for size in sizes[1:]]
        print(f"{label:<44} " + "; ".join(cells), flush=True)
    if noops > 1:
        # One run's CPU varies by a few tenths of a second per host on a shared machine: the no-op's least and median.
        for name, pick in (("least", min), ("median", statistics.median)):
            cpu = {size: pick(run.cpu for label, run, _wait in results[size] if label.startswith(NOOP))
                   for size in sizes}
            cells = [f"{size} hosts: {(cpu[size] - cpu[base]) / (size - base):.2f}" for size in sizes[1:]]
            print(f"{NOOP + f' ({name} of {noops})':<44} " + "; ".join(cells), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=30.0, help="start-up delay T of the restarted servers (s)")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="print the N slowest tasks of each run")
    parser.add_argument("--log-dir", type=Path, help="write each run's ansible-playbook output to run-<n>.log there")
    parser.add_argument("--fabric", type=int, default=0, metavar="N",
                        help="N no-op re-runs with the fabric/weights checks off and N with them on, alternating")
    parser.add_argument("--fleet", metavar="N,N,...",
                        help="fleet sizes (hosts, at least 2 each): fresh PD-mixed fleets made here, e.g. 5,10,20")
    parser.add_argument("--timeout", type=float, default=1800, help="bound of each ansible-playbook run (s)")
    parser.add_argument("--noops", type=int, default=1, metavar="N",
                        help="fleet: N no-op re-runs in a row, and the per-host figure of their least and median CPU")
    args = parser.parse_args()
    if not os.environ.get("SGLANG_MOLECULE_WHEELHOUSE"):
        sys.exit("run through scripts/molecule.sh (MOLECULE_CMD=rollout): it prepares the images and the wheelhouse")
    if args.log_dir:
        args.log_dir.mkdir(parents=True, exist_ok=True)
    if args.fleet:
        sizes = [int(n) for n in args.fleet.split(",")]
        if any(n < 2 for n in sizes):
            sys.exit("--fleet: every size needs at least 2 hosts (a replica and the router)")
        if args.noops < 1:
            sys.exit("--noops: at least 1")
        fleet(sizes, args.delay, args.profile, args.log_dir, args.timeout, args.noops)
        return
    with tempfile.TemporaryDirectory() as tmp:
        print(HEADER, flush=True)
        if args.fabric:
            fabric_cost(Path(tmp), args.fabric, args.profile)
            return
        series(PD32, Path(tmp), args.delay, args.profile, args.log_dir, args.timeout)


def fabric_cost(tmp: Path, rounds: int, profile: int = 0) -> None:
    """No-op re-runs without and with the fabric, NPU health and weights checks, alternating (the machine's load
    falls on both alike). With profile N, the last round's runs each print their N slowest tasks."""
    quick, off = overlay(tmp / "quick.yml", PD32, 1, 30), tmp / "checks-off.yml"
    checks = ("npu_link", "npu_net_health", "npu_ip", "npu_tls", "npu_ping", "npu_health", "weights")
    off.write_text(yaml.safe_dump({"sglang_preflight_checks": {c: "off" for c in checks}}), encoding="utf-8")
    print(row("first deploy", deploy(PD32, quick), None), flush=True)
    runs: dict[str, list[float]] = {"off": [], "on": []}
    for round_ in range(rounds):
        for label, flags in (("off", ("-e", f"@{off}")), ("on", ())):
            run = deploy(PD32, quick, *flags, profile=profile if round_ == rounds - 1 else 0)
            runs[label].append(run.wall)
            print(row("no-op re-run, fabric checks " + label, run, None), flush=True)
            for line in run.slowest:
                print(f"    {line}", flush=True)
    for label, walls in runs.items():
        print(f"fabric checks {label}: min {min(walls):.1f} s, median {statistics.median(walls):.1f} s")
    print(f"added by the checks: {statistics.median(runs['on']) - statistics.median(runs['off']):+.1f} s (medians), "
          f"{min(runs['on']) - min(runs['off']):+.1f} s (minimums)")


if __name__ == "__main__":
    main()
