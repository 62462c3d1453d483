"""A stand-in of the Kubernetes API server's pod list and watch, on loopback, for the router's service discovery
(tests only: no cluster runs here).

What it serves is what the API server answers a ServiceAccount whose Role allows ``list`` and ``watch`` on the pods of
one namespace, in the documented format:
- Kubernetes API concepts, "Efficient detection of changes"
  (https://kubernetes.io/docs/reference/using-api/api-concepts/#efficient-detection-of-changes): a list
  (``GET /api/v1/namespaces/<ns>/pods``) answers a ``PodList`` whose ``metadata.resourceVersion`` is the collection's;
  a watch (``?watch=true&resourceVersion=<rv>``) streams, as one chunked response, one JSON object a line,
  ``{"type": "ADDED" | "MODIFIED" | "DELETED", "object": <Pod>}``, every change after ``rv``, each object with its
  own ``metadata.resourceVersion``, and ends after ``timeoutSeconds``; a graceful deletion is first a ``MODIFIED``
  event with ``metadata.deletionTimestamp`` set, then ``DELETED`` once the pod is gone ("Pod termination",
  https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-termination).
- What the router's client sends (kube-rs, kube-runtime ``watcher`` with its default config, as
  sgl-router/src/service_discovery.rs uses it; seen on the wire from sglang-router 0.3.0): ``GET
  .../pods?&limit=500``, then ``GET .../pods?&watch=true&timeoutSeconds=290&allowWatchBookmarks=true&
  resourceVersion=<rv>``, with ``Authorization: Bearer <token>`` from the kubeconfig's tokenFile. It sends no
  labelSelector: the router filters the pods itself.
- Anything else (another namespace, another resource, another verb) is answered 403 with a ``Status``, and a
  request without the token 401, as the API server answers them (the Role grants nothing more).

Bounded: a watch ends after its timeoutSeconds (at most WATCH_MAX_SECONDS) or when the server stops.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

WATCH_MAX_SECONDS = 290


def _status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "code": code}


class PodApi:
    """The pods of one namespace, their changes as watch events, and the requests seen."""

    def __init__(self, namespace: str, token: str) -> None:
        self.namespace = namespace
        self.token = token
        self.pods: dict[str, dict[str, Any]] = {}
        self.events: list[tuple[int, str, dict[str, Any]]] = []  # (resourceVersion, type, pod)
        self.version = 100
        self.requests: list[tuple[str, str, int]] = []  # (method, path with query, status)
        self.changed = threading.Condition()
        self.stopping = False
        self._server: ThreadingHTTPServer | None = None

    # ---- changes made by the test -------------------------------------------------------------------------------
    def _record(self, kind: str, pod: dict[str, Any]) -> None:
        with self.changed:
            self.version += 1
            pod = json.loads(json.dumps(pod))
            pod["metadata"]["resourceVersion"] = str(self.version)
            if kind == "DELETED":
                self.pods.pop(pod["metadata"]["name"], None)
            else:
                self.pods[pod["metadata"]["name"]] = pod
            self.events.append((self.version, kind, pod))
            self.changed.notify_all()

    def add(self, pod: dict[str, Any]) -> None:
        """A pod that is scheduled, started and ready (the router adds only Running and Ready pods)."""
        self._record("ADDED", pod)

    def touch(self, name: str) -> None:
        """A change of a running pod that is no new state (an annotation set): a MODIFIED event."""
        pod = json.loads(json.dumps(self.pods[name]))
        annotations = pod["metadata"].setdefault("annotations", {})
        annotations["test/touched"] = str(int(annotations.get("test/touched", "0")) + 1)
        self._record("MODIFIED", pod)

    def delete(self, name: str) -> None:
        """A graceful deletion: deletionTimestamp set (MODIFIED), then the pod gone (DELETED)."""
        pod = json.loads(json.dumps(self.pods[name]))
        pod["metadata"]["deletionTimestamp"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        pod["metadata"]["deletionGracePeriodSeconds"] = 30
        self._record("MODIFIED", pod)
        self._record("DELETED", pod)

    # ---- the server ----------------------------------------------------------------------------------------------
    def start(self) -> str:
        api = self

        class Handler(BaseHTTPRequestHandler):
            # Chunked watch responses need HTTP/1.1 (kube-rs's hyper client speaks it).
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _json(self, code: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                api.requests.append((self.command, self.path, code))

            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                url = urllib.parse.urlsplit(self.path)
                query = dict(urllib.parse.parse_qsl(url.query))
                if self.headers.get("Authorization") != f"Bearer {api.token}":
                    return self._json(401, _status(401, "Unauthorized", "Unauthorized"))
                if url.path != f"/api/v1/namespaces/{api.namespace}/pods":
                    return self._json(403, _status(403, "Forbidden", f"GET {url.path} is forbidden"))
                if query.get("watch") in ("true", "1"):
                    return self._watch(int(query.get("resourceVersion") or 0),
                                       min(int(query.get("timeoutSeconds") or WATCH_MAX_SECONDS), WATCH_MAX_SECONDS))
                with api.changed:
                    items = [json.loads(json.dumps(p)) for p in api.pods.values()]
                    version = api.version
                self._json(200, {"kind": "PodList", "apiVersion": "v1",
                                 "metadata": {"resourceVersion": str(version)}, "items": items})

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()

            def _watch(self, since: int, seconds: int) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                api.requests.append((self.command, self.path, 200))
                deadline = time.monotonic() + seconds
                try:
                    while True:
                        with api.changed:
                            pending = [e for e in api.events if e[0] > since]
                            if not pending and not api.stopping:
                                api.changed.wait(timeout=max(0.0, min(1.0, deadline - time.monotonic())))
                                pending = [e for e in api.events if e[0] > since]
                            stop = api.stopping or time.monotonic() >= deadline
                        for version, kind, pod in pending:
                            self._chunk(json.dumps({"type": kind, "object": pod}).encode() + b"\n")
                            since = version
                        if stop:
                            break
                    self.wfile.write(b"0\r\n\r\n")
                except OSError:  # the client went away
                    pass

            def do_POST(self) -> None:  # noqa: N802
                self._json(403, _status(403, "Forbidden", f"POST {self.path} is forbidden"))

            do_PUT = do_PATCH = do_DELETE = do_POST

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def stop(self) -> None:
        with self.changed:
            self.stopping = True
            self.changed.notify_all()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


def kubeconfig(server: str, token_file: str, namespace: str) -> str:
    """A kubeconfig for the stand-in: plain HTTP on loopback, the ServiceAccount token read from a file (kube-rs
    reads ``tokenFile`` as it reads the in-cluster token, sent as a bearer token)."""
    return json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "standin",
        "clusters": [{"name": "standin", "cluster": {"server": server}}],
        "users": [{"name": "router", "user": {"tokenFile": token_file}}],
        "contexts": [{"name": "standin", "context": {"cluster": "standin", "user": "router", "namespace": namespace}}],
    })


def running_pod(template: dict[str, Any], name: str, namespace: str, ip: str) -> dict[str, Any]:
    """The Pod a workload makes of a pod template, as the API server shows it once it runs and is ready."""
    metadata = json.loads(json.dumps(template.get("metadata") or {}))
    metadata.update(name=name, namespace=namespace, uid=f"uid-{name}")
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": json.loads(json.dumps(template["spec"])),
            "status": {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}],
                       "conditions": [{"type": "Ready", "status": "True"},
                                      {"type": "ContainersReady", "status": "True"}]}}
