#!/usr/bin/python3
"""Runs on the router host (loopback only): waits (bounded) for the router's readiness, then sends one
completion and one streamed chat completion through it. Prints JSON with what came back.
    probe.py BASE_URL [READY_PATH] [TIMEOUT_S]"""
import json
import sys
import time
import urllib.error
import urllib.request

base = sys.argv[1].rstrip("/")
ready_path = sys.argv[2] if len(sys.argv) > 2 else "/readiness"
deadline = time.time() + float(sys.argv[3] if len(sys.argv) > 3 else 60)
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
result = {"ready_status": None, "ready_after_s": None}
start = time.time()
while time.time() < deadline:
    try:
        with opener.open(base + ready_path, timeout=5) as r:
            result["ready_status"] = r.status
    except urllib.error.HTTPError as e:
        result["ready_status"] = e.code
    except OSError as e:
        result["ready_status"] = str(e)
    if result["ready_status"] == 200:
        result["ready_after_s"] = round(time.time() - start, 1)
        break
    time.sleep(1)
if result["ready_status"] == 200:
    req = urllib.request.Request(base + "/v1/completions", method="POST", headers={"Content-Type": "application/json"},
                                 data=json.dumps({"model": "default", "prompt": "Hello", "max_tokens": 8}).encode())
    with opener.open(req, timeout=30) as r:
        result["completion"] = json.loads(r.read())
    req = urllib.request.Request(base + "/v1/chat/completions", method="POST",
                                 headers={"Content-Type": "application/json"},
                                 data=json.dumps({"model": "default", "stream": True, "max_tokens": 8,
                                                  "messages": [{"role": "user", "content": "Hello"}]}).encode())
    with opener.open(req, timeout=30) as r:
        body = r.read().decode()
    events = [line[len("data: "):] for line in body.splitlines() if line.startswith("data: ")]
    result["stream"] = {"events": len(events), "last": events[-1] if events else None,
                        "first": json.loads(events[0]) if events and events[0] != "[DONE]" else None,
                        "content_type": r.headers.get("Content-Type")}
print(json.dumps(result))
