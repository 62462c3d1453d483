# Copyright: ascend.sglang contributors
# Apache License 2.0
"""What a model directory holds, for the weights checks (module_utils/checks/_checks.py): its files and sizes, the
digests of its small files (config.json, the tokenizer files, the safetensors index...), the shards the index
names that are missing, and, with ``full``, the digest of every file.

Private to the collection; runs on the managed host (module sglang_preflight); the controller compares the hosts
(plugins/plugin_utils/rollout/_fleet_checks.py). Full digests are cached per file by (size, mtime, inode) in CACHE, so a
second run costs a stat per file; the cache is root only and never written in check mode.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from typing import Any, Mapping

CACHE = "/var/cache/sglang/weights-digests.json"
INDEXES = ("model.safetensors.index.json", "pytorch_model.bin.index.json")
# Weight shards: hashed in full mode only. Every other file (config, tokenizer, index, generation config, ...) is
# small and hashed always, up to SMALL_MAX bytes.
SHARD_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf", ".npz", ".ckpt")
SMALL_MAX = 256 << 20
# A model directory holds hundreds of files, not millions: a wrong path (say /) is reported, not walked.
MAX_FILES = 20000


def sha256_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _listing(root: str) -> tuple[dict[str, os.stat_result], str | None]:
    found: dict[str, os.stat_result] = {}
    for top, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted(names):
            path = os.path.join(top, name)
            try:
                st = os.stat(path)
            except OSError:
                continue
            found[os.path.relpath(path, root)] = st
            if len(found) > MAX_FILES:
                return found, f"more than {MAX_FILES} files: not a model directory"
    return found, None


def _missing_shards(root: str, files: Mapping[str, Any]) -> dict[str, Any] | None:
    for index in INDEXES:
        if index not in files:
            continue
        try:
            with open(os.path.join(root, index), encoding="utf-8") as handle:
                weight_map = json.load(handle).get("weight_map") or {}
        except (OSError, ValueError, AttributeError) as exc:
            return {"index": index, "error": f"unreadable: {exc}", "shards": 0, "missing": []}
        shards = sorted({str(v) for v in weight_map.values()})
        return {"index": index, "error": None, "shards": len(shards),
                "missing": [s for s in shards if s not in files]}
    return None


def load_cache(path: str = CACHE) -> dict[str, list]:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def save_cache(cache: Mapping[str, list], path: str = CACHE) -> None:
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".weights-", dir=os.path.dirname(path))
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(cache, handle, sort_keys=True)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def observe(root: str, full: bool, cache: dict[str, list] | None = None) -> dict[str, Any]:
    """{exists, files: {relative path: size}, digests: {relative path: sha256}, index, error, hashed, cached}.
    ``cache`` (full mode): absolute path -> [size, mtime_ns, inode, sha256], read and updated in place."""
    out: dict[str, Any] = {"exists": os.path.isdir(root), "files": {}, "digests": {}, "index": None, "error": None,
                           "hashed": 0, "cached": 0}
    if not out["exists"]:
        return out
    listing, out["error"] = _listing(root)
    if out["error"]:
        return out
    out["files"] = {rel: st.st_size for rel, st in listing.items()}
    out["index"] = _missing_shards(root, out["files"])
    for rel, st in listing.items():
        shard = rel.endswith(SHARD_SUFFIXES)
        if (shard and not full) or (not shard and st.st_size > SMALL_MAX and not full):
            continue
        path = os.path.join(root, rel)
        key = [st.st_size, st.st_mtime_ns, st.st_ino]
        known = (cache or {}).get(path)
        if full and known and known[:3] == key:
            out["digests"][rel] = known[3]
            out["cached"] += 1
            continue
        try:
            out["digests"][rel] = sha256_file(path)
        except OSError as exc:
            out["digests"][rel] = f"unreadable: {exc.strerror or exc}"
            continue
        out["hashed"] += 1
        if full and cache is not None:
            cache[path] = key + [out["digests"][rel]]
    return out
