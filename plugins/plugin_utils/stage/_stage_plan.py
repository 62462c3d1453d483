# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The plan of a weights stage (playbooks/stage_weights.yml): from what each server host holds and the source's
listing as each host reads it (module sglang_stage, state observe), which files each host lacks, whether it has
room for them, and who pulls from whom in which round.

A host lacks a file the source has when it has none, or one of another size or mtime (rsync's quick check; with
verify full, every file, which rsync then compares by content and transfers only where it differs). A host whose
copy lacks nothing holds a verified copy and may serve others from the first round on.

Rounds: in each, at most ``parallel`` hosts pull. With ``tree``, every host that holds the directory (before the
stage, or since a past round) serves up to ``fanout`` hosts as the source does, peers first: the number of holders
grows geometrically and the source's link carries the directory ``fanout`` times per round, not once per host.
Without it (star), every host pulls from the source. Hosts pull in the order of the most bytes lacking first (then
by name), so that the longest transfers start first.

Pure; no Ansible import.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

SOURCE = ""  # the sender of a transfer from the source itself


@dataclasses.dataclass(frozen=True)
class Transfer:
    host: str
    path: str
    sender: str  # SOURCE or the inventory name of a host that holds the directory
    files: tuple[str, ...]
    bytes: int


@dataclasses.dataclass(frozen=True)
class HostCopy:
    host: str
    path: str
    lacking: tuple[str, ...]
    bytes: int  # bytes of the files lacking (what the host receives at most)
    staged: int  # bytes of those already staged by an interrupted run
    free: int
    extra: tuple[str, ...]  # files the host has that the source has not (left alone)


@dataclasses.dataclass(frozen=True)
class StagePlan:
    sources: dict[str, str]  # model directory -> source
    expected: dict[str, dict[str, int]]  # model directory -> relative path -> size (the source's files)
    copies: tuple[HostCopy, ...]
    rounds: tuple[tuple[Transfer, ...], ...]
    verify: str
    errors: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def lacking(source: Mapping[str, Sequence[int]], local: Mapping[str, Sequence[int]], full: bool) -> list[str]:
    """The files of source ({rel: [size, mtime]}) a copy ({rel: [size, mtime]}) lacks: all with full."""
    if full:
        return sorted(source)
    return sorted(rel for rel, (size, mtime) in source.items()
                  if rel not in local or int(local[rel][0]) != int(size) or int(local[rel][1]) != int(mtime))


def rounds(pending: Sequence[tuple[str, int]], holders: Sequence[str], parallel: int, fanout: int,
           tree: bool) -> list[list[tuple[str, str]]]:
    """[[(host, sender)]] per round for one directory: pending = (host, bytes lacking) of the hosts that pull,
    holders = the hosts that hold it already."""
    queue = [h for h, _b in sorted(pending, key=lambda item: (-item[1], item[0]))]
    serving = sorted(holders) if tree else []
    out: list[list[tuple[str, str]]] = []
    while queue:
        senders = serving + [SOURCE]  # peers first: the source's link is the scarce one
        this: list[tuple[str, str]] = []
        for sender in senders:
            for _unused in range(fanout if tree else parallel):
                if not queue or len(this) >= parallel:
                    break
                this.append((queue.pop(0), sender))
        out.append(this)
        if tree:
            serving = sorted(serving + [h for h, _s in this])
    return out


def plan_stage(sources: Mapping[str, str], wanted: Mapping[str, Sequence[str]],
               observed: Mapping[str, Mapping[str, Any]], *, parallel: int, fanout: int, tree: bool, verify: str,
               margin: int = 0) -> StagePlan:
    """wanted: host -> the model directories its servers load; observed: host -> directory -> what the module's
    observe returned there (files, staged, free, source, source_error)."""
    errors: list[str] = []
    full = verify == "full"
    expected, listings = _source_listings(sources, wanted, observed, errors)
    copies, by_path = _host_copies(wanted, observed, expected, listings, full, margin, errors)
    merged = _merged_rounds(by_path, parallel, fanout, tree)
    return StagePlan(dict(sources), expected, tuple(copies), tuple(tuple(r) for r in merged), verify, tuple(errors))


def _source_listings(sources: Mapping[str, str], wanted: Mapping[str, Sequence[str]],
                     observed: Mapping[str, Mapping[str, Any]], errors: list[str]
                     ) -> "tuple[dict[str, dict[str, int]], dict[str, dict[str, Sequence[int]]]]":
    """Per model directory, the source's file sizes and listing as the first host that read it saw them; every other
    host must have read the same (else an error)."""
    expected: dict[str, dict[str, int]] = {}
    listings: dict[str, dict[str, Sequence[int]]] = {}
    for path in sorted(sources):
        seen = {}
        for host in sorted(h for h, paths in wanted.items() if path in paths):
            got = (observed.get(host) or {}).get(path)
            if not got:
                errors.append(f"host {host}: {path} was not observed (sglang_stage observe did not run there)")
            elif got.get("source_error"):
                errors.append(f"host {host}: cannot read {sources[path]} (sglang_model_source for {path}): "
                              f"{got['source_error']}")
            elif not got.get("source"):
                errors.append(f"host {host}: {sources[path]} (sglang_model_source for {path}) holds no file")
            else:
                seen[host] = got["source"]
        if not seen:
            continue
        first = sorted(seen)[0]
        sizes = {rel: int(v[0]) for rel, v in seen[first].items()}
        for host in sorted(seen):
            other = {rel: int(v[0]) for rel, v in seen[host].items()}
            if other != sizes:
                diff = sorted(set(other) ^ set(sizes)) + sorted(r for r in set(other) & set(sizes) if other[r] != sizes[r])
                errors.append(f"host {host}: reads another {sources[path]} than {first} does ({', '.join(diff[:3])}"
                              f"{' ...' if len(diff) > 3 else ''}): the source changed while listed, or the hosts "
                              "mount different storage; rerun when it is stable")
        expected[path] = sizes
        listings[path] = dict(seen[first])
    return expected, listings


def _host_copies(wanted: Mapping[str, Sequence[str]], observed: Mapping[str, Mapping[str, Any]],
                 expected: Mapping[str, Mapping[str, int]], listings: Mapping[str, Mapping[str, Sequence[int]]],
                 full: bool, margin: int, errors: list[str]) -> "tuple[list[HostCopy], dict[str, list[HostCopy]]]":
    """What each host lacks of each of its directories, what is staged already and whether it fits (else an
    error); the copies in order and by directory."""
    copies: list[HostCopy] = []
    by_path: dict[str, list[HostCopy]] = {}
    for host in sorted(wanted):
        for path in sorted(p for p in wanted[host] if p in expected):
            got = (observed.get(host) or {}).get(path) or {}
            local = got.get("files") or {}
            need = lacking(listings[path], local, full)
            if full:  # rsync compares every file by content; what it may move is what the quick check lacks
                moved = lacking(listings[path], local, False)
            else:
                moved = need
            total = sum(expected[path][rel] for rel in moved)
            staged = sum(int(size) for rel, size in (got.get("staged") or {}).items()
                         if rel in moved and int(size) == expected[path][rel])
            copy = HostCopy(host, path, tuple(need), total, staged, int(got.get("free") or 0),
                            tuple(sorted(set(local) - set(expected[path]))))
            copies.append(copy)
            by_path.setdefault(path, []).append(copy)
            short = total - staged + margin - copy.free
            if need and short > 0:
                errors.append(f"host {host}: {path} needs {_bytes(total - staged + margin)} free where it goes, "
                              f"has {_bytes(copy.free)}: {_bytes(short)} missing (free space, or point "
                              "sglang_model_path elsewhere)")
    return copies, by_path


def _merged_rounds(by_path: Mapping[str, list[HostCopy]], parallel: int, fanout: int, tree: bool
                   ) -> list[list[Transfer]]:
    """The transfers of every directory, merged round by round."""
    merged: list[list[Transfer]] = []
    for path in sorted(by_path):
        pending = [(c.host, c.bytes) for c in by_path[path] if c.lacking]
        holders = [c.host for c in by_path[path] if not c.lacking]
        files = {c.host: c for c in by_path[path]}
        for index, this in enumerate(rounds(pending, holders, parallel, fanout, tree)):
            while len(merged) <= index:
                merged.append([])
            merged[index] += [Transfer(h, path, s, files[h].lacking, files[h].bytes) for h, s in this]
    return merged


def _bytes(value: int) -> str:
    size = float(value)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(size) < 1024 or unit == "TiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{value} B"


def human(value: int) -> str:
    return _bytes(value)


# ---- what the playbook reads per host and round -------------------------------------------------------------

def module_name(token: str, index: int) -> str:
    """The rsync daemon module of the index-th model directory: the run's random token in it, so that only the
    hosts the controller tells it can ask for it."""
    return f"sglang-{token}-{index}"


def _url_host(address: str) -> str:
    return f"[{address}]" if ":" in address else address


def round_view(stage: Mapping[str, Any], index: int, host: str, addresses: Mapping[str, str],
               allowed: Mapping[str, Sequence[str]], ports: Mapping[str, int], token: str) -> dict[str, Any]:
    """What host does in round index: the directories it serves (rsync daemon modules) and to which addresses,
    and what it pulls from where. addresses: host -> the address others reach it on; allowed: host -> the
    addresses its connections may come from; ports: host -> sglang_stage_port."""
    paths = sorted(stage["sources"])
    transfers = stage["rounds"][index] if 0 <= index < len(stage["rounds"]) else []
    serve, allow, pulls = [], set(), []
    for transfer in transfers:
        path = transfer["path"]
        if transfer["sender"] == host:
            name = module_name(token, paths.index(path))
            if all(m["name"] != name for m in serve):
                serve.append({"name": name, "path": path})
            allow.update(allowed.get(transfer["host"]) or [addresses.get(transfer["host"], transfer["host"])])
        if transfer["host"] == host:
            sender = transfer["sender"]
            if sender == SOURCE:
                source = stage["sources"][path]
            else:
                source = (f"rsync://{_url_host(addresses.get(sender, sender))}:{ports[sender]}/"
                          f"{module_name(token, paths.index(path))}/")
            pulls.append({"path": path, "source": source, "sender": sender or stage["sources"][path],
                          "files": list(transfer["files"]), "bytes": transfer["bytes"],
                          "expected": dict(stage["expected"][path])})
    return {"serve": serve, "allow": sorted(allow), "pulls": pulls}


def plan_lines(stage: Mapping[str, Any]) -> list[str]:
    """What each host receives, round by round (what --check shows), and the hosts that hold their copy."""
    lines = []
    for copy in stage["copies"]:
        if not copy["lacking"]:
            lines.append(f"{copy['host']}: {copy['path']} holds the source's {len(stage['expected'][copy['path']])} "
                         "files: nothing to receive")
    for index, transfers in enumerate(stage["rounds"]):
        for t in transfers:
            sender = stage["sources"][t["path"]] if t["sender"] == SOURCE else t["sender"]
            what = (f"{len(t['files'])} file(s) compared by content, up to {human(t['bytes'])}"
                    if stage["verify"] == "full" else f"{len(t['files'])} file(s), {human(t['bytes'])}")
            lines.append(f"round {index + 1}: {t['host']} receives {t['path']} from {sender}: {what}")
    for copy in stage["copies"]:
        if copy["extra"]:
            lines.append(f"{copy['host']}: {copy['path']} also holds {len(copy['extra'])} file(s) the source has not "
                         f"({', '.join(copy['extra'][:3])}{' ...' if len(copy['extra']) > 3 else ''}): left alone")
    return lines


def summary(stage: Mapping[str, Any], results: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    """The table at the end (host, directory, from, files, bytes, seconds, rate) and what failed: results is
    host -> the pulls its action reported; with verify full, a file whose sha256 differs between hosts."""
    rows, failed = [], []
    digests: dict[str, dict[str, dict[str, str]]] = {}
    for host in sorted(results):
        for pull in results[host] or []:
            seconds = float(pull.get("seconds") or 0)
            moved = int(pull.get("transferred") or 0)
            rows.append([host, pull.get("path", ""), pull.get("sender", ""), str(len(pull.get("moved") or [])),
                         human(moved), f"{seconds:.1f}", f"{human(int(moved / seconds)) if seconds > 0 else '-'}/s"])
            for rel, digest in (pull.get("digests") or {}).items():
                digests.setdefault(pull["path"], {}).setdefault(rel, {})[host] = digest
    for path, files in sorted(digests.items()):
        for rel, by_host in sorted(files.items()):
            if len(set(by_host.values())) > 1:
                failed.append(f"{path}/{rel}: the hosts' sha256 differ ("
                              + ", ".join(f"{h} {d[:12]}" for h, d in sorted(by_host.items())) + ")")
    return {"rows": rows, "failed": failed}
