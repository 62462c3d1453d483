"""Read the documented best practices (the seed documents) and execute their scripts.

The golden tests compare what the collection renders with what the documented bash
scripts would run.  Rather than re-implementing the scripts' rank / array / port logic,
this module runs each script in real bash, once per host of a documented-shaped
inventory, with the side-effecting commands replaced by recorders:

- ``python``/``python3`` record their argv, the exported environment, the sourced
  scripts and the PATH / LD_LIBRARY_PATH prefixes at the moment of the launch;
- ``source``/``unset``/``sysctl``/``tee``/``hostname`` are recorded or answered.

Placeholders of the documents (``your prefill ip1``, ``DIP1``, ``xxx`` ...) are
substituted with the inventory's addresses first, and each profile's recorded
deviations are applied as exact text replacements before execution: a deviation whose
seed text no longer occurs in the document is an error, so the list cannot go stale.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import subprocess
import tempfile
from pathlib import Path
from typing import Iterable

# The documents are not part of the collection: SGLANG_SEEDS_DIR names their directory, else they are
# looked for in shared/seeds beside the checkout (where CI keeps them).
SEEDS_DIR = Path(os.environ.get("SGLANG_SEEDS_DIR") or Path(__file__).resolve().parents[3] / "shared" / "seeds")
# Every document the tests read; all must be present, or the tests that read them are skipped.
DOCUMENTS = ("000_*.txt", "001_*.txt", "002_*.txt")


def missing_reason() -> str | None:
    """Why the documents cannot be read (None when all are there): the skip reason of the golden tests."""
    absent = [pattern for pattern in DOCUMENTS if not any(SEEDS_DIR.glob(pattern))]
    if not absent:
        return None
    return (f"best-practice documents not found ({', '.join(absent)} missing in {SEEDS_DIR}): "
            "set SGLANG_SEEDS_DIR=<directory holding the documents>")


def document(pattern: str) -> Path:
    """The one document matching ``pattern`` (e.g. ``000_*.txt``)."""
    return next(iter(sorted(SEEDS_DIR.glob(pattern))))


TITLE_000 = re.compile(
    r"^((?:Deepseek|Qwen)\S* Atlas 800I (A2|A3)-(\d+)Card (PD Separation|PD Mixed) (\S+) (\d+)ms)#$"
)
TITLE_001 = re.compile(r"^(Qwen3\.5-397B W4A8 8P .* (\d+)ms)$")
REUSE_MARK = re.compile(r"please turn to model deployment", re.IGNORECASE)


@dataclasses.dataclass
class Section:
    title: str
    doc: str
    deploy: str  # bash text of "Model Deployment"
    bench: str  # the benchmark command, continuations joined
    result: str  # the published result block (may be empty)
    meta_line: str = ""

    @property
    def reuses_deployment(self) -> bool:
        return "launch_server" not in self.deploy and bool(REUSE_MARK.search(self.deploy))


def script_parts(deploy: str) -> dict[str, str]:
    """One script, or 'prefill'/'decode' scripts where the document splits them."""
    if "Deploy Prefill Instance" in deploy:
        _unused, rest = deploy.split("Deploy Prefill Instance", 1)
        prefill, decode = rest.split("Deploy Decode Instance", 1)
        return {"prefill": prefill, "decode": decode}
    return {"all": deploy}


def _join_continuations(lines: Iterable[str]) -> str:
    out, cur = [], ""
    for line in lines:
        s = line.rstrip()
        if s.endswith("\\"):
            cur += s[:-1] + " "
            continue
        out.append(cur + s)
        cur = ""
    if cur:
        out.append(cur)
    return "\n".join(out)


def _bench_and_result(text: str) -> tuple[str, str]:
    lines = text.splitlines()
    for idx, line in enumerate(lines):
        if line.lstrip().startswith(("python -m sglang.bench_serving", "python3 -m sglang.bench_serving")):
            end = idx
            while lines[end].rstrip().endswith("\\"):
                end += 1
            cmd = _join_continuations(lines[idx : end + 1])
            return " ".join(cmd.split()), "\n".join(lines[end + 1 :]).strip()
    return "", text.strip()


def load_sections() -> list[Section]:
    sections: list[Section] = []
    for path in sorted(SEEDS_DIR.glob("00[01]_*.txt")):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        doc = path.name.split("_")[0]
        starts = []
        start_at = next(i for i, line in enumerate(lines) if line.strip().startswith("Optimal Configuration") and
                        (line.strip().endswith("#") or doc == "001") and i > 10)
        for i in range(start_at, len(lines)):
            m = (TITLE_000 if doc == "000" else TITLE_001).match(lines[i].strip())
            if m:
                starts.append((i, m.group(1)))
        for n, (i, title) in enumerate(starts):
            end = starts[n + 1][0] if n + 1 < len(starts) else len(lines)
            body = lines[i + 1 : end]
            text_body = "\n".join(body)
            if doc == "000":
                dep = text_body.split("Model Deployment#", 1)[1].split("Benchmark#", 1)
                deploy, bench_part = dep[0], dep[1] if len(dep) > 1 else ""
                meta = ""
            else:
                meta = next((b for b in body if b.startswith("Model:")), "")
                dep = text_body.split("Model Deployment", 1)[1].split("\nBenchmark\n", 1)
                deploy = dep[0].split("Command", 1)[1] if "Command" in dep[0] else dep[0]
                bench_part = dep[1] if len(dep) > 1 else ""
            bench, result = _bench_and_result(bench_part)
            sections.append(Section(title=title, doc=doc, deploy=deploy.strip("\n"), bench=bench,
                                    result=result, meta_line=meta))
    return sections


def section_by_title(title: str) -> Section:
    for s in load_sections():
        if s.title == title:
            return s
    raise KeyError(f"no documented section titled {title!r}")


# --------------------------------------------------------------------------- execution


@dataclasses.dataclass
class Layout:
    """Addresses of a documented-shaped inventory, in inventory order."""

    prefill: list[str]
    decode: list[str]
    mixed: list[str]
    router: str | None
    prefill_nnodes: int = 1
    decode_nnodes: int = 1
    nic: str = "ib0"
    model_path: str = "/models/model"
    draft_model_path: str = "/models/draft"
    init_expert_location: str = "/models/expert_distribution.pt"

    def rank0(self, role: str) -> list[str]:
        hosts = getattr(self, role)
        n = getattr(self, f"{role}_nnodes", 1)
        return hosts[::n]


def substitute_placeholders(text: str, lay: Layout) -> str:
    """Replace the documents' placeholders with the inventory's values."""

    def pick(hosts: list[str], n: int, original: str) -> str:
        return hosts[n] if 0 <= n < len(hosts) else original

    text = re.sub(r"your prefill ip(\d+)", lambda m: pick(lay.prefill, int(m.group(1)) - 1, m.group(0)), text)
    text = re.sub(r"your decode ip(\d+)", lambda m: pick(lay.decode, int(m.group(1)) - 1, m.group(0)), text)
    # Router upstreams: the k-th --prefill / --decode URL names the k-th instance's rank 0.
    for flag, role in (("--prefill", "prefill"), ("--decode", "decode")):
        counter = iter(range(10_000))
        text = re.sub(
            rf"{flag} http://(P_IP|PIP\d*|D_IP|DIP\d*):",
            lambda m, role=role, counter=counter: f"{flag} http://{pick(lay.rank0(role), next(counter), m.group(1))}:",
            text,
        )
    text = re.sub(r"\bPIP(\d+)\b", lambda m: pick(lay.prefill, int(m.group(1)) - 1, m.group(0)), text)
    text = re.sub(r"\bPIP\b", lambda m: pick(lay.prefill, 0, m.group(0)), text)
    text = re.sub(r"\bDIP(\d+)\b", lambda m: pick(lay.decode, int(m.group(1)) - 1, m.group(0)), text)
    text = re.sub(r"\bDIP\b", lambda m: pick(lay.decode, 0, m.group(0)), text)
    text = re.sub(r"'IP(\d+)'", lambda m: "'" + pick(lay.mixed, int(m.group(1)) - 1, m.group(0)) + "'", text)
    text = re.sub(r"MODEL_PATH=(xxx|/path/to/model-weights)\b", f"MODEL_PATH={lay.model_path}", text)
    text = text.replace("--speculative-draft-model-path xxx", f"--speculative-draft-model-path {lay.draft_model_path}")
    text = re.sub(r"IFNAME=(xxx|<network-interface>)", f"IFNAME={lay.nic}", text)
    text = re.sub(r"IFNAMES=\(([^)]*)\)", lambda m: "IFNAMES=(" + m.group(1).replace("xxx", lay.nic) + ")", text)
    # Tokens that recorded deviations use for inventory values the documents hard-code.
    text = text.replace("<model-path>", lay.model_path).replace("<init-expert-location>", lay.init_expert_location)
    return text.replace("<mixed-rank0>", lay.mixed[0] if lay.mixed else "<mixed-rank0>")


def apply_text_fixes(text: str, fixes: list[tuple[str, str]], where: str) -> str:
    for seed, rendered in fixes:
        if seed not in text:
            raise AssertionError(f"{where}: recorded deviation text {seed!r} does not occur in the document")
        text = text.replace(seed, rendered)
    return text


_PRELUDE = r"""
__rec() { printf '%s\n' "$@" >> "$__OUT/$1.log"; }
hostname() { printf '%s \n' "$__HOST_IP"; }
tee() { cat > "$__OUT/governor"; }
sysctl() { shift; printf '%s\n' "$@" >> "$__OUT/sysctl"; }
source() { printf '%s\n' "$1" >> "$__OUT/sources"; }
unset() { printf '%s\n' "$@" >> "$__OUT/unset"; builtin unset "$@"; }
__launch() {
  __N=$((__N + 1)); local d="$__OUT/launch.$__N"; mkdir -p "$d"
  printf '%s\0' "$@" > "$d/argv"; env -0 > "$d/env"
  cp "$__OUT/sources" "$d/sources" 2>/dev/null || : > "$d/sources"
  cp "$__OUT/unset" "$d/unset" 2>/dev/null || : > "$d/unset"
}
python() { __launch "$@"; }
python3() { __launch "$@"; }
__N=0
env -0 > "$__OUT/baseline"
"""

_HARNESS_VARS = {"__OUT", "__HOST_IP", "__N", "_", "SHLVL", "PWD", "OLDPWD", "PATH", "LD_LIBRARY_PATH"}


@dataclasses.dataclass
class Launch:
    module: str
    argv: list[str]  # after "-m MODULE"
    env: dict[str, str]
    unset: list[str]
    sources: list[str]
    path_prepend: list[str]
    ld_library_path_prepend: list[str]


@dataclasses.dataclass
class HostRun:
    launches: list[Launch]
    sysctl: dict[str, str]
    governor: str | None


def _read_env(path: Path) -> dict[str, str]:
    out = {}
    for item in path.read_bytes().split(b"\0"):
        if item and b"=" in item:
            k, v = item.decode().split("=", 1)
            out[k] = v
    return out


def run_script(script: str, host_ip: str) -> HostRun:
    """Run one documented script as host ``host_ip`` would, recording what it launches."""
    with tempfile.TemporaryDirectory(prefix="seedrun-") as tmp:
        out = Path(tmp)
        (out / "script.sh").write_text(_PRELUDE + "\n" + script + "\n", encoding="utf-8")
        env = {"PATH": "/usr/bin:/bin", "HOME": tmp, "__OUT": tmp, "__HOST_IP": host_ip}
        proc = subprocess.run(["bash", "--noprofile", "--norc", str(out / "script.sh")], env=env, cwd=tmp,
                              capture_output=True, text=True, timeout=60, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"seed script failed on {host_ip}: {proc.stderr[-2000:]}")
        baseline = _read_env(out / "baseline")
        launches = []
        for d in sorted(out.glob("launch.*"), key=lambda p: int(p.suffix[1:])):
            argv = (d / "argv").read_bytes().decode().split("\0")[:-1]
            if len(argv) < 2 or argv[0] != "-m":
                raise RuntimeError(f"unexpected python invocation {argv!r}")
            env_now = _read_env(d / "env")
            exported = {k: v for k, v in env_now.items()
                        if k not in _HARNESS_VARS and baseline.get(k) != v}
            base_path = baseline["PATH"]
            path = env_now.get("PATH", "")
            path_pre = [p for p in path[: -len(base_path)].split(":") if p] if path.endswith(base_path) else []
            ld = env_now.get("LD_LIBRARY_PATH", "")
            launches.append(Launch(
                module=argv[1], argv=argv[2:], env=exported,
                unset=[u for u in (d / "unset").read_text().split() if u],
                sources=[s for s in (d / "sources").read_text().splitlines() if s],
                path_prepend=path_pre,
                ld_library_path_prepend=[p for p in ld.split(":") if p],
            ))
        sysctl = {}
        if (out / "sysctl").exists():
            for kv in (out / "sysctl").read_text().split():
                k, v = kv.split("=", 1)
                sysctl[k] = v
        gov = (out / "governor").read_text().strip() if (out / "governor").exists() else None
        return HostRun(launches=launches, sysctl=sysctl, governor=gov)


def bench_argv(command: str) -> list[str]:
    """The benchmark command's argv after ``-m sglang.bench_serving``."""
    argv = shlex.split(command)
    return argv[argv.index("-m") + 2 :]


def flag_groups(argv: list[str]) -> list[tuple[str, list[str]]]:
    """Split an argv into (flag, values) in order: the unit golden tests compare."""
    groups: list[tuple[str, list[str]]] = []
    for tok in argv:
        if tok.startswith("-") and not re.match(r"^-\d", tok):
            groups.append((tok, []))
        elif groups:
            groups[-1][1].append(tok)
        else:
            raise ValueError(f"argv does not start with a flag: {argv!r}")
    return groups


def parse_result_block(text: str) -> dict[str, str]:
    """``Name: value`` pairs of a published result block (numbers kept as text)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        m = re.match(r"^\s*([A-Za-z][A-Za-z0-9 ()./\-]*?):?\s+([0-9]+(?:\.[0-9]+)?|inf|sglang|sqlang)\s*$", line)
        if m and not line.startswith(("=", "-")):
            out.setdefault(m.group(1).strip().rstrip(":"), m.group(2))
    return out
