"""Runs on the router host (loopback only): a request loop through the router while an instance fails and
heals. POSTs /generate every SPACING_S seconds (each bounded by 20 s: a hung instance never answers) until
STOP_FILE exists, then sends FINAL more requests; bounded by TIMEOUT_S in all. Prints JSON:
{"requests": [{"start", "end", "status"}...], "final": [...same...], "stopped": bool}; times are epoch seconds.
    fault_load.py BASE_URL STOP_FILE FINAL SPACING_S TIMEOUT_S"""
import http.client
import json
import os
import sys
import time
import urllib.error
import urllib.request

base, stop_file = sys.argv[1].rstrip("/"), sys.argv[2]
final_n, spacing, deadline = int(sys.argv[3]), float(sys.argv[4]), time.time() + float(sys.argv[5])
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
body = json.dumps({"text": "Hello", "sampling_params": {"max_new_tokens": 4, "temperature": 0}}).encode()


def one():
    req = urllib.request.Request(base + "/generate", method="POST", data=body,
                                 headers={"Content-Type": "application/json"})
    start = time.time()
    try:
        with opener.open(req, timeout=20) as r:
            r.read()
            status = r.status
    except urllib.error.HTTPError as e:
        status = e.code
    except (OSError, http.client.HTTPException) as e:
        # A connection the router or an instance drops mid-answer (IncompleteRead, BadStatusLine) is a
        # failed request like any other: the loop records it and goes on, it never dies of it.
        status = f"error: {type(e).__name__}: {e}"
    return {"start": round(start, 3), "end": round(time.time(), 3), "status": status}


requests, final, stopped = [], [], False
while time.time() < deadline:
    if os.path.exists(stop_file):
        stopped = True
        break
    requests.append(one())
    time.sleep(spacing)
if stopped:
    for _ in range(final_n):
        final.append(one())
        time.sleep(spacing)
print(json.dumps({"requests": requests, "final": final, "stopped": stopped}))
