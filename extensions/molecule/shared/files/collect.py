#!/usr/bin/python3
"""Runs on a test host: prints JSON {unit: {...}} for every sglang-* unit: systemd state, the main
process' argv and environment (/proc), the stand-in's own record and the requests it logged, when there are.
Container runtime: the unit's main process is the engine's client; the service runs in the container of the
unit's name, whose main process the host sees (/proc/<pid>, its files under /proc/<pid>/root): "container" holds
its image, start time and pid, "proc", "record" and "requests" are the container's."""
import datetime
import glob
import json
import os
import shutil
import subprocess

ENGINE = shutil.which("podman")


def container(name):
    """The running container NAME as the engine reports it, or None (no engine, no such container)."""
    if not ENGINE:
        return None
    got = subprocess.run([ENGINE, "container", "inspect", name], capture_output=True, text=True, check=False)
    if got.returncode != 0:
        return None
    info = json.loads(got.stdout)[0]
    state = info.get("State") or {}
    started = datetime.datetime.fromisoformat(state["StartedAt"].replace("Z", "+00:00")).timestamp()
    return {"name": name, "image": info.get("ImageName"), "image_id": info.get("Image"),
            "running": bool(state.get("Running")), "pid": int(state.get("Pid") or 0), "started": started}


out = {}
for path in sorted(glob.glob("/etc/systemd/system/sglang-*.service")):
    unit = os.path.basename(path)[: -len(".service")]
    show = subprocess.run(["systemctl", "show", "-p", "MainPID,InvocationID,ActiveState,ActiveEnterTimestamp,NRestarts",
                           unit + ".service"], capture_output=True, text=True, check=False).stdout
    info = dict(line.split("=", 1) for line in show.splitlines() if "=" in line)
    item = {"systemd": info, "proc": None, "record": None, "container": container(unit)}
    pid = int(info.get("MainPID") or 0)
    root = ""
    if item["container"] and item["container"]["pid"]:
        pid = item["container"]["pid"]
        root = f"/proc/{pid}/root"
    if pid:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = [a.decode() for a in f.read().split(b"\0")[:-1]]
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = dict(e.decode().split("=", 1) for e in f.read().split(b"\0") if b"=" in e)
            item["proc"] = {"argv": argv, "env": env}
        except OSError:
            pass
    # In a container the stand-in names its record after what its cgroup shows, not the unit: the one record there.
    records = ([p for p in glob.glob(f"{root}/var/lib/sglang-standin/*.json") if not os.path.basename(p).startswith(".")]
               if root else [f"/var/lib/sglang-standin/{unit}.json"])
    try:
        with open(records[0] if len(records) == 1 else "", encoding="utf-8") as f:
            item["record"] = json.load(f)
    except OSError:
        pass
    item["files"] = {}
    for kind, fpath in (("env", f"/etc/sglang/{unit}.env"), ("sh", f"/usr/local/libexec/sglang/{unit}.sh"),
                        ("service", path), ("cann_env.sh", "/etc/sglang/cann_env.sh"),
                        ("watchdog.json", f"/etc/sglang/{unit}.watchdog.json")):
        try:
            with open(fpath, encoding="utf-8") as f:
                item["files"][kind] = f.read()
        except OSError:
            item["files"][kind] = None
    logs = (glob.glob(f"{root}/var/lib/sglang-standin/*.requests.jsonl") if root
            else [f"/var/lib/sglang-standin/{unit}.requests.jsonl"])
    item["requests"] = []
    for log in logs:
        try:
            with open(log, encoding="utf-8") as f:
                item["requests"] += [json.loads(line) for line in f if line.strip()]
        except OSError:
            pass
    out[unit] = item
print(json.dumps(out))
