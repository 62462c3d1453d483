# Copyright: ascend.sglang contributors
# Apache License 2.0
"""What a host gives to a failure bundle (module sglang_gather): journals, unit state, rendered files, npu-smi,
the NPU driver's kernel lines and the server stack, each bounded, with every secret taken out on the host.

Private to the collection. Runs on the managed host. Nothing leaves the host before it went through
``Redactor``: the values of the deployment's secrets (sglang_secrets, passed in, never logged), the values of
secret-like environment names in the env files, and user:password in URLs, wherever they appear (SGLang prints
its server_args, --api-key included, at start-up). The ``.secrets`` files are never read.
"""

from __future__ import annotations

import os
import re
from typing import Any, Callable, Mapping, Sequence

REDACTED = "<redacted>"
# Environment names whose values are secrets (HF_TOKEN, AWS_SECRET_ACCESS_KEY, SGLANG_API_KEY, a password, ...).
SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|PRIVATE)", re.IGNORECASE)
_URL_CREDENTIALS = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/@\s:]+:[^/@\s]+@")
# An env file line (the collection's own format: NAME=value or NAME="value", comments and blanks).
_ENV_LINE = re.compile(r"^(\s*(?:export\s+)?)([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
# journalctl --since values taken from an inventory: an epoch (@N), a date/time, or a word journalctl knows.
SINCE = re.compile(r"^(@[0-9]{1,12}|[0-9]{4}-[0-9]{2}-[0-9]{2}([ T][0-9]{2}:[0-9]{2}(:[0-9]{2})?)?|today|yesterday)\Z")
# Kernel lines of the NPU driver (davinci devices, device manager, hccn, tsdrv, the driver's own prefixes).
DRIVER_LINE = re.compile(r"davinci|devdrv|devmm|tsdrv|hccn|hdc|dcmi|ascend|npu|drv_|svm|dbl|esched|trs",
                         re.IGNORECASE)
# Smallest secret value taken out by value: shorter ones ("1", "on") would blank out unrelated text.
MIN_SECRET_LEN = 4

Runner = Callable[[Sequence[str], float], "tuple[int, str, str]"]


class Redactor:
    """Takes secret values out of every text that leaves the host."""

    def __init__(self, values: Sequence[str] = ()) -> None:
        self._values: set[str] = set()
        for value in values:
            self.add(value)

    def add(self, value: Any) -> None:
        text = str(value or "").strip().strip("'\"")
        if len(text) >= MIN_SECRET_LEN:
            self._values.add(text)

    def __call__(self, text: str) -> str:
        # Longest first: a secret that contains another is taken out whole.
        for value in sorted(self._values, key=len, reverse=True):
            text = text.replace(value, REDACTED)
        return _URL_CREDENTIALS.sub(lambda m: m.group("scheme") + REDACTED + "@", text)


def env_secrets(text: str) -> list[str]:
    """Values of secret-like names in an env file."""
    values = []
    for line in text.splitlines():
        found = _ENV_LINE.match(line)
        if found and SECRET_NAME.search(found.group(2)):
            values.append(found.group(3))
    return values


def redact_env(text: str, redactor: Redactor) -> str:
    """An env file with the values of secret-like names replaced, then every known secret value taken out."""
    lines = []
    for line in text.splitlines():
        found = _ENV_LINE.match(line)
        if found and SECRET_NAME.search(found.group(2)):
            line = f"{found.group(1)}{found.group(2)}={REDACTED}"
        lines.append(line)
    return redactor("\n".join(lines) + ("\n" if text.endswith("\n") else ""))


def tail_bytes(text: str, limit: int) -> "tuple[str, bool]":
    """The last `limit` bytes of text, cut at a line start; True when something was cut."""
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return text, False
    data = data[-limit:]
    cut = data.find(b"\n")
    return data[cut + 1:].decode("utf-8", "replace") if cut >= 0 else data.decode("utf-8", "replace"), True


class Bundle:
    """One host's part: files by relative path, and the index of what was collected and what failed, and why."""

    def __init__(self, redactor: Redactor) -> None:
        self.redact = redactor
        self.files: dict[str, str] = {}
        self.collected: list[dict[str, Any]] = []
        self.failed: list[dict[str, str]] = []

    def put(self, rel: str, text: str, what: str, **extra: Any) -> None:
        self.files[rel] = self.redact(text)
        self.collected.append(dict({"file": rel, "what": what}, **extra))

    def fail(self, what: str, reason: str) -> None:
        self.failed.append({"what": what, "reason": self.redact(reason.strip())[:500]})

    def index(self, **extra: Any) -> dict[str, Any]:
        return dict({"reachable": True, "collected": self.collected, "failed": self.failed}, **extra)


def _command(bundle: Bundle, run: Runner, argv: Sequence[str], rel: str, what: str, timeout: float,
             max_bytes: int) -> str | None:
    rc, out, err = run(argv, timeout)
    if rc != 0 and not out.strip():
        bundle.fail(what, f"{' '.join(argv)}: exit {rc}: {err or out}")
        return None
    text, cut = tail_bytes(out, max_bytes)
    bundle.put(rel, text, what, command=" ".join(argv), truncated=cut, **({"exit": rc} if rc else {}))
    return text


def collect(params: Mapping[str, Any], run: Runner, read: Callable[[str], str], which: Callable[[str], "str | None"],
            since: str) -> Bundle:
    """Everything this host gives to the bundle. params: units, files, secrets, pythons, npu_smi and the caps
    (module sglang_gather's options); run/read/which: the host's commands and files (injected for tests)."""
    redactor = Redactor(params.get("secrets") or ())
    files = params.get("files") or []
    texts: dict[str, str] = {}
    bundle = Bundle(redactor)
    for entry in files:
        try:
            texts[entry["path"]] = read(entry["path"])
        except OSError as exc:
            bundle.fail(f"file {entry['path']}", exc.strerror or str(exc))
            continue
        if entry.get("sensitive"):
            for value in env_secrets(texts[entry["path"]]):
                redactor.add(value)
    for entry in files:
        path = entry["path"]
        if path not in texts:
            continue
        text = redact_env(texts[path], redactor) if entry.get("sensitive") else texts[path]
        bundle.put(f"files/{os.path.basename(path)}", text, f"{entry.get('kind', 'file')} {path}",
                   redacted=bool(entry.get("sensitive")))
    timeout = float(params.get("timeout") or 30)
    max_bytes = int(params["max_bytes"])
    for unit in params.get("units") or []:
        _command(bundle, run, ["systemctl", "show", "--no-pager", unit], f"systemctl/{unit}.txt",
                 f"systemctl show {unit}", timeout, max_bytes)
        _command(bundle, run, ["journalctl", f"--unit={unit}", f"--since={since}", "--no-pager", "--quiet",
                               "--output=short-iso", f"--lines={int(params['max_lines'])}"],
                 f"journal/{unit}.log", f"journal of {unit}", timeout, max_bytes)
    npu_smi = which(str(params["npu_smi"]))
    if not npu_smi:
        bundle.fail("npu-smi", f"{params['npu_smi']} not found (PATH and the driver's tool dirs)")
    else:
        _command(bundle, run, [npu_smi, "info"], "npu-smi/info.txt", "npu-smi info", timeout, max_bytes)
        listed = _command(bundle, run, [npu_smi, "info", "-l"], "npu-smi/list.txt", "npu-smi info -l", timeout,
                          max_bytes)
        for npu_id in sorted(set(re.findall(r"NPU ID\s*:\s*(\d+)", listed or "")), key=int)[:64]:
            _command(bundle, run, [npu_smi, "info", "-t", "health", "-i", npu_id], f"npu-smi/health-{npu_id}.txt",
                     f"npu-smi health of NPU {npu_id}", timeout, max_bytes)
    _dmesg(bundle, run, int(params["dmesg_lines"]), timeout)
    for python in params.get("pythons") or []:
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", python.strip("/")) or "python"
        _command(bundle, run, [python, "-m", "pip", "list", "--format=freeze", "--disable-pip-version-check"],
                 f"pip/{name}.txt", f"pip list of {python}", timeout, max_bytes)
    return bundle


def _dmesg(bundle: Bundle, run: Runner, lines: int, timeout: float) -> None:
    """The NPU driver's kernel lines, the last `lines` of them (dmesg, else the kernel journal)."""
    for argv in (["dmesg", "--time-format=iso"], ["journalctl", "--dmesg", "--no-pager", "--quiet", "--lines=20000"]):
        rc, out, err = run(argv, min(timeout, 30.0))
        if rc == 0:
            kept = [line for line in out.splitlines() if DRIVER_LINE.search(line)][-lines:]
            bundle.put("dmesg-npu.txt", "\n".join(kept) + ("\n" if kept else ""),
                       f"NPU driver kernel lines ({' '.join(argv)})", lines=len(kept))
            return
        bundle.fail(" ".join(argv), f"exit {rc}: {err or out}")
