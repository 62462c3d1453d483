"""Profile index: the profile tables of the docsite (docs/docsite/rst/profiles.rst: what to run and what to set,
every figure and release; inventory.rst: the packing table), and one playbook per profile.  README.md links to the
profile guide's table rather than repeating it.

  .venv/bin/python scripts/profiles.py table            # print the tables (markdown)
  .venv/bin/python scripts/profiles.py playbooks        # write playbooks/<profile>.yml and the tables
  .venv/bin/python scripts/profiles.py check            # exit 1 if a table or a playbook is stale
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import conftest  # noqa: E402,F401  (puts the collection on sys.path)  # pylint: disable=unused-import

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _packing  # noqa: E402
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import (  # noqa: E402
    FIRST_GENERATION, FROM_INVENTORY, NODE_DEVICES, Profile, _read_yaml, available_profiles, load_profile,
    profiles_dir,
)
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._releases import load_release_tables, tokens  # noqa: E402

TABLE_BEGIN, TABLE_END = ".. profile-table:begin", ".. profile-table:end"
PACKING_BEGIN, PACKING_END = ".. packing-table:begin", ".. packing-table:end"
DOCS = ROOT / "docs" / "docsite" / "rst"
ALIAS_PLAYBOOK = {"deepseek_r1_pd32": "deepseek_r1_pd32"}


def documented() -> list[Profile]:
    out = []
    for pid in available_profiles():
        if _read_yaml(f"{profiles_dir()}/{pid}.yml").get("alias_of"):
            continue
        out.append(load_profile(pid))
    return out


def shape(p: Profile) -> str:
    """Hosts per group as the document lays them out, and the example inventory of that shape."""
    parts = []
    for role in ("prefill", "decode", "mixed"):
        spec = p.roles.get(role)
        if spec:
            per = f" ({spec.documented_instances}x{spec.nnodes}-node)" if spec.nnodes > 1 else ""
            parts.append(f"{role} {spec.nnodes * spec.documented_instances}{per}")
    if p.deploy_mode == "pd_separation":
        parts.append("router 1")
    return ", ".join(parts)


def inventory_of(p: Profile) -> str:
    if p.deploy_mode == "pd_mixed":
        if p.hardware == "A2":
            return "mixed_a2"
        return "mixed_a3_2node" if p.roles["mixed"].nnodes > 1 else "mixed_a3"
    pre, dec = p.roles["prefill"], p.roles["decode"]
    key = (pre.nnodes * pre.documented_instances, pre.nnodes, dec.nnodes * dec.documented_instances, dec.nnodes)
    return {(2, 1, 2, 2): "example", (1, 1, 1, 1): "pd16", (2, 2, 2, 2): "pd_2x2node", (1, 1, 2, 2): "pd24",
            (4, 2, 2, 2): "pd48_2p1d", (4, 1, 2, 2): "pd48_4p1d", (2, 2, 4, 4): "pd48_1p1d",
            (3, 1, 1, 1): "pd32_3p1d"}[key]


def target(p: Profile) -> str:
    """The latency the profile is held to: its TPOT target, else (a configuration measured by its first token)
    its TTFT target, marked as such."""
    ttft = f"TTFT {p.ttft_target_ms:g} ms" if p.ttft_target_ms else ""
    if not p.tpot_target_ms:
        return ttft
    return f"{p.tpot_target_ms:g} ms" + (f" ({ttft})" if ttft else "")


def published(p: Profile) -> str:
    fig = p.published.get("figures") or {}
    summary = p.published.get("summary") or {}
    if p.ttft_target_ms and not p.tpot_target_ms:
        # Held to its first token (output 1 token): the published TTFT is the figure to compare, not the TPOT.
        ttft, tps = fig.get("mean_ttft_ms"), fig.get("output_tps_per_card")
        if ttft is None and tps is None:
            return "not published"
        return f"TTFT {ttft if ttft is not None else '-'} ms / {tps if tps is not None else '-'}"
    # Qwen3.5's summary table lists only the TPOT target: nothing was published for it.
    tpot = fig.get("mean_tpot_ms") or (None if summary.get("tpot_is_target") else summary.get("tpot_ms"))
    tps = fig.get("output_tps_per_card")
    if tpot is None and tps is None:
        return "not published"
    return f"{tpot if tpot is not None else '-'} ms / {tps if tps is not None else '-'}"


def releases(p: Profile) -> str:
    """Target release, then every release the profile renders for (checked by the real parsers)."""
    tables = load_release_tables()
    sgl = tables["sglang"].supported(set().union(set(), *(tokens(p.roles[r].args) for r in p.server_roles)))
    router = tables["sglang_router"].releases
    return (f"**{p.releases.get('sglang')}** ({', '.join(r for r in sgl if r != p.releases.get('sglang'))}) / "
            f"**{p.releases.get('sglang_router')}** ({', '.join(r for r in router if r != p.releases.get('sglang_router'))})")


def retired(p: Profile) -> str:
    """What the profile's cell says after its id when it is retired (a configuration the page changed or dropped):
    still selectable, but not the current configuration, and the id that supersedes it."""
    if not p.retired:
        return ""
    by = p.retired.get("superseded_by")
    return " **retired**" + (f", superseded by `{by}`" if by else "")


def source(p: Profile) -> str:
    """Where the profile comes from: the January documents (their number), the page, commit and section anchor of
    the current pages, or a nightly test's file and commit (a Markdown link; rst() turns it into an RST one); a
    retired profile's reason after it."""
    src = p.source
    if src.get("kind") == "nightly":
        # A nightly test of SGLang (scripts/import_nightly.py): the test file at the commit read.
        url = f"https://github.com/{src['repository']}/blob/{src['commit']}/{src['path']}"
        out = f"[nightly {src['path'].rsplit('/', 1)[-1]}]({url})"
    elif p.generation == FIRST_GENERATION:
        out = f"{p.generation} document {src.get('document')}"
    else:
        url = f"https://github.com/{src['repository']}/blob/{src['commit']}/{src['path']}#{src['anchor']}"
        out = f"[{p.generation} {src['path'].rsplit('/', 1)[-1]}]({url})"
    if p.retired:
        # Still selectable, but no longer what its source documents: say why where an operator picks a profile.
        out += f"; **retired**: {p.retired['reason']}"
    return out


def needs(p: Profile) -> list[str]:
    """The inventory variables a profile's flags and environment read (sglang_model_path, sglang_draft_model_path...):
    the ones the planner requires."""
    used = set().union(*(spec.placeholders() for spec in p.roles.values()))
    return [var for key, var in FROM_INVENTORY.items() if key in used]


def rst(markdown_table: str) -> str:
    """A markdown table of this module as an RST list-table (`code` -> ``code``, [text](url) -> `text <url>`__;
    **bold** stays)."""
    out = ["", ".. list-table::", "   :header-rows: 1", ""]
    for line in markdown_table.splitlines():
        if line.startswith("|---"):
            continue
        cells = [re.sub(r"\[([^\]]+)\]\(([^)]+)\)", r"`\1 <\2>`__", re.sub(r"`([^`]+)`", r"``\1``", c.strip()))
                 for c in line.strip().strip("|").split(" | ")]
        out.append(f"   * - {cells[0]}")
        out += [f"     - {c}" for c in cells[1:]]
    return "\n".join(out) + "\n"


def table() -> str:
    rows = [
        "| Playbook (`playbooks/<id>.yml`) | Model | HW | Cards | Mode | Dataset (in/out) | TPOT (or TTFT) target | "
        "Published TPOT / output tok/s per card | Quant | Hosts (example inventory) | Needs too | "
        "SGLang / router: **target** (also) | Source |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for p in documented():
        ds = p.dataset
        mode = "PD separation" if p.deploy_mode == "pd_separation" else "PD mixed"
        rows.append(
            f"| `{p.id}`{retired(p)} | {p.model} | {p.hardware} | {p.cards} | {mode} | {ds.get('name')} "
            f"({ds.get('input_len')}/{ds.get('output_len')}) | {target(p)} | {published(p)} | "
            f"{p.quantization} | {shape(p)} (`inventories/{inventory_of(p)}`) | {needs_too(p)} | "
            f"{releases(p)} | {source(p)} |")
    return "\n".join(rows)


def needs_too(p: Profile) -> str:
    """The paths besides sglang_model_path the profile reads (a draft model, an expert distribution), or -."""
    return ", ".join(f"`{v}`" for v in needs(p) if v != "sglang_model_path") or "-"


def aliases() -> str:
    """The short names the README and the examples use, each naming the profile it stands for (RST)."""
    lines = []
    for alias in sorted(ALIAS_PLAYBOOK):
        target = _read_yaml(f"{profiles_dir()}/{alias}.yml")["alias_of"]
        lines.append(f"``{alias}`` (``playbooks/{alias}.yml``) is an alias of ``{target}``.")
    return "\n" + "\n".join(lines) + "\n"


def packing_table() -> str:
    """Replicas per host (sglang_instances_per_host: max) of every PD-mixed profile (plugins/plugin_utils/plan/_packing.py)."""
    rows = [
        "| Profile | HW | NPUs of the node | NPUs per replica | Replicas per host (`max`) | Slices (`--base-gpu-id`), ports |",
        "|---|---|---|---|---|---|",
    ]
    for p in documented():
        if p.deploy_mode != "pd_mixed":
            continue
        spec = p.roles["mixed"]
        per = _packing.devices_per_replica(p, spec)
        most = _packing.max_replicas(p)
        if most > 1:
            slices = ", ".join(str(_packing.first_device(p, spec, s)) for s in range(most))
            how = f"{slices}; `--port` {spec.port} + {_packing.PORT_STRIDE} x replica"
        elif spec.nnodes > 1:
            how = f"not packed: an instance spans {spec.nnodes} nodes"
        else:
            how = "not packed: an instance uses the whole node"
        rows.append(f"| `{p.id}`{retired(p)} | {p.hardware} | {NODE_DEVICES[p.hardware]} | {per} | {most} | {how} |")
    return "\n".join(rows)


def playbook_text(pid: str, p: Profile) -> str:
    by = (p.retired or {}).get("superseded_by")
    note = "" if not p.retired else (
        "# Retired: not the current configuration (docs/docsite/rst/profiles.rst says why)\n"
        + (f"# Superseded by playbooks/{by}.yml\n" if by else ""))
    return (
        "---\n"
        f"# {p.title}\n"
        f"{note}"
        f"# Hosts: {shape(p)}; example inventory: inventories/{inventory_of(p)}\n"
        f"#   ansible-playbook -i INVENTORY playbooks/{pid}.yml\n"
        f"- name: Deploy {p.title}\n"
        "  ansible.builtin.import_playbook: deploy.yml\n"
        "  vars:\n"
        f"    sglang_profile: {pid}\n"
    )


def playbooks() -> dict[Path, str]:
    out = {ROOT / "playbooks" / f"{p.id}.yml": playbook_text(p.id, p) for p in documented()}
    for alias in ALIAS_PLAYBOOK:
        out[ROOT / "playbooks" / f"{alias}.yml"] = playbook_text(alias, load_profile(alias))
    return out


def _between(text: str, begin: str, end: str, body: str) -> str:
    head, rest = text.split(begin, 1)
    _unused, tail = rest.split(end, 1)
    return f"{head}{begin}\n{body}\n{end}{tail}"


def tables() -> dict[Path, tuple[str, str, str]]:
    """File -> (begin marker, end marker, table) of every generated table."""
    return {DOCS / "profiles.rst": (TABLE_BEGIN, TABLE_END, rst(table()) + aliases()),
            DOCS / "inventory.rst": (PACKING_BEGIN, PACKING_END, rst(packing_table()))}


def with_table(path: Path, spec: tuple[str, str, str]) -> str:
    """The file's text with its generated table (spec: begin marker, end marker, table) written in."""
    begin, end, body = spec
    return _between(path.read_text(encoding="utf-8"), begin, end, body)


def main(argv: list[str]) -> int:
    cmd = argv[1] if len(argv) > 1 else "table"
    if cmd == "table":
        print(table(), packing_table(), sep="\n\n")
    elif cmd == "playbooks":
        for path, text in playbooks().items():
            path.write_text(text, encoding="utf-8")
        for path, spec in tables().items():
            path.write_text(with_table(path, spec), encoding="utf-8")
    elif cmd == "check":
        stale = [str(p.relative_to(ROOT)) for p, t in playbooks().items()
                 if not p.exists() or p.read_text(encoding="utf-8") != t]
        stale += [f"{p.relative_to(ROOT)} (generated table)" for p, spec in tables().items()
                  if p.read_text(encoding="utf-8") != with_table(p, spec)]
        if stale:
            print("stale: " + ", ".join(stale) + " (run scripts/profiles.py playbooks)")
            return 1
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
