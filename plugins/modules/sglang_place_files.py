#!/usr/bin/python
# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Places a set of files on the managed host in one step (ascend.sglang.sglang_render_files sends them)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: sglang_place_files
short_description: Place several files and their directories on a host in one step, atomically, with their modes
description:
  - Creates the given directories that are missing (an existing directory keeps its mode and owner), then writes each file whose content, mode or owner differs
    from what the host has. A file is written to a temporary file in its directory, which gets its mode and owner
    before any content, then renamed over the old one.
  - Reports C(changed) per file and, in diff mode, a diff per changed file, except files given with
    O(files[].secret_content), whose content never appears in the result.
  - Used by M(ascend.sglang.sglang_render_files), which renders a host's files on the controller and sends them
    here in one module call.
version_added: 0.4.0
options:
  directories:
    description: Directories to create when missing, with their mode.
    type: list
    elements: dict
    default: []
    suboptions:
      path:
        description: Absolute path.
        type: path
        required: true
      mode:
        description: Octal mode, e.g. C(0755).
        type: str
        default: "0755"
  files:
    description: Files to write, in order.
    type: list
    elements: dict
    default: []
    suboptions:
      path:
        description: Absolute path.
        type: path
        required: true
      content:
        description: Content of the file (UTF-8). Shown in diffs.
        type: str
      secret_content:
        description: Content of the file (UTF-8), kept out of the result, the diff and the log.
        type: str
      mode:
        description: Octal mode, e.g. C(0644).
        type: str
        required: true
      owner:
        description: Owner name (unset - left as created).
        type: str
      group:
        description: Group name (unset - left as created).
        type: str
  probe:
    description:
      - Paths to look for, read-only (nothing is created or removed); those that exist are returned in RV(present).
      - Saves the caller a round trip, e.g. M(ascend.sglang.sglang_render_files) finds here the watchdog units left
        from an earlier deployment for services that no longer get one.
    type: list
    elements: path
    default: []
  health:
    description:
      - Services to look at once, read-only, after the files are in place; the result is RV(health).
      - A service with a C(url) is healthy when that URL answers HTTP 200 within O(health_timeout) seconds, one
        without when its unit is active (C(systemctl is-active)). One look, no wait.
      - Saves the caller a round trip, e.g. C(deploy.yml)'s health gate makes no call on a host where nothing
        was (re)started and every service was healthy at this look.
    type: list
    elements: dict
    default: []
    suboptions:
      name:
        description: The service's name (its unit is C(<name>.service)).
        type: str
        required: true
      url:
        description: The URL that answers HTTP 200 when the service is healthy; unset - the unit must be active.
        type: str
  health_timeout:
    description: Seconds each HTTP request of O(health) may take (the plan's C(sglang_health_timeout)); required
      with O(health).
    type: int
  running:
    description:
      - Units to judge once the files are in place, read-only; the result is RV(running).
      - A unit that runs is judged against the start record its C(ExecStartPre) wrote in
        C(/run/sglang/<unit>.started), the digest of every file it started from (see the role
        ascend.sglang.sglang_service). It has a restart pending when one of those files differs now, when systemd
        has not loaded its changed unit file, or when no record of its current start exists.
      - Saves the caller a round trip, e.g. M(ascend.sglang.sglang_render_files) finds here the services that run
        other files than their own because an earlier deployment was cut short before it restarted them.
    type: list
    elements: str
    default: []
  sysctl:
    description:
      - Kernel settings to apply once the files are in place (those of the host's C(90-sglang.conf) among them).
        Each setting's live value is read where sysctl(8) reads it, C(<dir>/<name>) with the dots of the name as
        slashes, and written where it differs (whitespace-normalized, as sysctl prints multi-value settings); the
        result is RV(sysctl).
      - Saves the caller a round trip per setting, e.g. the role ascend.sglang.host_tuning persists and applies the
        plan's kernel settings in one call.
    type: dict
    suboptions:
      dir:
        description: Where the kernel settings are read and written (C(/proc/sys) on a host).
        type: path
        required: true
      values:
        description: Setting name (as sysctl(8) takes it) to value.
        type: dict
        required: true
  record_start:
    description:
      - Also record a deploy's start (seconds since the epoch) in C(/var/lib/sglang/last-deploy.json), root only, the
        default start of a later collection's journal window (playbook C(ascend.sglang.collect)).
      - Bookkeeping, as a log line is - not a change, not written in check mode. Saves the deployment a round trip.
    type: float
  record_profile:
    description: Profile name written with O(record_start).
    type: str
    default: ""
  record_path:
    description: Where O(record_start) is written (collection's C(sglang_gather) reads it there).
    type: path
    default: /var/lib/sglang/last-deploy.json
extends_documentation_fragment:
  - ascend.sglang.attributes.host
attributes:
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: full
author:
  - ascend.sglang maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: Two files in one step
  ascend.sglang.sglang_place_files:
    directories:
      - path: /etc/example
    files:
      - path: /etc/example/a.conf
        content: "a = 1\n"
        mode: "0644"
      - path: /etc/example/token
        secret_content: "{{ token }}\n"
        mode: "0600"
        owner: root
        group: root
"""

RETURN = r"""
files:
  description: One entry per file, in the order given.
  returned: always
  type: list
  elements: dict
  contains:
    path:
      description: The file's path.
      type: str
    changed:
      description: Whether it was (or in check mode would be) written or its mode or owner set.
      type: bool
    new:
      description: Whether there was no file at its path before.
      type: bool
present:
  description: The paths of O(probe) that exist (a broken symbolic link counts), in the order given.
  returned: always
  type: list
  elements: str
health:
  description: Per service of O(health), C(healthy) and C(status) (the HTTP status or error, or the unit's state).
  returned: always
  type: dict
  sample:
    sglang-mixed-i0:
      healthy: true
      status: "200"
sysctl:
  description: The settings of O(sysctl) whose live value differed, in the order given (written, or in check mode
    to be written).
  returned: always
  type: list
  elements: dict
  sample:
    - name: vm.swappiness
      before: "60"
      after: "0"
running:
  description: Per unit of O(running), whether it runs and has a restart pending.
  returned: always
  type: dict
  sample:
    sglang-decode-i0-r1.service:
      unit: sglang-decode-i0-r1.service
      running: true
      pending: true
      reason: files changed since it started
      files: [/etc/sglang/sglang-decode-i0-r1.env]
      need_daemon_reload: false
directories:
  description: One entry per directory, in the order given.
  returned: always
  type: list
  elements: dict
  contains:
    path:
      description: The directory's path.
      type: str
    changed:
      description: Whether it was (or would be) created or its mode set.
      type: bool
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ascend.sglang.plugins.module_utils.files._atomic_files import place_all
from ansible_collections.ascend.sglang.plugins.module_utils.files._deploy_record import DEPLOY_RECORD, write_record
from ansible_collections.ascend.sglang.plugins.module_utils.files._started import check_units
from ansible_collections.ascend.sglang.plugins.module_utils.files._sysctl import apply_settings
from ansible_collections.ascend.sglang.plugins.module_utils.files._units import bad_names
from ansible_collections.ascend.sglang.plugins.module_utils.http._health_wait import look


def _argument_spec() -> dict:
    return {
        "directories": {"type": "list", "elements": "dict", "default": [], "options": {
            "path": {"type": "path", "required": True},
            "mode": {"type": "str", "default": "0755"}}},
        "files": {
            "type": "list", "elements": "dict", "default": [],
            "options": {
                "path": {"type": "path", "required": True},
                "content": {"type": "str"},
                "secret_content": {"type": "str", "no_log": True},
                "mode": {"type": "str", "required": True},
                "owner": {"type": "str"},
                "group": {"type": "str"}},
            "required_one_of": [["content", "secret_content"]],
            "mutually_exclusive": [["content", "secret_content"]]},
        "probe": {"type": "list", "elements": "path", "default": []},
        "running": {"type": "list", "elements": "str", "default": []},
        "health": {"type": "list", "elements": "dict", "default": [], "options": {
            "name": {"type": "str", "required": True},
            "url": {"type": "str"}}},
        # The plan's sglang_health_timeout: no default here (the settings table holds it).
        "health_timeout": {"type": "int"},
        "sysctl": {"type": "dict", "options": {
            "dir": {"type": "path", "required": True},
            "values": {"type": "dict", "required": True}}},
        "record_start": {"type": "float"},
        "record_profile": {"type": "str", "default": ""},
        "record_path": {"type": "path", "default": DEPLOY_RECORD},
    }


def _apply_sysctl(module: AnsibleModule, result: dict) -> list:
    """O(sysctl) applied once the files are in place (the settings' persisted file among them)."""
    spec = module.params["sysctl"]
    if not spec:
        return []
    values = {str(name): str(value) for name, value in spec["values"].items()}
    try:
        applied = apply_settings(spec["dir"], values, module.check_mode)
    except (OSError, ValueError) as exc:
        module.fail_json(msg=str(exc), changed=result["changed"], files=result["files"])
    if applied:
        result["changed"] = True
        if module._diff:
            result["diff"].append({"before_header": f"{spec['dir']} (live kernel settings)",
                                   "after_header": f"{spec['dir']} (live kernel settings)",
                                   "before": "".join(f"{c['name']} = {c['before']}\n" for c in applied),
                                   "after": "".join(f"{c['name']} = {c['after']}\n" for c in applied)})
    return applied


def main() -> None:
    module = AnsibleModule(
        argument_spec=_argument_spec(),
        supports_check_mode=True,
    )
    bad = bad_names([{"unit": unit} for unit in module.params["running"]]
                    + [{"unit": f"{svc['name']}.service"} for svc in module.params["health"]])
    if bad:
        module.fail_json(msg=f"running, health: not a unit name ending in .service: {', '.join(bad)}")
    if module.params["health"] and (module.params["health_timeout"] or 0) < 1:
        module.fail_json(msg="health_timeout: at least 1 second is required with health")
    if module.params["record_start"] is not None and not module.check_mode:
        try:
            write_record(module.params["record_path"], module.params["record_start"], module.params["record_profile"])
        except OSError as exc:
            module.fail_json(msg=f"cannot record the deploy's start in {module.params['record_path']}: {exc}")
    try:
        directories = [{"path": d["path"], "mode": int(d["mode"], 8)} for d in module.params["directories"]]
        files = []
        for f in module.params["files"]:
            secret = f["secret_content"] is not None
            text = f["secret_content"] if secret else f["content"]
            files.append({"path": f["path"], "data": text.encode("utf-8"), "mode": int(f["mode"], 8),
                          "owner": f["owner"], "group": f["group"], "sensitive": secret})
        result = place_all(directories, files, module.check_mode, module._diff)
    except (OSError, KeyError, ValueError) as exc:
        module.fail_json(msg=f"placing the files failed: {exc}")
    result["sysctl"] = _apply_sysctl(module, result)
    result["present"] = [path for path in module.params["probe"] if os.path.lexists(path)]
    result["running"] = check_units(module.params["running"], module.run_command,
                                    module.get_bin_path("systemctl") if module.params["running"] else None)
    systemctl = (module.get_bin_path("systemctl", required=True)
                 if any(not svc["url"] for svc in module.params["health"]) else None)
    result["health"] = {svc["name"]: look(svc["name"], svc["url"], module.params["health_timeout"],
                                          module.run_command, systemctl)
                        for svc in module.params["health"]}
    diff = result.pop("diff")
    if diff:
        result["diff"] = diff
    module.exit_json(**result)


if __name__ == "__main__":
    main()
