"""What several tests share: free loopback ports, SGLang's default histogram buckets, the real promtool, and
stopping the processes a test started."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess

import pytest

# The default buckets of TokenizerMetricsCollector (python/sglang/srt/metrics/collector.py, v0.5.6.post2): what the
# stand-in serves and what the generated rules' quantiles interpolate between.
BUCKETS = {
    "sglang:time_to_first_token_seconds": [0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400],
    "sglang:inter_token_latency_seconds": [0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035,
                                           0.040, 0.060, 0.080, 0.100, 0.200, 0.400, 0.600, 0.800, 1.000, 2.000,
                                           4.000, 6.000, 8.000],
    "sglang:e2e_request_latency_seconds": [0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400,
                                           600, 1200, 1800, 2400],
}


def free_ports(count: int) -> list[int]:
    # All sockets stay bound until every port is known, so the ports differ from each other.
    socks = [socket.socket() for unused in range(count)]
    try:
        for sock in socks:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in socks]
    finally:
        for sock in socks:
            sock.close()


def stop_processes(procs) -> None:
    """Terminates every process a test started, then waits for each (killed when it does not end in 10 s)."""
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def promtool() -> str:
    """The real promtool the Prometheus files are checked with: a skip where it is not installed, a failure where CI
    requires it (SGLANG_PROMTOOL_REQUIRED=1)."""
    path = shutil.which("promtool")
    if path is None:
        if os.environ.get("SGLANG_PROMTOOL_REQUIRED") == "1":
            pytest.fail("promtool is required here (SGLANG_PROMTOOL_REQUIRED=1) but not installed")
        pytest.skip("promtool not installed (tests/validation/setup_promtool.sh; Debian: apt-get install prometheus)")
    return path
