#!/usr/bin/python3
"""Runs on the router host (loopback only): a bounded request loop through the router while an instance is
restarted elsewhere. POSTs /generate every SPACING_S seconds and, between requests, reads the router's
GET /workers to follow WORKER_URL: it stops once it saw that worker leave and come back healthy and at least
MIN_REQUESTS were sent, or at the deadline (TIMEOUT_S), whichever comes first. Prints JSON:
{"codes": {status: count}, "failures": [...], "requests", "saw_removed", "saw_back", "seconds"}.
    load.py BASE_URL WORKER_URL [MIN_REQUESTS] [SPACING_S] [TIMEOUT_S]"""
import http.client
import json
import sys
import time
import urllib.error
import urllib.request

base = sys.argv[1].rstrip("/")
worker_url = sys.argv[2].rstrip("/")
min_requests = int(sys.argv[3]) if len(sys.argv) > 3 else 40
spacing = float(sys.argv[4]) if len(sys.argv) > 4 else 0.25
deadline = time.time() + float(sys.argv[5] if len(sys.argv) > 5 else 150)
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
body = json.dumps({"text": "Hello", "sampling_params": {"max_new_tokens": 4, "temperature": 0}}).encode()
codes, failures = {}, []
sent = 0
saw_removed = saw_back = False
start = time.time()


def worker_state():
    """'absent', 'healthy' or 'unhealthy' for worker_url in GET /workers; None when the router did not answer."""
    try:
        with opener.open(base + "/workers", timeout=5) as r:
            listing = json.loads(r.read())
    except (OSError, ValueError, http.client.HTTPException):
        return None
    for w in listing.get("workers") or []:
        if str(w.get("url", "")).rstrip("/") == worker_url:
            return "healthy" if w.get("is_healthy") else "unhealthy"
    return "absent"


while time.time() < deadline:
    req = urllib.request.Request(base + "/generate", method="POST", data=body,
                                 headers={"Content-Type": "application/json"})
    t0 = time.time()
    try:
        with opener.open(req, timeout=30) as r:
            r.read()
            code = r.status
    except urllib.error.HTTPError as e:
        code = e.code
        failures.append({"at_s": round(t0 - start, 2), "status": e.code, "body": e.read().decode("utf-8", "replace")[:300]})
    except (OSError, http.client.HTTPException) as e:
        # Dropped mid-answer (IncompleteRead, BadStatusLine): a failed request, never the end of the loop.
        code = "error"
        failures.append({"at_s": round(t0 - start, 2), "status": None, "error": f"{type(e).__name__}: {e}"})
    sent += 1
    codes[str(code)] = codes.get(str(code), 0) + 1
    state = worker_state()
    if state == "absent":
        saw_removed = True
    elif state == "healthy" and saw_removed:
        saw_back = True
    if saw_back and sent >= min_requests:
        break
    time.sleep(spacing)
print(json.dumps({"codes": codes, "failures": failures[:20], "requests": sent, "saw_removed": saw_removed,
                  "saw_back": saw_back, "seconds": round(time.time() - start, 1)}))
