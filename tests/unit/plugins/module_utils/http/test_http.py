"""The one HTTP GET of the status modules and the host probe (doctor's rank-0 /health), against loopback servers
the test starts, never through a proxy."""

from __future__ import annotations

import http.server
import socket
import threading
import urllib.error
import urllib.request

import pytest

from ansible_collections.ascend.sglang.plugins.module_utils.collect._host_probe import http_status
from ansible_collections.ascend.sglang.plugins.module_utils.http._http import Answer, http_get


class _Endpoints(http.server.BaseHTTPRequestHandler):
    """/health and /workers answer 200 (the worker list as JSON), anything else 503."""

    def do_GET(self):  # noqa: N802 (http.server's name)
        body = b'{"workers": []}' if self.path == "/workers" else b"busy"
        self.send_response(200 if self.path in ("/health", "/workers") else 503)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = http.server.HTTPServer(("127.0.0.1", 0), _Endpoints)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def hangs_up():
    """Accepts one connection, reads the request and closes without a status line."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)

    def serve():
        conn, _addr = listener.accept()
        with conn:
            conn.recv(4096)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    thread.join(timeout=10)
    listener.close()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_status_and_body_only_when_asked(server):
    assert http_get(f"{server}/workers", timeout=10, read_body=True) == Answer(200, '{"workers": []}', None)
    assert http_get(f"{server}/workers", timeout=10) == Answer(200, None, None)
    answer = http_get(f"{server}/other", timeout=10, read_body=True)
    assert answer == Answer(503, None, None) and answer.label() == "503"


def test_the_host_probe_reports_the_status_of_an_answering_endpoint(server):
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


def test_refused_connection_is_no_answer_with_its_reason():
    answer = http_get(f"http://127.0.0.1:{_closed_port()}/health", timeout=10)
    assert answer.status is None and answer.body is None
    assert answer.error.startswith("URLError: ") and "refused" in answer.error.lower()
    assert answer.label() == f"no answer ({answer.error})"
    result = http_status(f"http://127.0.0.1:{_closed_port()}/health", timeout=10)
    assert result["status"] is None and result["error"]


def test_a_reply_without_status_line_is_no_answer_not_a_traceback(hangs_up):
    answer = http_get(f"{hangs_up}/health", timeout=10)
    assert answer.status is None and answer.error.startswith("RemoteDisconnected")
