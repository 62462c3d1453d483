#!/usr/bin/python
# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Stages model weights on the managed host: observes, pulls what the host lacks, serves a verified copy."""

from __future__ import annotations

DOCUMENTATION = r"""
module: sglang_stage
short_description: Stage model weights on a host - observe, pull what it lacks, serve a verified copy to others
description:
  - With O(state=observe), reports for each model directory of O(models) what the host holds (each file's size and
    mtime), what an interrupted pull staged already, the free bytes where the files go, and the source's listing as
    the host reads it with rsync (which proves the host reaches the source). Changes nothing.
  - With O(state=pull) (the action plugin of the same name runs it), fetches the C(files) of each of O(pulls) from
    its C(source) with rsync into C(<parent>/.<name>.sglang-stage/) beside the model directory, printing one
    progress line (bytes, rate, ETA) every O(interval) seconds, then checks every file against
    its C(expected) sizes (the source's) and renames each fetched file into the model directory, which is
    created with O(owner) and O(mode). Nothing partial is ever under the model directory - an interrupted file's
    bytes stay in the staging directory, and the next pull resumes from them. A file already in place that
    differs is replaced by rename, never written over.
  - With O(verify=full), rsync compares every file with its sender by content (transferring what differs), and the
    sha256 of every file of the directory is returned and kept in the weights checks' digest cache (what
    C(ascend.sglang.preflight) reads), so that the controller can check the hosts' copies agree.
  - With O(state=serve), runs a read-only rsync daemon on O(port) that serves each of O(models) to the addresses
    of O(allow) only (kept when it already serves exactly that). O(state=unserve) stops it.
  - O(state=start), O(state=poll), O(state=finish) and O(state=stop) are the steps of a pull the action plugin
    runs one by one.
  - Used by the playbook C(ascend.sglang.stage_weights), which plans who pulls from whom.
version_added: 0.5.0
options:
  state:
    description: What to do.
    type: str
    required: true
    choices: [observe, pull, start, poll, finish, stop, serve, unserve]
  models:
    description:
      - With O(state=observe), the model directories and their sources - C(/path) on shared storage,
        C([user@]host:/path) (rsync over ssh) or C(rsync://host[:port]/module/path).
      - With O(state=serve), the daemon's modules - C(name) (letters, digits, C(.), C(_), C(-)) and C(path).
    type: list
    elements: dict
    default: []
  pulls:
    description:
      - With O(state=pull), each directory to pull - C(path), C(source) (as in O(models), or a serving host's
        C(rsync://) module), C(files) (relative paths), C(expected) (relative path to size, every file of the
        source), C(bytes) (what the files may amount to, for the progress line), C(sender) (shown).
      - With O(state=start), O(state=poll), O(state=finish) and O(state=stop), one item.
    type: list
    elements: dict
    default: []
  verify:
    description: V(sizes) - the files have the source's sizes; V(full) - also compared by content, sha256 returned.
      Required by the states of a pull.
    type: str
    choices: [sizes, full]
  owner:
    description: Owner (C(user) or C(user:group)) of the directories and files moved into place; empty - left as
      created.
    type: str
    default: ''
  mode:
    description: Octal mode of the directories created; the files get it without the execute bits. Required by
      O(state=pull) and O(state=finish).
    type: str
  rsync:
    description: The rsync command on the host.
    type: str
    required: true
  bwlimit:
    description: KiB/s a transfer may take; V(0) - no limit. Required by O(state=pull) and O(state=start).
    type: int
  timeout:
    description: Seconds a listing (O(state=observe)) or a whole pull (O(state=pull)) may take.
    type: int
  interval:
    description: Seconds between two progress lines of a pull. Required by O(state=pull).
    type: int
  allow:
    description: With O(state=serve), the addresses the daemon serves.
    type: list
    elements: str
    default: []
  port:
    description: The daemon's port. Required by O(state=serve).
    type: int
notes:
  - Needs rsync on the host (and, for an ssh source, the host's ssh to reach it; for a tree, the port O(port) of
    every serving host open to the others).
extends_documentation_fragment:
  - ascend.sglang.attributes.host
author:
  - ascend.sglang maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: What the host holds and what the source has
  ascend.sglang.sglang_stage:
    state: observe
    models:
      - path: /data/models/DeepSeek-R1-W8A8
        source: weights01:/export/models/DeepSeek-R1-W8A8
    rsync: rsync
    timeout: 300
  register: observed

- name: Pull what it lacks
  ascend.sglang.sglang_stage:
    state: pull
    pulls:
      - path: /data/models/DeepSeek-R1-W8A8
        source: weights01:/export/models/DeepSeek-R1-W8A8
        files: [model-00001-of-00163.safetensors]
        expected: {model-00001-of-00163.safetensors: 4302290944}
        bytes: 4302290944
    verify: sizes
    mode: "0755"
    owner: hwhiaiuser:hwhiaiuser
    rsync: rsync
    bwlimit: 0
    timeout: "{{ sglang_plan.settings.sglang_stage_timeout }}"
    interval: "{{ sglang_plan.settings.sglang_stage_progress_interval }}"
"""

RETURN = r"""
models:
  description: With O(state=observe), per directory - C(path), C(exists), C(files) (relative path to [size, mtime]),
    C(staged) (relative path to size), C(free), C(source) (relative path to [size, mtime]), C(source_error).
  returned: when O(state=observe)
  type: list
  elements: dict
addresses:
  description: With O(state=observe), the host's own addresses (the pullers' connections come from one of them).
  returned: when O(state=observe)
  type: list
  elements: str
pulls:
  description: With O(state=pull), per directory - C(path), C(sender), C(moved) (the files moved into place),
    C(transferred) (bytes), C(seconds), C(digests) (with O(verify=full)).
  returned: when O(state=pull)
  type: list
  elements: dict
pid:
  description: The rsync of the pull (O(state=start)), or the daemon (O(state=serve)).
  returned: when O(state=start) or O(state=serve)
  type: int
attached:
  description: With O(state=start), whether an rsync an earlier run started for this directory still ran and is
    followed instead of a new one.
  returned: when O(state=start)
  type: bool
running:
  description: With O(state=poll), whether the rsync still runs.
  returned: when O(state=poll)
  type: bool
exit_code:
  description: With O(state=poll), rsync's exit status once it ended (V(-1) - it ended without one, for example
    killed with its waiter); null while it runs.
  returned: when O(state=poll)
  type: int
progress:
  description: With O(state=poll), rsync's last progress update - C(bytes), C(percent), C(rate) (bytes/s), C(eta)
    (seconds).
  returned: when O(state=poll)
  type: dict
error:
  description: With O(state=poll), what rsync said went wrong.
  returned: when O(state=poll)
  type: str
moved:
  description: With O(state=finish), the files moved into place.
  returned: when O(state=finish)
  type: list
  elements: str
digests:
  description: With O(state=finish) and O(verify=full), the sha256 of every file of the directory.
  returned: when O(state=finish)
  type: dict
"""

import re

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ascend.sglang.plugins.module_utils.checks import _weights
from ansible_collections.ascend.sglang.plugins.module_utils.stage import _stage


def _owner_ids(owner: str) -> tuple[int, int]:
    import grp
    import pwd
    if not owner:
        return -1, -1
    user, _sep, group = owner.partition(":")
    try:
        return pwd.getpwnam(user).pw_uid, (grp.getgrnam(group).gr_gid if group else -1)
    except KeyError:
        raise _stage.StageError(f"the owner {owner} (sglang_model_owner) does not exist on the host") from None


def _addresses(module: AnsibleModule) -> list[str]:
    """The host's own addresses (ip -o addr): a serving host lets its pullers' connections in from any of them."""
    ip = module.get_bin_path("ip")
    if not ip:
        return []
    rc, out, _err = module.run_command([ip, "-o", "addr", "show"])
    return sorted({m.group(1) for m in re.finditer(r"\sinet6?\s+([0-9A-Fa-f.:]+)/", out)}) if rc == 0 else []


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "state": {"type": "str", "required": True,
                      "choices": ["observe", "pull", "start", "poll", "finish", "stop", "serve", "unserve"]},
            "models": {"type": "list", "elements": "dict", "default": []},
            "pulls": {"type": "list", "elements": "dict", "default": []},
            "verify": {"type": "str", "choices": ["sizes", "full"]},
            "owner": {"type": "str", "default": ""},
            "mode": {"type": "str"},
            "rsync": {"type": "str", "required": True},
            "bwlimit": {"type": "int"},
            "timeout": {"type": "int"},
            "interval": {"type": "int"},
            "allow": {"type": "list", "elements": "str", "default": []},
            "port": {"type": "int"},
        },
        required_if=[("state", "observe", ["timeout"]), ("state", "serve", ["port"]),
                     ("state", "pull", ["verify", "mode", "bwlimit", "timeout", "interval"]),
                     ("state", "start", ["verify", "bwlimit"]), ("state", "finish", ["verify", "mode"])],
        supports_check_mode=True,
    )
    p = module.params
    state = p["state"]
    full = p["verify"] == "full"
    try:
        if state == "observe":
            models = [_stage.observe(m["path"], m["source"], p["rsync"], p["timeout"]) for m in p["models"]]
            module.exit_json(changed=False, models=models, addresses=_addresses(module))
        if state == "pull":
            module.fail_json(msg="state=pull runs through the action plugin ascend.sglang.sglang_stage")
        if state in ("serve", "unserve"):
            if state == "unserve":
                module.exit_json(changed=_stage.unserve(module.check_mode))
            module.exit_json(**_stage.serve(p["models"], p["allow"], p["port"], p["rsync"], module.check_mode))
        if len(p["pulls"]) != 1:
            module.fail_json(msg=f"state={state} takes one item of pulls")
        pull = p["pulls"][0]
        if state == "start":
            out = _stage.start(pull["path"], pull["source"], list(pull.get("files") or []), full, p["rsync"],
                               p["bwlimit"], module.check_mode)
            module.exit_json(changed=out["started"], **out)
        if state == "poll":
            module.exit_json(changed=False, **_stage.poll(pull["path"]))
        if state == "stop":
            module.exit_json(changed=_stage.stop(pull["path"]))
        uid, gid = _owner_ids(p["owner"])
        out = _stage.finish(pull["path"], {k: int(v) for k, v in (pull.get("expected") or {}).items()}, full, uid, gid,
                            int(p["mode"], 8), _weights.CACHE, module.check_mode)
        module.exit_json(changed=bool(out["moved"]), **out)
    except _stage.StageError as exc:
        module.fail_json(msg=str(exc))
    except OSError as exc:
        module.fail_json(msg=f"{state}: {exc}")


if __name__ == "__main__":
    main()
