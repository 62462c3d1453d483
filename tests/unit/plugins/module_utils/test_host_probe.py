"""Host probes that talk HTTP (doctor's rank-0 /health): a loopback server the test starts, never a proxy."""

from __future__ import annotations

import http.server
import socket
import threading
import urllib.error
import urllib.request

import pytest

from ansible_collections.ascend.sglang.plugins.module_utils._host_probe import http_status


class _Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's name)
        code = 200 if self.path == "/health" else 503
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = http.server.HTTPServer(("127.0.0.1", 0), _Health)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_status_of_an_answering_endpoint(server):
    assert http_status(f"{server}/health", timeout=10) == {"status": 200, "error": None}
    assert http_status(f"{server}/other", timeout=10) == {"status": 503, "error": None}


def test_proxy_variables_are_ignored(server, monkeypatch):
    # A proxy that refuses every connection: a probe sent through it would fail.
    proxy = f"http://127.0.0.1:{_closed_port()}"
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.setenv(name, proxy)
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    # urlopen caches its opener, proxies included, at its first call: start from none.
    monkeypatch.setattr(urllib.request, "_opener", None, raising=False)
    with pytest.raises(urllib.error.URLError):  # the proxy is in effect for what honours it
        urllib.request.urlopen(f"{server}/health", timeout=10)
    assert http_status(f"{server}/health", timeout=10) == {"status": 200, "error": None}


def test_refused_connection_is_an_error_not_an_exception():
    result = http_status(f"http://127.0.0.1:{_closed_port()}/health", timeout=10)
    assert result["status"] is None and result["error"]
