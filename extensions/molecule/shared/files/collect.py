#!/usr/bin/python3
"""Runs on a test host: prints JSON {unit: {...}} for every sglang-* unit: systemd state, the main
process' argv and environment (/proc), the stand-in's own record and the requests it logged, when there are."""
import glob
import json
import os
import subprocess

out = {}
for path in sorted(glob.glob("/etc/systemd/system/sglang-*.service")):
    unit = os.path.basename(path)[: -len(".service")]
    show = subprocess.run(["systemctl", "show", "-p", "MainPID,InvocationID,ActiveState,ActiveEnterTimestamp,NRestarts",
                           unit + ".service"], capture_output=True, text=True, check=False).stdout
    info = dict(line.split("=", 1) for line in show.splitlines() if "=" in line)
    item = {"systemd": info, "proc": None, "record": None}
    pid = int(info.get("MainPID") or 0)
    if pid:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = [a.decode() for a in f.read().split(b"\0")[:-1]]
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = dict(e.decode().split("=", 1) for e in f.read().split(b"\0") if b"=" in e)
            item["proc"] = {"argv": argv, "env": env}
        except OSError:
            pass
    try:
        with open(f"/var/lib/sglang-standin/{unit}.json", encoding="utf-8") as f:
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
    try:
        with open(f"/var/lib/sglang-standin/{unit}.requests.jsonl", encoding="utf-8") as f:
            item["requests"] = [json.loads(line) for line in f if line.strip()]
    except OSError:
        item["requests"] = []
    out[unit] = item
print(json.dumps(out))
