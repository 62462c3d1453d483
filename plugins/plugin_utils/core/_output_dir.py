# Copyright: ascend.sglang contributors
# Apache License 2.0
"""A controller directory a playbook writes its output into (render mode, the Kubernetes export).

Pure; no Ansible import.  The directory must be new, empty or hold an earlier output of this same plan: a file or
directory this output does not produce (an earlier output of another inventory or profile) is refused rather than
removed, so that nothing of the operator's is deleted and nothing stale is left beside the new files.
"""

from __future__ import annotations

import os


class ForeignFiles(ValueError):
    """The directory holds what this output does not produce (the message names the variable and the files)."""


def refuse_foreign(base: str, planned: list[str], variable: str, what: str = "render") -> None:
    if not os.path.lexists(base):
        return
    if not os.path.isdir(base) or os.path.islink(base):
        raise ForeignFiles(f"{variable} '{base}' exists and is not a directory: pass a new directory, an empty one or "
                           f"one holding an earlier {what} of this plan.")
    known = {os.path.relpath(path, base) for path in planned}
    found = []
    for top, dirs, names in os.walk(base):
        found += [os.path.relpath(os.path.join(top, name), base) for name in dirs + names]
    foreign = sorted(set(found) - known)
    if foreign:
        more = ", ..." if len(foreign) > 10 else ""
        raise ForeignFiles(
            f"{variable} '{base}' holds {len(foreign)} file(s) this plan does not produce "
            f"({', '.join(foreign[:10])}{more}), e.g. of an earlier {what}: remove them or {what} into a new directory.")
