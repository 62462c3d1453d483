#!/usr/bin/python
# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Gathers this host's part of a failure bundle (journals, unit state, files, npu-smi, driver lines, pip list),
with every secret taken out on the host; or records a deploy's start for a later collection."""

from __future__ import annotations

DOCUMENTATION = r"""
module: sglang_gather
short_description: Gather a host's part of the failure bundle, secrets taken out, or record a deploy's start
description:
  - Read-only on the host (apart from O(record_start)). For every given unit, its C(systemctl show) state and its
    journal from O(since) (at most O(max_lines) lines and O(max_bytes) bytes, the newest kept); the given rendered
    files; C(npu-smi info), C(npu-smi info -l) and each NPU's health; the NPU driver's kernel lines (C(dmesg), else
    the kernel journal; the last O(dmesg_lines)); C(pip list) of each server interpreter.
  - Every text is redacted on the host before it is returned. The values of O(secrets), of secret-like names in the
    files given as sensitive (names with KEY, TOKEN, SECRET, PASSWORD, AUTH, ...) and the user:password of URLs are
    replaced with C(<redacted>), wherever they appear. The C(.secrets) files are never read.
  - Something that cannot be collected (a command missing, a file absent, a journal refused) is listed in
    C(index.failed) with the reason, never a failure of the task.
  - The action M(ascend.sglang.sglang_collect) lists the units and files from the plan on the controller and writes the
    result into the bundle's directory for this host; playbook C(ascend.sglang.collect) runs it.
  - With O(record_start), writes the deploy's start to O(record_path) (root only) and collects nothing. That
    record is bookkeeping, as a log line is, and does not count as a change.
version_added: 0.5.0
options:
  units:
    description: Unit names (C(sglang-prefill-i0-r0.service), watchdog units).
    type: list
    elements: str
    default: []
  files:
    description: Rendered files to include, each C(path), C(kind) and C(sensitive) (an env file, redacted).
    type: list
    elements: dict
    default: []
  secrets:
    description: Secret values to take out of everything (the values of C(sglang_secrets)).
    type: list
    elements: str
    default: []
  since:
    description: Start of the journal window (C(@EPOCH), C(YYYY-MM-DD[ HH:MM[:SS]]), C(today) or C(yesterday)).
      Unset - the last deploy's start from O(record_path), else C(yesterday).
    type: str
  record_path:
    description: The deploy start record.
    type: path
    default: /var/lib/sglang/last-deploy.json
  record_start:
    description: Record this deploy start (seconds since the epoch) and collect nothing.
    type: float
  profile:
    description: Profile name written with O(record_start).
    type: str
    default: ""
  max_lines:
    description: Journal lines per unit, the newest kept.
    type: int
  max_bytes:
    description: Bytes per collected text, the newest kept.
    type: int
  dmesg_lines:
    description: NPU driver kernel lines kept, the newest.
    type: int
  npu_smi:
    description: The npu-smi program (searched in C(PATH) and the driver's tool directories).
    type: str
  pythons:
    description: Server interpreters whose C(pip list) to include.
    type: list
    elements: str
    default: []
  timeout:
    description: Seconds each command may take.
    type: int
    default: 30
extends_documentation_fragment:
  - ascend.sglang.attributes.host
author:
  - ascend.sglang maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: This host's part of the bundle (use playbook ascend.sglang.collect, which lists the units and files)
  ascend.sglang.sglang_gather:
    units: [sglang-prefill-i0-r0.service]
    files: [{path: /etc/sglang/sglang-prefill-i0-r0.env, kind: env, sensitive: true}]
    since: "@1764064800"
  no_log: true
"""

RETURN = r"""
files:
  description: Relative path in the host's directory -> redacted text.
  returned: unless record_start
  type: dict
index:
  description: C(reachable), C(collected) (file, what, command, truncated) and C(failed) (what, reason), C(since),
    C(since_from) (where the window's start came from).
  returned: unless record_start
  type: dict
"""

import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ascend.sglang.plugins.module_utils.collect._collect import SINCE, collect
from ansible_collections.ascend.sglang.plugins.module_utils.files._deploy_record import DEPLOY_RECORD, read_since, write_record
from ansible_collections.ascend.sglang.plugins.module_utils.collect._host_probe import run, which


def _read(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read()


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "units": {"type": "list", "elements": "str", "default": []},
            "files": {"type": "list", "elements": "dict", "default": []},
            "secrets": {"type": "list", "elements": "str", "default": [], "no_log": True},
            "since": {"type": "str"},
            "record_path": {"type": "path", "default": DEPLOY_RECORD},
            "record_start": {"type": "float"},
            "profile": {"type": "str", "default": ""},
            # The plan's sglang_collect_* and sglang_npu_smi (the collect action passes them): the settings
            # table holds their defaults; needed to collect, not to record a start.
            "max_lines": {"type": "int"},
            "max_bytes": {"type": "int"},
            "dmesg_lines": {"type": "int"},
            "npu_smi": {"type": "str"},
            "pythons": {"type": "list", "elements": "str", "default": []},
            "timeout": {"type": "int", "default": 30},
        },
        supports_check_mode=True,
    )
    p = module.params
    if p["record_start"] is not None:
        if not module.check_mode:
            try:
                write_record(p["record_path"], p["record_start"], p["profile"])
            except OSError as exc:
                module.fail_json(msg=f"cannot record the deploy's start in {p['record_path']}: {exc}")
        module.exit_json(changed=False, record_path=p["record_path"])
    missing = [key for key in ("max_lines", "max_bytes", "dmesg_lines", "npu_smi") if p[key] in (None, "")]
    if missing:
        module.fail_json(msg=f"missing to collect: {', '.join(missing)} (the plan's settings, passed by the "
                             "ascend.sglang.sglang_collect action)")
    for key in ("max_lines", "max_bytes", "dmesg_lines", "timeout"):
        if p[key] < 1:
            module.fail_json(msg=f"{key} must be >= 1 (got {p[key]})")
    for unit in p["units"]:
        if not unit or unit.startswith("-") or any(c.isspace() for c in unit):
            module.fail_json(msg=f"units: not a unit name: {unit!r}")
    if p["since"] is not None and not SINCE.match(p["since"]):
        module.fail_json(msg=f"since: {p['since']!r} is not @EPOCH, YYYY-MM-DD[ HH:MM[:SS]], today or yesterday")
    if p["since"] is not None:
        since, since_from = p["since"], "given"
    else:
        since, since_from = read_since(p["record_path"], "yesterday")
    started = time.time()
    bundle = collect(p, lambda argv, timeout: run(list(argv), timeout), _read, which, since)
    module.exit_json(changed=False, files=bundle.files,
                     index=bundle.index(since=since, since_from=since_from, seconds=round(time.time() - started, 2)))


if __name__ == "__main__":
    main()
