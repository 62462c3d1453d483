#!/usr/bin/python
# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Keeps the last good generation of each service's files on the managed host and puts it back (upgrade.yml)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: sglang_generation
short_description: Keep the last good generation of each service's files on a host, and put it back
description:
  - With O(state=saved), keeps each service's files as they are now as its generation, in
    C(<dir>/<name>/) - a C(manifest.json) listing each path in the order given with whether it exists, its mode,
    owner, group and sha256, and the content of each file that exists, one blob per content. A file that does
    not exist is recorded as absent; putting the generation back removes it.
  - The new generation is written whole beside the old one (C(<dir>/.<name>.new)) and then takes its place by
    rename; the old one is removed. Every file is read before anything is written - a file that cannot be read
    fails the call with nothing written. A service whose saved generation already holds exactly these files is
    left alone (not changed).
  - The files may hold secrets - O(dir) (when created here) and each generation's directory are mode C(0700),
    each blob C(0600). No content of any file appears in the result.
  - With O(state=restored), first checks that every service has a saved generation, and fails naming those
    without one, having changed nothing. Then puts each file of each generation back - a file that existed when it
    was saved gets its content, mode, owner and group back where any of them differs (written to a temporary
    file in its directory, which gets its mode and owner before any content, then renamed; its directory is
    created C(0755) when missing); a file that did not exist then is removed.
  - Used by the playbook C(ascend.sglang.upgrade) - it keeps the files every server runs before it writes new
    ones, and puts them back on the instances of a wave that failed; O(services) is
    the C(generation) of each host in the schedule of P(ascend.sglang.sglang_upgrade_schedule#filter).
version_added: 0.5.0
options:
  dir:
    description:
      - Absolute path of the directory the generations are kept in, one directory per service. Created C(0700)
        when missing (an existing directory keeps its mode and owner).
    type: path
    required: true
  state:
    description:
      - V(saved) keeps the files as they are now as each service's generation, replacing the one saved before.
      - V(restored) puts each service's saved generation back.
    type: str
    required: true
    choices: [saved, restored]
  services:
    description:
      - The services and their files.
    type: list
    elements: dict
    required: true
    suboptions:
      name:
        description:
          - The service's name, which names its generation - a plain file name of letters, digits, C(.), C(_) and
            C(-), not starting with C(.).
        type: str
        required: true
      files:
        description:
          - Absolute paths of the service's files, in order. Each must be a regular file or not exist.
          - With O(state=restored) they are not used - the generation saved under O(services[].name) lists the
            paths put back, those given when it was saved.
        type: list
        elements: path
        default: []
notes:
  - Not a backup - only the last generation saved is kept per service.
  - A file's owner or group is recorded by name (its number when it has no name) and set back by that name.
extends_documentation_fragment:
  - ascend.sglang.attributes.host
author:
  - ascend.sglang maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: Keep the files the servers run now
  ascend.sglang.sglang_generation:
    dir: /var/lib/sglang/generations
    state: saved
    services:
      - name: sglang-decode-0
        files:
          - /etc/sglang/sglang-decode-0.env
          - /etc/sglang/sglang-decode-0.secrets
          - /usr/local/bin/sglang-decode-0.sh
          - /etc/systemd/system/sglang-decode-0.service

- name: Put them back
  ascend.sglang.sglang_generation:
    dir: /var/lib/sglang/generations
    state: restored
    services:
      - name: sglang-decode-0
  register: restored

- name: Load the unit files put back
  ansible.builtin.systemd_service:
    daemon_reload: true
  when: restored.daemon_reload
"""

RETURN = r"""
services:
  description: The names of the services handled, in the order given.
  returned: always
  type: list
  elements: str
  sample: [sglang-decode-0]
saved:
  description: One entry per service, in the order given.
  returned: when O(state=saved)
  type: list
  elements: dict
  contains:
    service:
      description: The service's name.
      type: str
    files:
      description: How many of its files exist and were kept (the others are recorded as absent).
      type: int
    changed:
      description: Whether its saved generation differs (or in check mode would differ) from the one saved before,
        or there was none.
      type: bool
  sample:
    - service: sglang-decode-0
      files: 3
      changed: true
restored:
  description: The files written or removed (or in check mode to be), in the order of each generation.
  returned: when O(state=restored)
  type: list
  elements: dict
  contains:
    service:
      description: The service's name.
      type: str
    path:
      description: The file's path.
      type: str
    action:
      description: C(written) (content, mode or owner put back) or C(removed) (it did not exist when saved).
      type: str
  sample:
    - service: sglang-decode-0
      path: /etc/sglang/sglang-decode-0.env
      action: written
daemon_reload:
  description: Whether a path written or removed ends in C(.service) - systemd needs a daemon-reload.
  returned: when O(state=restored)
  type: bool
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ascend.sglang.plugins.module_utils.files._generations import GenerationError, restore, save


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "dir": {"type": "path", "required": True},
            "state": {"type": "str", "required": True, "choices": ["saved", "restored"]},
            "services": {"type": "list", "elements": "dict", "required": True, "options": {
                "name": {"type": "str", "required": True},
                "files": {"type": "list", "elements": "path", "default": []}}},
        },
        supports_check_mode=True,
    )
    act = save if module.params["state"] == "saved" else restore
    try:
        result = act(module.params["dir"], module.params["services"], module.check_mode)
    except GenerationError as exc:
        module.fail_json(msg=str(exc))
    except OSError as exc:
        module.fail_json(msg=f"{module.params['state']}: {exc}")
    module.exit_json(**result)


if __name__ == "__main__":
    main()
