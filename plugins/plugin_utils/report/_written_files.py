# Copyright: ascend.sglang contributors
# Apache License 2.0
"""What render.yml wrote, for the operator to open: the render directory, then one line per host directory (and the
Prometheus files' directory) naming its files, a service's files folded into one name
(``sglang-prefill-i0-r0.{env,json,service,sh}``), so that a fleet of hundreds of hosts prints hundreds of lines, not
thousands.

Private to the collection; pure, no Ansible import.
"""

from __future__ import annotations

import os
from typing import Iterable, Mapping


def _folded(names: Iterable[str]) -> list[str]:
    """File names with the same stem before the first dot folded: a.{env,json}; a name alone stays as it is."""
    by_stem: dict[str, list[str]] = {}
    for name in sorted(names):
        stem, dot, rest = name.partition(".")
        # A name whose stem is shared with no other (cann_env.sh, sysctl.conf) is listed whole.
        by_stem.setdefault(stem, []).append(rest if dot else "")
    out = []
    for stem, rests in by_stem.items():
        if len(rests) == 1:
            out.append(f"{stem}.{rests[0]}" if rests[0] else stem)
        else:
            out.append(f"{stem}.{{{','.join(rests)}}}")
    return out


def _files(count: int) -> str:
    return f"{count} file" if count == 1 else f"{count} files"


def lines(base: str, paths: Iterable[str], changed: Mapping[str, bool]) -> list[str]:
    """The render directory and, per directory under it (a host's, monitoring/ and its subdirectories), the files
    written there; ``changed``: path -> whether this run changed it (the count of changed files per line)."""
    by_dir: dict[str, list[str]] = {}
    for path in paths:
        by_dir.setdefault(os.path.relpath(os.path.dirname(path), base), []).append(os.path.basename(path))
    total = sum(len(names) for names in by_dir.values())
    out = [f"{base}: {_files(total)}, {sum(1 for p in changed.values() if p)} changed"]
    for directory in sorted(by_dir):
        names = by_dir[directory]
        moved = sum(1 for name in names if changed.get(os.path.join(base, directory, name)))
        out.append(f"  {directory}/ ({_files(len(names))}, {moved} changed): {', '.join(_folded(names))}")
    return out
