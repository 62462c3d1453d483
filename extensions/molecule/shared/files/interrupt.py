"""Runs an ansible-playbook command and kills it, with every process it started, at a named task, the way a
Ctrl-C, a lost SSH session or a controller reboot cuts a deployment short. No timer: the kill is placed by
reading the run's own output as it comes.

  python3 interrupt.py step TASK -- ansible-playbook ... --step
      every "Perform task" prompt of --step is answered "y"; at the prompt of TASK (every host has finished the
      task before it, no host has started TASK) the run is killed.
  python3 interrupt.py result TASK -- ansible-playbook ... -f 1
      the run is killed at the first host result of TASK (with one fork, the hosts run the task one at a time:
      that host has done it, the next one may be doing it, the others have not).

SIGKILL of the whole process tree: ansible's workers run in sessions of their own, so the process group alone
would leave them running. This process becomes the subreaper of the run, so that no process of it escapes by
being orphaned, and kills every descendant until none is left. Prints JSON {"killed_at", "output"} (the output's
tail); exits 1 when the run ended, or its bound passed, before TASK.
"""
from __future__ import annotations

import ctypes
import json
import os
import re
import select
import signal
import subprocess
import sys
import time

BOUND_S = 1800          # the whole run, a bound against a hung run (never reached by a working one)
PR_SET_CHILD_SUBREAPER = 36
PROMPT = re.compile(r"Perform task: TASK: (?P<task>.*?) \(N\)o/\(y\)es/\(c\)ontinue: ")


def descendants(root: int) -> list[int]:
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                    # pid (comm) state ppid ...: comm may hold blanks and parentheses, ppid follows the last ')'.
                    parents[int(entry)] = int(handle.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, todo = [], [root]
    while todo:
        parent = todo.pop()
        for pid, ppid in parents.items():
            if ppid == parent:
                found.append(pid)
                todo.append(pid)
    return found


def kill_tree(proc: subprocess.Popen) -> None:
    proc.kill()  # first: it starts no worker any more
    for _unused in range(100):
        pids = descendants(os.getpid())
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        while True:  # reap what died (orphans are ours: subreaper)
            try:
                if os.waitpid(-1, os.WNOHANG) == (0, 0):
                    break
            except ChildProcessError:
                break
        time.sleep(0.1)
    raise SystemExit("interrupt.py: processes of the run survived 100 rounds of SIGKILL")


def main() -> int:
    mode, task, sep, command = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    if mode not in ("step", "result") or sep != "--" or not command:
        raise SystemExit(__doc__)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise SystemExit(f"interrupt.py: prctl(PR_SET_CHILD_SUBREAPER) failed: errno {ctypes.get_errno()}")
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env=dict(os.environ, PYTHONUNBUFFERED="1"))
    output, seen, in_task, killed_at = "", 0, False, None
    deadline = time.monotonic() + BOUND_S
    while killed_at is None and time.monotonic() < deadline:
        ready, _unused, _unused = select.select([proc.stdout], [], [], 5)
        if not ready:
            continue
        chunk = os.read(proc.stdout.fileno(), 65536)
        if not chunk:
            break  # the run ended by itself
        output += chunk.decode("utf-8", "replace")
        if mode == "step":
            for found in PROMPT.finditer(output, seen):
                seen = found.end()
                if found.group("task").endswith(task):
                    killed_at = f"the --step prompt of {found.group('task')}"
                    break
                proc.stdin.write(b"y\n")
                proc.stdin.flush()
        else:
            lines = output[seen:].split("\n")
            for line in lines[:-1]:  # whole lines only
                seen += len(line) + 1
                if line.startswith("TASK ["):
                    in_task = line.split("]", 1)[0].endswith(task)
                elif in_task and re.match(r"(changed|ok): \[", line):
                    killed_at = f"{task}, after {line.strip()}"
                    break
    if killed_at is not None or proc.poll() is None:
        kill_tree(proc)
    proc.wait()
    print(json.dumps({"killed_at": killed_at, "output": output[-20000:]}))
    return 0 if killed_at else 1


if __name__ == "__main__":
    sys.exit(main())
