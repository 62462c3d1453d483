# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Run a documented deployment script the way one host of a documented-shaped inventory would.

Pure Python plus bash(1) on the controller; no Ansible import.  Rather than re-implementing the scripts'
arrays, ``hostname -I`` loops, ``$((8998+$i))`` ports and ``expr`` arithmetic, the script runs in real
bash with every side-effecting command replaced by a recorder: ``python``/``python3`` record the argv,
the exported environment, the sourced scripts and the PATH / LD_LIBRARY_PATH prefixes at each launch;
``source``/``unset``/``sysctl``/``tee``/``hostname`` are recorded or answered.  (The golden tests run the
same recorders; this is the importer's copy.)

Before anything runs, every line of the script is checked against the constructs the importer maps
(assignments, exports, arrays, the host-matching loops, CANN ``source`` lines, host tuning, the server,
router and nothing else): any other line is refused with its document line number, so that nothing the
documents do is silently dropped.  The document's placeholders (``your prefill ip1``, ``PIP``, ``xxx``,
``<network-interface>``) are replaced by the sentinel addresses of a ``Layout`` first.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
import subprocess
import tempfile
from pathlib import Path
from typing import Iterable

from ansible_collections.ascend.sglang.plugins.plugin_utils.importer._import_doc import ImportRefusal, Lines
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._contract import SECRET_FLAG_RE

SERVER_MODULE = "sglang.launch_server"
ROUTER_MODULE = "sglang_router.launch_router"
BENCH_MODULE = "sglang.bench_serving"


# --------------------------------------------------------------------------- what a script may contain

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
# Command substitutions the documents use: their own address (hostname -I) and integer arithmetic (expr).
_SUBST_OK = re.compile(r"^(hostname -I\s*\|\s*awk .*|expr [0-9A-Za-z_${}#@\[\]! \\*+/-]+)$")
_LINE_FORMS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((name, re.compile(rx)) for name, rx in (
    ("comment", r"^#.*$"),
    ("part", r"^Deploy (Prefill|Decode) Instance$"),  # the headings script_parts splits on
    ("governor", r"^echo \w+ \| tee /sys/devices/system/cpu/cpu\*/cpufreq/scaling_governor$"),
    ("echo", r"^echo(\s+[^|<>;&]*)?$"),
    ("sysctl", r"^sysctl -w [A-Za-z0-9_./-]+=\S+$"),
    ("unset", rf"^unset( {_NAME})+$"),
    ("source", r"^source \S+$"),
    ("export", rf"^export {_NAME}=.*$"),
    ("assign", rf"^{_NAME}=.*$"),
    ("for", rf"^for {_NAME} in .*;?$"),
    ("do", r"^do$"),
    ("done", r"^done$"),
    ("if", r"^if \[\[? .* \]\]?;?( then)?$"),
    ("then", r"^then$"),
    ("else", r"^else$"),
    ("fi", r"^fi$"),
    ("break", r"^break$"),
    ("launch", rf"^python3? -m ({re.escape(SERVER_MODULE)}|{re.escape(ROUTER_MODULE)})( .*)?$"),
))


def logical_lines(lines: Lines) -> list[tuple[int, str]]:
    """(first document line, text) per command, backslash continuations joined."""
    out: list[tuple[int, str]] = []
    start, cur = None, ""
    for number, raw in lines.numbered():
        line = raw.rstrip()
        if start is None:
            start = number
        if line.endswith("\\"):
            cur += line[:-1] + " "
            continue
        out.append((start, cur + line))
        start, cur = None, ""
    if cur:
        out.append((start or lines.first, cur))
    return out


# A credential written in the clear: a secret flag with a value (the planner's list, e.g. --api-key), or a
# variable named as one (HF_TOKEN, OPENAI_API_KEY, ..._PASSWORD).
_SECRET_VARIABLE = re.compile(r"(?:^|_)(?:API_?KEYS?|TOKEN|PASSWORD|PASSWD|SECRET|SECRET_KEY|ACCESS_KEY|CREDENTIALS?)$",
                              re.IGNORECASE)
_FLAG_VALUE = re.compile(r"(?<![^\s;'\"])(--[A-Za-z0-9][A-Za-z0-9-]*)(?:=|\s+)?([^\s-][^\s;]*)?")
_ASSIGNMENT = re.compile(r"(?<![^\s;'\"])(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(\S*)")


def refuse_credentials(lines: Lines, where: str) -> None:
    """A document is untrusted input and may carry a real key: a secret never goes into a profile (a file every
    reader of the collection sees, rendered into launchers of mode 0755), nor into the importer's own messages.
    Checked before anything else reads the lines, so that no later refusal quotes the line that holds it; this
    refusal names the line and the flag or variable, never the value."""
    physical = lines.numbered()

    def line_of(start: int, needle: str) -> int:
        """The physical line of a logical one (from ``start``, continuations) that holds ``needle``."""
        return next((n for n, text in physical if n >= start and needle in text), start)

    for start, line in logical_lines(lines):
        for match in _FLAG_VALUE.finditer(line):
            flag, value = match.groups()
            if value and SECRET_FLAG_RE.fullmatch(flag.lower()):
                raise ImportRefusal(
                    f"{where} line {line_of(start, flag)}: {flag} is given a value in the clear; a credential never goes into a "
                    f"profile: leave it out of the section (a recorded deviation) and give it to the deployment "
                    f"with sglang_secrets ({{<role>: {{{flag}: ...}}}}, in an Ansible Vault file)")
        for match in _ASSIGNMENT.finditer(line):
            name, value = match.groups()
            if value.strip("'\"") and _SECRET_VARIABLE.search(name):
                raise ImportRefusal(
                    f"{where} line {line_of(start, name + '=')}: {name} is given a value in the clear; a credential never goes into a "
                    "profile: leave it out of the section (a recorded deviation); a secret launch flag goes in "
                    "sglang_secrets, a client's token in the environment of the run that needs it")


def vet_script(lines: Lines, where: str) -> None:
    """Refuse the first line that is none of the constructs the importer maps (a credential first, unquoted)."""
    refuse_credentials(lines, where)
    for number, line in logical_lines(lines):
        text = " ".join(line.split())
        if not text:
            continue
        form = next((name for name, rx in _LINE_FORMS if rx.match(text)), None)
        if form is None:
            raise ImportRefusal(f"{where} line {number}: '{_short(text)}' is not a construct the importer maps "
                                "(assignments, exports, arrays, host-matching loops, source/unset, sysctl, the "
                                "CPU governor, sglang.launch_server and sglang_router.launch_router)")
        _vet_commands(text, form, f"{where} line {number}")


# The current pages' host placeholders: <your prefill ip> (one instance) or <your prefill ipN>; the PD-mixed
# instances over several nodes list <your nodeN ip> (NODE_IPS).
_PAGE_IP = r"<your (prefill|decode|node)(\d*) ip(\d*)>"
_PAGE_ROLE = {"prefill": "prefill", "decode": "decode", "node": "mixed"}
_ARITHMETIC = re.compile(r"\$\(\([^()]*\)\)")
_BACKTICKS = re.compile(r"`([^`]*)`")
_QUOTED = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"")


def _vet_commands(text: str, form: str, where: str) -> None:
    """The script runs in bash: nothing in a line may run a command the recorders do not stand in for. Only
    the documents' own command substitutions (hostname -I, expr) are kept; no redirection, pipe or list."""
    rest = _ARITHMETIC.sub("0", text)
    for body in _BACKTICKS.findall(rest):
        if form not in ("export", "assign") or not _SUBST_OK.match(body.strip()):
            raise ImportRefusal(f"{where}: command substitution '{_short(body.strip())}' is not one the importer "
                                "maps (hostname -I or expr, assigned to a variable)")
    rest = _BACKTICKS.sub("0", rest)
    for match in re.finditer(r"\$\(", rest):
        depth, end = 0, match.start() + 1
        for end in range(match.start() + 1, len(rest)):
            depth += {"(": 1, ")": -1}.get(rest[end], 0)
            if depth == 0:
                break
        body = rest[match.start() + 2:end].strip()
        if form not in ("export", "assign") or not _SUBST_OK.match(body):
            raise ImportRefusal(f"{where}: command substitution '{_short(body)}' is not one the importer maps "
                                "(hostname -I or expr, assigned to a variable)")
    if form in ("governor", "comment", "part"):
        return
    # "<network-interface>", "<model-path>", "<your prefill ip>": the documents' and the recorded deviations'
    # placeholder words.
    bare = _QUOTED.sub("''", re.sub(rf"\$\([^()]*\)|<[a-z][a-z0-9-]*>|{_PAGE_IP}", "0", rest))
    if form == "if":
        bare = re.sub(r"\|\||&&", " ", re.sub(r";( then)?$", "", bare))
    elif form == "for":
        bare = re.sub(r";$", "", bare)
    if re.search(r"[;&|<>]", bare):
        raise ImportRefusal(f"{where}: '{_short(text)}' redirects, pipes or chains commands, which the importer "
                            "does not map")


def _short(text: str, size: int = 120) -> str:
    return text if len(text) <= size else text[:size - 3] + "..."


# --------------------------------------------------------------------------- placeholders -> sentinel addresses


@dataclasses.dataclass
class Layout:
    """Sentinel addresses of a documented-shaped inventory, in inventory order."""

    prefill: list[str]
    decode: list[str]
    mixed: list[str]
    router: str | None
    prefill_nnodes: int = 1
    decode_nnodes: int = 1
    mixed_nnodes: int = 1
    nic: str = "ib0"
    model_path: str = "/models/model"
    draft_model_path: str = "/models/draft"
    init_expert_location: str = "/models/expert_distribution.pt"

    def rank0(self, role: str) -> list[str]:
        hosts = getattr(self, role)
        return hosts[::getattr(self, f"{role}_nnodes", 1)]

    def inventory_values(self) -> dict[str, str]:
        """Placeholder name -> sentinel value of what the inventory supplies."""
        return {"model_path": self.model_path, "draft_model_path": self.draft_model_path,
                "init_expert_location": self.init_expert_location}


# Tokens that recorded deviations use for values the planner computes or the inventory gives (below).
DEVIATION_TOKENS = ("<model-path>", "<init-expert-location>", "<mixed-rank0>")


def substitute_placeholders(text: str, lay: Layout) -> str:
    """Replace the documents' placeholders with the layout's sentinel values."""

    def pick(hosts: list[str], n: int, original: str) -> str:
        return hosts[n] if 0 <= n < len(hosts) else original

    text = re.sub(_PAGE_IP,
                  lambda m: pick(getattr(lay, _PAGE_ROLE[m.group(1)]), int(m.group(2) or m.group(3) or 1) - 1,
                                 m.group(0)), text)
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
    # The draft model's placeholder path is the inventory's draft model path, as --speculative-draft-model-path xxx
    # is below (pages assign DRAFT_MODEL_PATH=/path/to/draft-model-weights and pass $DRAFT_MODEL_PATH).
    text = re.sub(r"\bDRAFT_MODEL_PATH=(xxx|/path/to/draft-model-weights)\b", f"DRAFT_MODEL_PATH={lay.draft_model_path}",
                  text)
    text = re.sub(r"\bMODEL_PATH=(xxx|/path/to/model-weights)\b", f"MODEL_PATH={lay.model_path}", text)
    if re.search(r"\$\{?MODEL_PATH\b", text) and not re.search(r"^\s*(export\s+)?MODEL_PATH=", text, re.MULTILINE):
        # Pages that leave $MODEL_PATH to the operator without assigning it.
        text = f"MODEL_PATH={lay.model_path}\n" + text
    text = text.replace("--speculative-draft-model-path xxx", f"--speculative-draft-model-path {lay.draft_model_path}")
    text = re.sub(r"IFNAME=(xxx|<network-interface>)", f"IFNAME={lay.nic}", text)
    text = re.sub(r"IFNAMES=\(([^)]*)\)", lambda m: "IFNAMES=(" + m.group(1).replace("xxx", lay.nic) + ")", text)
    # Tokens that recorded deviations use for inventory values the documents hard-code.
    text = text.replace("<model-path>", lay.model_path).replace("<init-expert-location>", lay.init_expert_location)
    return text.replace("<mixed-rank0>", lay.mixed[0] if lay.mixed else "<mixed-rank0>")


def apply_text_fixes(text: str, fixes: Iterable[tuple[str, str]], where: str) -> str:
    """Apply recorded deviations (seed text -> rendered text); a seed text the document lacks is refused."""
    for seed, rendered in fixes:
        if seed not in text:
            raise ImportRefusal(f"{where}: recorded deviation text {seed!r} does not occur in the document")
        text = text.replace(seed, rendered)
    return text


def script_parts(deploy: str) -> dict[str, str]:
    """One script, or 'prefill'/'decode' scripts where the document splits them."""
    if "Deploy Prefill Instance" in deploy and "Deploy Decode Instance" in deploy:
        _unused, rest = deploy.split("Deploy Prefill Instance", 1)
        prefill, decode = rest.split("Deploy Decode Instance", 1)
        return {"prefill": prefill, "decode": decode}
    return {"all": deploy}


# --------------------------------------------------------------------------- running with recorders

_PRELUDE = r"""
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

    def of(self, module: str) -> list[Launch]:
        return [launch for launch in self.launches if launch.module == module]


def _read_env(path: Path) -> dict[str, str]:
    out = {}
    for item in path.read_bytes().split(b"\0"):
        if item and b"=" in item:
            key, value = item.decode().split("=", 1)
            out[key] = value
    return out


# script.sh is the prelude, an empty line, then the script: bash's "line N" minus this is the script's line.
_PRELUDE_LINES = (_PRELUDE + "\n").count("\n")


def _bash_failure(stderr: str, script: str) -> str:
    """bash's message with its line of the temporary script.sh replaced by the document's text of that line (the
    script is the document's after placeholders and recorded fixes, so the text, not a number, finds it)."""
    lines = script.splitlines()

    def quoted(match: re.Match) -> str:
        number = int(match.group(1)) - _PRELUDE_LINES
        if 1 <= number <= len(lines):
            return f"at the line '{_short(lines[number - 1].strip())}'"
        return match.group(0)

    return re.sub(r"\S*script\.sh: line (\d+)", quoted, stderr.strip())


def run_script(script: str, host_ip: str, where: str) -> HostRun:
    """Run one (vetted, substituted) script as host ``host_ip`` would, recording what it launches."""
    with tempfile.TemporaryDirectory(prefix="sglang-import-") as tmp:
        out = Path(tmp)
        (out / "script.sh").write_text(_PRELUDE + "\n" + script + "\n", encoding="utf-8")
        env = {"PATH": "/usr/bin:/bin", "HOME": tmp, "__OUT": tmp, "__HOST_IP": host_ip}
        proc = subprocess.run(["bash", "--noprofile", "--norc", str(out / "script.sh")], env=env, cwd=tmp,
                              capture_output=True, text=True, timeout=60, check=False)
        # bash goes on after a failed line and the recorders print nothing: any message is a failure.
        if proc.returncode != 0 or proc.stderr.strip():
            raise ImportRefusal(f"{where}: the deployment script fails on host {host_ip}: "
                                f"{_bash_failure(proc.stderr, script)[-600:]}")
        baseline = _read_env(out / "baseline")
        launches = []
        for d in sorted(out.glob("launch.*"), key=lambda p: int(p.suffix[1:])):
            argv = (d / "argv").read_bytes().decode().split("\0")[:-1]
            if len(argv) < 2 or argv[0] != "-m":
                raise ImportRefusal(f"{where}: the script runs python {' '.join(argv)[:80]!r}, not a module")
            env_now = _read_env(d / "env")
            exported = {k: v for k, v in env_now.items() if k not in _HARNESS_VARS and baseline.get(k) != v}
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
            for pair in (out / "sysctl").read_text().split():
                key, value = pair.split("=", 1)
                sysctl[key] = value
        governor = (out / "governor").read_text().strip() if (out / "governor").exists() else None
        return HostRun(launches=launches, sysctl=sysctl, governor=governor)


def refuse_second_command(command: str, where: str) -> None:
    """A benchmark block is one sglang.bench_serving command: anything a shell would run besides it (after ';',
    '&&', '|', a redirection, a substitution) would otherwise be read as its arguments."""
    # The tokens the collection's own recorded deviations write are no shell syntax.
    for token in DEVIATION_TOKENS:
        command = command.replace(token, "token")
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError as exc:
        raise ImportRefusal(f"{where}: the benchmark command does not parse as one shell command ({exc})") from None
    operators = [t for t in tokens if t and set(t) <= set(";&|<>()")]
    substitutions = [s for s in ("$(", "`") if s in command]
    if operators or substitutions:
        shown = (substitutions or operators)[0]
        raise ImportRefusal(f"{where}: the benchmark block holds more than the sglang.bench_serving command ('{shown}' "
                            "runs or feeds another command): one command per benchmark")


def bench_argv(command: str) -> list[str]:
    """The benchmark command's argv after ``-m sglang.bench_serving``."""
    argv = shlex.split(command)
    return argv[argv.index("-m") + 2:]


def flag_groups(argv: list[str]) -> list[tuple[str, list[str]]]:
    """An argv as (flag, values) in order; ``--flag=value`` is ``--flag value``, as argparse reads it (the newer
    pages write ``--cuda-graph-backend-prefill=disabled``)."""
    groups: list[tuple[str, list[str]]] = []
    for token in argv:
        if token.startswith("--") and "=" in token:
            flag, _sep, value = token.partition("=")
            groups.append((flag, [value]))
        elif token.startswith("-") and not re.match(r"^-\d", token):
            groups.append((token, []))
        elif groups:
            groups[-1][1].append(token)
        else:
            raise ImportRefusal(f"argv does not start with a flag: {' '.join(argv)[:80]!r}")
    return groups
