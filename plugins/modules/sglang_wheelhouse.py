#!/usr/bin/python
# Copyright: ascend.sglang contributors
# Apache License 2.0
# The work happens in the action plugin of the same name, on the controller; this file carries the
# documentation (ansible-doc ascend.sglang.sglang_wheelhouse).

from __future__ import annotations

DOCUMENTATION = r"""
module: sglang_wheelhouse
short_description: Copy a controller directory (a wheelhouse) to a host in one transfer
description:
  - Lists the regular files below O(src) on the controller (a symbolic link to a file counts as the file), asks the
    host which of them differ under O(dest) (M(ascend.sglang.sglang_place_archive) - rsync's quick check, size and
    modification time), then sends only those, in one uncompressed tar archive, which the host unpacks with each
    file placed atomically, with O(mode) and the controller's modification time.
  - One round trip when nothing differs, three when something does, whatever the number of files;
    M(ansible.builtin.copy) of a directory costs several per file and host. Files under O(dest) that O(src) does
    not hold are left alone.
  - The roles copy O(src) = C(sglang_wheelhouse) with it before an offline install (server stack, sglang-router).
version_added: 0.4.0
options:
  src:
    description: The directory on the controller.
    type: path
    required: true
  dest:
    description: The directory on the host. Created with O(directory_mode) when missing.
    type: path
    required: true
extends_documentation_fragment:
  - ascend.sglang.file_modes
  - ascend.sglang.attributes.controller
author:
  - ascend.sglang maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: Copy the local wheelhouse to the host
  ascend.sglang.sglang_wheelhouse:
    src: "{{ sglang_wheelhouse }}"
    dest: /opt/sglang-wheels
"""

RETURN = r"""
transfer:
  description: The files of O(src) that differed on the host (relative paths), sent in this run (none in check mode).
  returned: always
  type: list
  elements: str
chmod:
  description: The files that only differed in mode.
  returned: always
  type: list
  elements: str
written:
  description: The paths written on the host.
  returned: always
  type: list
  elements: str
"""
