# Copyright: ascend.sglang contributors
# Apache License 2.0
"""One configuration section of a best-practice document -> the profile the planner reads.

Pure; no Ansible import.  The section gives the metadata (title or key/value line: model, hardware,
cards, deploy mode, dataset, TPOT), the deployment (``_import_deploy``), the benchmark command and its
published result; the document's summary tables give the quantization and the per-card figure of the row
that belongs to the section.

What the documents get wrong is not guessed: a ``Curation`` holds what a maintainer recorded for the
section (in the collection's profile of the same section): the ``deviations`` (seed text -> rendered
text, applied to the document text before anything is read, as the golden tests do), the corrections of
misprinted figures and the notes on the result block.  Without one, a section that needs a fix is refused
naming the document line.
"""

from __future__ import annotations

import dataclasses
import os
import re
from typing import Any, Mapping

from ansible_collections.ascend.sglang.plugins.module_utils.bench import _bench
from ansible_collections.ascend.sglang.plugins.plugin_utils.report import _bench_verdict
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import Collector, PlanError
from ansible_collections.ascend.sglang.plugins.plugin_utils.importer._import_deploy import (
    BENCH, Deployment, check_flag, import_deployment, scalar)
from ansible_collections.ascend.sglang.plugins.plugin_utils.importer._import_doc import (
    Document, ImportRefusal, Lines, Section, SummaryRow, anchor_of, as_printed, duration_ms, hardware_of, result_lines)
from ansible_collections.ascend.sglang.plugins.plugin_utils.importer._import_script import (
    apply_text_fixes, bench_argv, flag_groups, refuse_credentials, refuse_second_command)
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import (
    available_profiles, parse_profile, profiles_dir)
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._env_catalog import env_deviations
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._releases import load_release_tables, tokens

MODES = {"PD Separation": "pd_separation", "PD Disaggregation": "pd_separation", "PD Mixed": "pd_mixed"}
MODE_WORDS = {"pd_separation": "pd", "pd_mixed": "mixed"}
# The tables round TPOT to two decimals and some print the mean ITL instead of the mean TPOT.
TPOT_MATCH_MS = 0.05
# The most sections one document may hold (the pages hold a few dozen at most) and the most characters (the largest
# document has about 113 000).
MAX_SECTIONS = 200
MAX_CHARACTERS = 4 * 1024 * 1024
# Figure in published.figures -> key of the benchmark parser's metrics.
METRIC_OF = {"mean_ttft_ms": "mean_ttft_ms", "mean_tpot_ms": "mean_tpot_ms", "mean_itl_ms": "mean_itl_ms",
             "output_throughput_tok_s": "output_throughput"}
_TITLE = re.compile(r"^(?P<model>.+?) Atlas 800I (?P<hw>A\d)-(?P<cards>\d+)Card (?P<mode>PD Separation|PD Mixed) "
                    r"(?P<dataset>\S+) (?P<tpot>\d+(?:\.\d+)?)ms$")


@dataclasses.dataclass
class Curation:
    """What a maintainer recorded for one section (taken from the collection's profile of it)."""

    deviations: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)
    corrections: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    recomputed_notes: dict[str, str] = dataclasses.field(default_factory=dict)

    def fixes(self, part: str) -> list[tuple[str, str]]:
        return [(str(d["seed"]), str(d["rendered"])) for d in self.deviations if d.get("part") == part]


def curation_of(profile: Mapping[str, Any] | None) -> Curation:
    """The curation a profile file records (its own deviations, not those inherited from its donor)."""
    profile = profile or {}
    published = profile.get("published") or {}
    return Curation(
        deviations=[dict(d) for d in profile.get("deviations") or []],
        notes=[str(n) for n in published.get("notes") or []],
        corrections=[dict(c) for c in published.get("corrections") or []],
        recomputed_notes={str(k): str(v.get("note")) for k, v in (published.get("recomputed") or {}).items()
                          if isinstance(v, Mapping) and v.get("note")},
    )


@dataclasses.dataclass
class Imported:
    id: str
    section: Section
    data: dict[str, Any]  # the profile, as profiles/<id>.yml holds it
    deployment_from: str | None = None
    stale: list[dict[str, Any]] = dataclasses.field(default_factory=list)  # recorded deviations not applied


@dataclasses.dataclass
class _Meta:
    model: str
    hardware: str
    cards: int
    mode: str
    dataset: str
    tpot: str  # the TPOT target in ms as printed; "" for a configuration held to a TTFT target only
    ttft: str = ""  # the TTFT target in ms ("5s" -> "5000"); "" where the section gives none

    @property
    def target(self) -> str:
        """The id's last part: the TPOT target (``20ms``), else the TTFT target (``ttft5s``)."""
        if self.tpot:
            return f"{self.tpot.replace('.', 'p')}ms"
        ms = float(self.ttft)
        return f"ttft{ms / 1000:g}s".replace(".", "p") if ms >= 1000 else f"ttft{ms:g}ms".replace(".", "p")


def _ms_text(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def section_meta(section: Section, where: str) -> _Meta:
    match = _TITLE.match(section.title)
    if match:
        return _Meta(match["model"], match["hw"], int(match["cards"]), MODES[match["mode"]], match["dataset"],
                     match["tpot"])
    meta = section.meta
    hw = hardware_of(meta.get("Hardware", ""))
    tpot = re.fullmatch(r"(\d+(?:\.\d+)?)\s*ms", meta.get("TPOT", ""))
    # A configuration measured by its time to first token (output 1 token) gives a TTFT target instead.
    ttft = _ms_text(duration_ms(meta.get("TTFT", "")))
    if meta.get("Model") and hw and meta.get("Cards", "").isdigit() and meta.get("Deploy Mode") in MODES \
            and meta.get("Dataset") and (tpot or ttft):
        return _Meta(meta["Model"], hw, int(meta["Cards"]), MODES[meta["Deploy Mode"]], meta["Dataset"],
                     tpot.group(1) if tpot else "", ttft)
    if meta.get("Hardware") and not hw:
        raise ImportRefusal(f"{where} line {section.line}: the section runs on {meta['Hardware']}, whose NPU layout "
                            "the planner does not model (it knows Atlas 800I A2 nodes of 8 NPUs and A3 nodes of 16 "
                            "dies)")
    if section.meta:
        missing = [name for name, ok in (("Model", meta.get("Model")), ("Hardware", hw),
                                         ("Cards", meta.get("Cards", "").isdigit()),
                                         ("Deploy Mode", meta.get("Deploy Mode") in MODES),
                                         ("Dataset", meta.get("Dataset")), ("TPOT or TTFT", tpot or ttft))
                   if not ok]
        given = "; ".join(f"{k}: {v}" for k, v in meta.items() if k not in ("Model", "Hardware", "Cards",
                                                                            "Deploy Mode", "Quantization"))
        raise ImportRefusal(f"{where} line {section.line}: the section gives no {', '.join(missing)} (a profile is "
                            f"planned and benchmarked against a dataset and a TPOT or TTFT target)"
                            + (f"; it gives {given}" if given else ""))
    raise ImportRefusal(f"{where} line {section.line}: cannot read model, hardware, cards, deploy mode, dataset and "
                        f"TPOT from the title '{section.title}' nor from a 'Model: ... TPOT: ...' line")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def dataset_slug(dataset: str) -> str:
    """``3.5K-1.5K`` -> ``3k5_1k5``; ``128K+1K (90% prefix cache hit rate)`` -> ``128k_1k_prefix90``."""
    main, _sep, rest = dataset.partition(" ")
    parts = [re.sub(r"^(\d+)(?:\.(\d+))?[kK]$", lambda m: f"{m.group(1)}k{m.group(2) or ''}", p)
             for p in re.split(r"[-+]", main)]
    prefix = re.search(r"(\d+)% prefix", rest)
    return "_".join(_slug(p) for p in parts) + (f"_prefix{prefix.group(1)}" if prefix else "")


def profile_id(meta: _Meta, title: str = "") -> str:
    dataset = dataset_slug(meta.dataset)
    # The current pages print the same dataset for a configuration with and without prefix caching; the title
    # says which ("... prefix90 50ms").
    prefix = re.search(r"\bprefix(\d+)\b", title, re.IGNORECASE)
    if prefix and "_prefix" not in dataset:
        dataset += f"_prefix{prefix.group(1)}"
    return (f"{_slug(meta.model)}_{meta.hardware.lower()}_{meta.cards}c_{MODE_WORDS[meta.mode]}_"
            f"{dataset}_{meta.target}")


def _number(text: str) -> float | int:
    value = float(text)
    return int(value) if value.is_integer() else value


# --------------------------------------------------------------------------- benchmark


def import_bench(section: Section, curation: Curation, where: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """bench.args and the dataset lengths of the section's benchmark command."""
    if not section.bench:
        raise ImportRefusal(f"{where} line {section.line}: the section has no sglang.bench_serving command")
    refuse_credentials(Lines(section.bench, section.bench_line), where)
    command = apply_text_fixes(section.bench, curation.fixes("bench"), f"{where} line {section.bench_line}")
    refuse_second_command(command, f"{where} line {section.bench_line}")
    args: dict[str, Any] = {}
    for flag, values in flag_groups(bench_argv(command)):
        line = f"{where} line {section.bench_line}"
        if flag in args:
            raise ImportRefusal(f"{line}: {flag} is given twice in the benchmark command")
        if not flag.startswith("--"):
            raise ImportRefusal(f"{line}: '{flag}' is not a full --flag name; record the intended flag as a deviation")
        # The benchmark's parser would reject it on the host, after the whole deployment started.
        check_flag(flag, BENCH, line)
        if flag == "--host":
            # The benchmark runs against the deployment's entry (the router, else the first instance), which
            # the planner computes; "<mixed-rank0>" is the token recorded deviations use for the latter.
            if len(values) != 1 or not re.fullmatch(r"[A-Za-z0-9.:-]+|<mixed-rank0>", values[0]):
                raise ImportRefusal(f"{line}: benchmark --host {' '.join(values)} is not an address")
            args[flag] = "{entry_host}"
        elif flag == "--port":
            args[flag] = "{entry_port}"
        elif not values:
            args[flag] = True
        else:
            args[flag] = scalar(values[0]) if len(values) == 1 else [scalar(v) for v in values]
    return args, dict(flag_groups(bench_argv(command)))


def dataset_of(name: str, bench: Mapping[str, list[str]], where: str) -> dict[str, Any]:
    def one(flag: str) -> int | None:
        values = bench.get(flag)
        return int(values[0]) if values and values[0].isdigit() else None

    out: dict[str, Any] = {"name": name}
    if one("--random-input-len") is not None:
        out["input_len"], out["output_len"] = one("--random-input-len"), one("--random-output-len")
    elif one("--gsp-system-prompt-len") is not None:
        out["input_len"] = (one("--gsp-system-prompt-len") or 0) + (one("--gsp-question-len") or 0)
        out["output_len"] = one("--gsp-output-len")
    if out.get("input_len") is None or out.get("output_len") is None:
        raise ImportRefusal(f"{where}: the benchmark command gives no input and output lengths "
                            "(--random-input-len/--random-output-len or the --gsp-* lengths)")
    prefix = re.search(r"(\d+)% prefix", name)
    if prefix:
        out["shared_prefix_ratio"] = int(prefix.group(1)) / 100
    return out


# --------------------------------------------------------------------------- published figures


def _bench_reading(block: str) -> dict[str, Any]:
    text = block if re.search(r"serving benchmark result", block, re.IGNORECASE) else \
        "====== Serving Benchmark Result ======\n" + block
    return _bench.parse_result(text)["metrics"]


def block_figures(section: Section, curation: Curation, cards: float, where: str) -> dict[str, Any]:
    metrics = dict(_bench_reading(section.result.text))
    block = " ".join(section.result.text.split())
    for fix in curation.corrections:
        if " ".join(str(fix.get("line", "")).split()) not in block:
            raise ImportRefusal(f"{where}: recorded correction of {fix.get('figure')} quotes {fix.get('line')!r}, "
                                "which the result block does not contain")
        metrics[METRIC_OF[str(fix["figure"])]] = fix["value"]
    return {k: v for k, v in _bench_verdict.figures(metrics, cards).items() if v is not None}


def summary_row(rows: list[SummaryRow], meta: _Meta, dataset: str, figures: Mapping[str, Any],
                title: str | None = None) -> SummaryRow | None:
    """The summary row that links to the section (the current pages' tables link each row to its section's
    anchor), else the one with the section's key whose TPOT is the section's (without results: its target)."""
    if title is not None:
        anchor = anchor_of(title)
        linked = [row for row in rows if row.anchor == anchor]
        if len(linked) == 1:
            return linked[0]
    found = []
    tpots = [figures[k] for k in ("mean_tpot_ms", "mean_itl_ms") if k in figures]
    for row in rows:
        if (row.model, row.hardware, row.cards, MODES.get(row.mode)) != (meta.model, meta.hardware, meta.cards,
                                                                         meta.mode):
            continue
        if row.tpot_is_target:
            if row.dataset == dataset and (row.tpot_ms == float(meta.tpot) if meta.tpot
                                           else row.ttft_ms == float(meta.ttft)):
                found.append(row)
        elif any(abs(row.tpot_ms - t) <= TPOT_MATCH_MS for t in tpots):
            found.append(row)
    same = [row for row in found if row.dataset == dataset]
    found = same or found
    return found[0] if len(found) == 1 else None if not found else _ambiguous(found)


def _ambiguous(rows: list[SummaryRow]) -> SummaryRow:
    raise ImportRefusal("several summary rows match the section: "
                        + "; ".join(f"line {r.line}: {r.text}" for r in rows))


_READABLE = re.compile(r"^(-?\d+(?:\.\d+)?|inf|nan)$")


def result_block(section: Section, curation: Curation, where: str) -> dict[str, str]:
    """The result block line by line, as printed: a figure the block gets wrong stays (the notes explain it,
    the corrections fix the figures read from it). Only a value that is no number at all (``1nf``) is replaced,
    by the recorded note ``<label>: <printed> -> <value>: <reason>``; without one it is refused."""
    out = dict(result_lines(section.result.text))
    for label, value in out.items():
        if label == "Backend" or _READABLE.match(value):
            continue
        wanted = f"{label}: {value} -> "
        note = next((n for n in curation.notes if n.startswith(wanted)), None)
        fixed = re.match(r"^(\S+?):", note[len(wanted):]) if note else None
        if not fixed:
            number = section.result.line_of(f"{label}:") or section.result.first
            raise ImportRefusal(f"{where} line {number}: '{label}: {value}' is not a number; record what it means "
                                f"as a note '{wanted}<value>: <reason>'")
        out[label] = fixed.group(1)
    return out


def published(section: Section, row: SummaryRow | None, curation: Curation, cards: float, dataset: str,
              where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if row is not None:
        summary: dict[str, Any] = {"table": row.table, "model": row.model, "hardware": row.hardware,
                                   "cards": row.cards, "mode": row.mode, "dataset": row.dataset,
                                   "quantization": row.quantization}
        if row.tpot_text:  # a TTFT-only row prints '-' as its TPOT
            summary["tpot_ms"] = row.tpot_ms
        if row.ttft_ms is not None:
            summary["ttft_ms"] = row.ttft_ms
        if row.tps_text is not None:
            summary["output_tps_per_card"] = as_printed(row.tps_text)
        if row.tpot_is_target:
            summary["tpot_is_target"] = True
        if row.dataset != dataset:
            summary["dataset_mismatch"] = True
        out["summary"] = summary
    if section.result.text.strip():
        out["result"] = result_block(section, curation, where)
        figures = block_figures(section, curation, cards, where)
        derived = figures.pop("output_tps_per_card", None)
        printed = as_printed(row.tps_text) if row is not None and row.tps_text is not None else None
        if printed is not None:
            figures["output_tps_per_card"] = printed
        out["figures"] = figures
        if derived is not None and printed != derived:
            cards_text = f"{cards:g}"
            note = curation.recomputed_notes.get("output_tps_per_card") or (
                f"The summary table prints {row.tps_text if row and row.tps_text else 'no per-card figure'}; "
                f"output tok/s / {cards_text} cards = {derived}.")
            out["recomputed"] = {"output_tps_per_card": {
                "value": derived, "formula": f"output_throughput_tok_s / {cards_text}", "note": note}}
    if curation.corrections:
        out["corrections"] = [dict(c) for c in curation.corrections]
    if curation.notes:
        out["notes"] = list(curation.notes)
    return out


# --------------------------------------------------------------------------- the profile


def _releases(roles: Mapping[str, Mapping[str, Any]], release: str | None = None, where: str = "") -> dict[str, str]:
    tables = load_release_tables()
    flags = set().union(set(), *(tokens(spec.get("args") or {}) for role, spec in roles.items() if role != "router"))
    sglang = tables["sglang"].supported(flags)
    if release is not None:
        # The document names its release (the pages' reference images): its commands are that release's, or,
        # where they use a flag only a later release has, the first release that takes them all.
        table = tables["sglang"]
        later = [r for r in sglang if table.at_least(r, release) and table.takes(r, flags)]
        if not later:
            raise ImportRefusal(f"{where}: no release from the document's SGLang {release} on takes its flags "
                                f"(they allow {', '.join(sglang) or 'none'})")
        sglang = later
    router_flags = set((roles.get("router") or {}).get("args") or {})
    router = tables["sglang_router"].supported(router_flags)
    return {"sglang": sglang[0] if sglang else tables["sglang"].reference,
            "sglang_router": router[0] if router else tables["sglang_router"].reference}


def donor_of(section: Section, meta: _Meta, doc: Document, where: str) -> Section:
    """The section whose deployment a "please turn to Model Deployment" section reuses: the one of the same
    model, hardware, cards, deploy mode and TPOT that has a deployment."""
    donors = []
    for other in doc.sections:
        if other is section or other.reuses_deployment:
            continue
        try:
            m = section_meta(other, where)
        except ImportRefusal:
            continue
        if (m.model, m.hardware, m.cards, m.mode, m.tpot, m.ttft) == (meta.model, meta.hardware, meta.cards,
                                                                      meta.mode, meta.tpot, meta.ttft):
            donors.append(other)
    if len(donors) != 1:
        raise ImportRefusal(f"{where} line {section.line}: the section reuses another's deployment, and "
                            f"{len(donors)} sections of the same model, hardware, cards, mode and TPOT have one")
    return donors[0]


def _current(curation: Curation, section: Section, deploy: Section) -> tuple[Curation, list[dict[str, Any]]]:
    """The curation without the deviations whose seed text the (newer) document no longer contains."""
    texts = {"deploy": deploy.deploy.text, "bench": section.bench}
    kept, stale = [], []
    # env deviations are not text fixes: the import writes them anew from the environment catalog.
    for dev in (d for d in curation.deviations if d.get("part") != "env"):
        (kept if str(dev.get("seed")) in texts.get(str(dev.get("part")), "") else stale).append(dev)
    return dataclasses.replace(curation, deviations=kept), stale


@dataclasses.dataclass(frozen=True)
class Origin:
    """Where a page was read (recorded in each profile's source, so that anyone can import it again) and the
    SGLang release its commands are written for."""

    generation: str  # the document generation, e.g. "2026-11"
    repository: str
    path: str
    commit: str
    release: str | None = None  # None: the oldest release that takes the commands' flags


def import_section(doc: Document, section: Section, curations: Mapping[str, Curation],
                   strict: bool = True, origin: Origin | None = None) -> Imported:
    """The section's profile. ``strict``: a recorded deviation whose seed text the document lacks is refused
    (the round trip); otherwise it is left out and reported in ``Imported.stale`` (a newer document)."""
    where = f"{doc.name}"
    meta = section_meta(section, where)
    pid = profile_id(meta, section.title)
    curation = curations.get(section.title) or Curation()
    stale: list[dict[str, Any]] = []
    if not strict:
        curation, stale = _current(curation, section, section)
    data: dict[str, Any] = {"id": pid, "title": section.title,
                            "source": {"document": doc.id, "section": section.title, **({
                                "anchor": anchor_of(section.title), "generation": origin.generation,
                                "repository": origin.repository, "path": origin.path, "commit": origin.commit}
                                if origin else {})},
                            "model": meta.model, "hardware": meta.hardware, "cards": meta.cards,
                            "deploy_mode": meta.mode}
    bench_args, bench_groups = import_bench(section, curation, where)
    data["dataset"] = dataset_of(meta.dataset, bench_groups, f"{where} line {section.bench_line}")
    data.update(_targets(meta))
    donor = donor_of(section, meta, doc, where) if section.reuses_deployment else None
    deploy_section = donor or section
    deploy_curation = curations.get(deploy_section.title) or Curation()
    if not strict:
        deploy_curation, more = _current(deploy_curation, deploy_section, deploy_section)
        stale += [d for d in more if d.get("part") == "deploy" and d not in stale]
    fixed = apply_text_fixes(deploy_section.deploy.text, deploy_curation.fixes("deploy"),
                             f"{where} line {deploy_section.deploy.first}")
    deployment: Deployment = import_deployment(Lines(fixed, deploy_section.deploy.first), where, meta.hardware)
    if deployment.deploy_mode != meta.mode:
        raise ImportRefusal(f"{where} line {section.line}: the title says {meta.mode}, the script starts "
                            f"{', '.join(r for r in deployment.roles if r != 'router')} servers")
    data["quantization"] = ""
    data["releases"] = _releases(deployment.roles, origin.release if origin else None,
                                 f"{where} line {deploy_section.deploy.first}")
    if deployment.memfabric_store_port:
        data["memfabric_store_port"] = deployment.memfabric_store_port
    if donor is None:
        data["host_tuning"] = deployment.host_tuning
        data["roles"] = deployment.roles
    data["bench"] = {"args": bench_args}
    # The cards the servers occupy (the per-card figures' denominator) follow from the roles.
    cards = _parsed(pid, data, {"roles": deployment.roles}).cards_used()
    figures = block_figures(section, curation, cards, where) if section.result.text.strip() else {}
    row = summary_row(doc.rows, meta, meta.dataset, figures, section.title)
    quantization = row.quantization if row else section.meta.get("Quantization") or _quantization_of(section, doc)
    if not quantization:
        raise ImportRefusal(f"{where} line {section.line}: no summary row belongs to the section and it names no "
                            "quantization")
    data["quantization"] = quantization
    data["published"] = published(section, row, curation, cards, meta.dataset, where)
    data["deviations"] = _deviations(curation, data, donor is not None)
    if donor is not None:
        # Key order of a written profile: deployment_from right after the id.
        data = {"id": pid, "deployment_from": profile_id(section_meta(donor, where), donor.title),
                **{k: v for k, v in data.items() if k != "id"}}
    return Imported(id=pid, section=section, data=data, deployment_from=data.get("deployment_from"), stale=stale)


def _deviations(curation: Curation, data: Mapping[str, Any], reused: bool) -> list[dict[str, Any]]:
    """The recorded deviations, and one env deviation per name the section sets that no reader of the target
    release lists: the name is kept as documented (the page's configuration was measured with it) and the
    deviation says so, written from the environment catalog so that a re-import writes the same one. A section
    that reuses another's deployment has no roles of its own: its donor carries them."""
    recorded = [dict(d) for d in curation.deviations if d.get("part") != "env"]
    return recorded + ([] if reused else env_deviations(data["releases"]["sglang"], data))


def _targets(meta) -> dict[str, Any]:
    """The section's TPOT and TTFT targets, those it states (a profile has at least one)."""
    return {key: _number(value) for key, value in (("tpot_target_ms", meta.tpot), ("ttft_target_ms", meta.ttft))
            if value}


def _quantization_of(section: Section, doc: Document) -> str | None:
    """Without a summary row: the quantization the rows of the same model, hardware, cards, mode and dataset
    agree on (another TPOT of the same deployment), else None (a refusal)."""
    meta = section_meta(section, doc.name)
    found = {r.quantization for r in doc.rows
             if (r.model, r.hardware, r.cards, MODES.get(r.mode), r.dataset) == (meta.model, meta.hardware,
                                                                                 meta.cards, meta.mode, meta.dataset)}
    return found.pop() if len(found) == 1 else None


def _parsed(pid: str, data: Mapping[str, Any], deployment: Mapping[str, Any]):
    errors = Collector()
    profile = parse_profile(pid, data, deployment, errors)
    try:
        errors.raise_if_any()
    except PlanError as exc:
        raise ImportRefusal(f"the imported profile '{pid}' is not valid: {exc}") from None
    return profile


def import_document(doc: Document, curations: Mapping[str, Curation] | None = None,
                    strict: bool = True, origin: Origin | None = None) -> list[Imported]:
    """Every section of the document as a profile. Every section is tried; the refusals of all of them are
    raised together (one per line), so that one run names every line to fix."""
    by_id: dict[str, Imported] = {}
    refusals = []
    if len(doc.sections) > MAX_SECTIONS:
        # Each section runs its script in bash once per host of a sentinel inventory: a document is untrusted
        # input, and thousands of sections would hold the controller for minutes.
        raise ImportRefusal(f"{doc.name}: {len(doc.sections)} configuration sections, more than the {MAX_SECTIONS} "
                            "the importer reads from one document: import it in parts")
    for section in doc.sections:
        try:
            fold(by_id, import_section(doc, section, curations or {}, strict, origin), doc.name)
        except ImportRefusal as exc:
            refusals.append(f"section '{section.title}': {exc}")
    if refusals:
        raise ImportRefusal("\n".join(refusals))
    return list(by_id.values())


def fold(by_id: dict[str, Imported], item: Imported, where: str) -> None:
    """Add the section's profile under its id. A page that repeats a configuration under another title (same
    deployment, benchmark and figures) gives one profile, from the first section, which records the other title
    (and so lends it its curation); another configuration under the same id is refused, naming its line."""
    first = by_id.get(item.id)
    if first is None:
        by_id[item.id] = item
    elif same_configuration(first, item):
        repeated = first.data["source"].setdefault("repeated_in", [])
        if item.section.title not in repeated:
            repeated.append(item.section.title)
    else:
        raise ImportRefusal(f"{where} line {item.section.line}: maps to the profile id {item.id} of section "
                            f"'{first.section.title}', which is another configuration")


def same_configuration(one: Imported, other: Imported) -> bool:
    """Two sections that differ in nothing but their title (and so their source)."""
    def comparable(data: Mapping[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in data.items() if k not in ("title", "source")}
    return comparable(one.data) == comparable(other.data)


def collection_profiles(directory: str | None = None) -> dict[str, dict[str, Any]]:
    """The profile files of a directory (the collection's by default) by id, aliases left out."""
    import yaml  # PyYAML ships with ansible-core; imported lazily to keep this module light

    directory = directory or profiles_dir()
    out = {}
    for pid in available_profiles(directory):
        with open(os.path.join(directory, f"{pid}.yml"), encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
        if isinstance(data, dict) and not data.get("alias_of"):
            out[pid] = data
    return out


def curations_by_section(profiles: Mapping[str, Mapping[str, Any]]) -> dict[str, Curation]:
    """Each profile's curation under the title of the section it records as its source, and under the titles the
    page repeats that section's configuration with (``source.repeated_in``)."""
    out = {}
    for profile in profiles.values():
        source = profile.get("source") or {}
        for title in [source.get("section"), *(source.get("repeated_in") or [])]:
            if title:
                out[str(title)] = curation_of(profile)
    return out


__all__ = ["Curation", "ImportRefusal", "Imported", "Origin", "collection_profiles", "curation_of",
           "curations_by_section", "import_document", "import_section", "profile_id", "fold", "same_configuration"]
