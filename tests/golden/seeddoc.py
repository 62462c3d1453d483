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

The recorders, the placeholder substitution and the text fixes are the importer's own
(plugins/plugin_utils/importer/_import_script.py): the golden tests read a script as the importer does.
"""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path
from typing import Iterable

from ansible_collections.ascend.sglang.plugins.plugin_utils.importer import _import_script
from ansible_collections.ascend.sglang.plugins.plugin_utils.importer._import_script import HostRun

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


def apply_text_fixes(text: str, fixes: list[tuple[str, str]], where: str) -> str:
    return _import_script.apply_text_fixes(text, fixes, where)


def run_script(script: str, host_ip: str) -> HostRun:
    """Run one documented script as host ``host_ip`` would, recording what it launches: the importer's own
    recorders (plugins/plugin_utils/importer/_import_script.py), so that the golden tests and the importer read a script
    the same way."""
    return _import_script.run_script(script, host_ip, f"seed script on {host_ip}")


def parse_result_block(text: str) -> dict[str, str]:
    """``Name: value`` pairs of a published result block (numbers kept as text)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        m = re.match(r"^\s*([A-Za-z][A-Za-z0-9 ()./\-]*?):?\s+([0-9]+(?:\.[0-9]+)?|inf|sglang|sqlang)\s*$", line)
        if m and not line.startswith(("=", "-")):
            out.setdefault(m.group(1).strip().rstrip(":"), m.group(2))
    return out
