"""The sglang_wait_healthy module through real ansible-core, against HTTP servers on loopback: one that answers
503 for its first requests and then 200 (a server starting up), one that never answers 200, one that hangs
(accepts and never answers). The module names the unhealthy services with their last status, after at most
`retries` polls, and fails for them only with fail_unhealthy. Nothing here depends on how fast anything runs: the counts asserted are
the servers' own, and the bound is in polls.
"""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from test_playbooks import adhoc

pytestmark = pytest.mark.ansible


class Server:
    """GET /health: 503 for the first `warmup` requests, then 200 (warmup None: always 503)."""

    def __init__(self, warmup: int | None) -> None:
        self.requests = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                outer.requests += 1
                ok = outer.warmup is not None and outer.requests > outer.warmup
                self.send_response(200 if ok else 503)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, fmt: str, *args: object) -> None:
                pass

        self.warmup = warmup
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/health"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def servers():
    made: list[Server] = []

    def make(warmup: int | None) -> Server:
        made.append(Server(warmup))
        return made[-1]

    yield make
    for server in made:
        server.close()


# The options the playbooks always pass (the plan's sglang_health_* settings); a test sets what it is about.
GIVEN = {"readiness": True, "retries": 1, "delay": 0, "timeout": 10}


def run_module(args: dict) -> dict:
    return adhoc("sglang_wait_healthy", {**GIVEN, **args})


def test_waits_for_every_service_and_names_the_unhealthy_ones(servers) -> None:
    starting, broken = servers(3), servers(None)
    # A port that accepts and never answers: the request's own timeout ends each poll.
    hang = socket.socket()
    hang.bind(("127.0.0.1", 0))
    hang.listen(8)
    try:
        result = run_module({"services": [
            {"name": "sglang-prefill-0", "health_url": starting.url},
            {"name": "sglang-decode-0", "health_url": broken.url},
            {"name": "sglang-router-0", "health_url": f"http://127.0.0.1:{hang.getsockname()[1]}/health",
             "ready_url": None}],
            "retries": 6, "delay": 0.1, "timeout": 1})
    finally:
        hang.close()
    assert not result["failed"] and not result["changed"], result
    assert result["unhealthy"] == ["sglang-decode-0", "sglang-router-0"]
    rows = result["services"]
    assert rows["sglang-prefill-0"]["healthy"] and rows["sglang-prefill-0"]["status"] == "200"
    assert rows["sglang-prefill-0"]["waited_s"] is not None
    # Healthy at its 4th request, then never asked again; the broken one was asked exactly `retries` times.
    assert starting.requests == 4
    assert broken.requests == 6
    assert rows["sglang-decode-0"] == {"url": broken.url, "healthy": False, "status": "503", "waited_s": None}
    assert rows["sglang-router-0"]["status"].startswith("no answer")


def test_readiness_url_is_polled_where_asked(servers) -> None:
    health, ready = servers(0), servers(None)
    service = {"name": "sglang-router-0", "health_url": health.url, "ready_url": ready.url}
    result = run_module({"services": [service], "retries": 2, "delay": 0})
    assert result["unhealthy"] == ["sglang-router-0"] and ready.requests == 2 and health.requests == 0
    result = run_module({"services": [service], "readiness": False, "retries": 2, "delay": 0})
    assert result["unhealthy"] == [] and health.requests == 1


def test_fail_unhealthy_fails_naming_them_and_keeps_every_answer(servers) -> None:
    good, broken = servers(0), servers(None)
    services = [{"name": "sglang-prefill-0", "health_url": good.url},
                {"name": "sglang-decode-0", "health_url": broken.url}]
    result = run_module({"services": services, "retries": 2, "delay": 0, "fail_unhealthy": True})
    assert result["failed"] and result["msg"] == "Not healthy in time: sglang-decode-0", result
    assert result["unhealthy"] == ["sglang-decode-0"] and result["services"]["sglang-decode-0"]["status"] == "503"
    assert result["services"]["sglang-prefill-0"]["healthy"]
    # Every one healthy: no failure.
    assert not run_module({"services": services[:1], "retries": 1, "fail_unhealthy": True})["failed"]


@pytest.mark.parametrize("name", ["../x", "-a", "a b", ""])
def test_names_that_are_not_services_are_refused(name) -> None:
    result = run_module({"services": [{"name": name, "health_url": "http://127.0.0.1:1/health"}], "retries": 1})
    assert result["failed"] and "not a service name" in result["msg"]


def test_the_call_that_places_a_hosts_files_looks_once_at_its_services(servers) -> None:
    """sglang_place_files' health look (deploy.yml's gate makes no call on a host where nothing restarts and
    every service was healthy at it): one request per service, no wait, the status of each, read-only."""
    healthy, broken = servers(0), servers(None)
    refused = socket.socket()
    refused.bind(("127.0.0.1", 0))
    port = refused.getsockname()[1]
    refused.close()  # nothing listens there
    result = adhoc("sglang_place_files", {"health_timeout": 10, "health": [
        {"name": "sglang-mixed-i0", "url": healthy.url},
        {"name": "sglang-mixed-i1", "url": broken.url},
        {"name": "sglang-mixed-i2", "url": f"http://127.0.0.1:{port}/health"}]})
    assert not result["failed"] and not result["changed"], result
    assert result["health"]["sglang-mixed-i0"] == {"healthy": True, "status": "200"}
    assert result["health"]["sglang-mixed-i1"] == {"healthy": False, "status": "503"}
    assert not result["health"]["sglang-mixed-i2"]["healthy"]
    assert result["health"]["sglang-mixed-i2"]["status"].startswith("no answer (")
    assert (healthy.requests, broken.requests) == (1, 1)


def test_a_health_look_needs_its_timeout_and_unit_names(servers) -> None:
    up = servers(0)
    missing = adhoc("sglang_place_files", {"health": [{"name": "sglang-mixed-i0", "url": up.url}]})
    assert missing["failed"] and "health_timeout" in missing["msg"], missing
    bad = adhoc("sglang_place_files", {"health_timeout": 5, "health": [{"name": "a b;reboot", "url": up.url}]})
    assert bad["failed"] and "not a unit name" in bad["msg"], bad
    assert up.requests == 0
