#!/usr/bin/python
# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Brings a directory to a list of files: tells which differ, or places them from one archive
(ascend.sglang.sglang_wheelhouse sends it)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: sglang_place_archive
short_description: Bring a directory of files to a list of names, sizes and times, from one archive
description:
  - Compares the files under O(dest) with O(files) (rsync's quick check - the size and the modification time, in
    whole seconds), reports those that differ in RV(transfer) and sets O(mode) on the listed files that only
    differ in mode (RV(chmod)).
  - With O(archive), an uncompressed tar archive on the host holding exactly the files of RV(transfer), also places
    each of them under O(dest) - a temporary file in its directory, its mode and modification time, then a rename
    over the old one. An archive with any other member
    (another name, a link, a device, a path with C(..)) or a member of another size is refused before anything is
    written.
  - Files under O(dest) that O(files) does not list are left alone.
  - Used by M(ascend.sglang.sglang_wheelhouse), which lists a controller directory, asks this module what differs,
    and sends only those files, in one archive.
version_added: 0.4.0
options:
  dest:
    description: The directory on the host. Created with O(directory_mode) when missing.
    type: path
    required: true
  files:
    description: The wanted files - relative path (C(/)-separated) to C(size) (bytes) and C(mtime) (seconds).
    type: dict
    required: true
  archive:
    description: A tar archive on the host holding the files to place (see RV(transfer)).
    type: path
extends_documentation_fragment:
  - ascend.sglang.file_modes
  - ascend.sglang.attributes.host
author:
  - ascend.sglang maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: Which files of the list differ on the host
  ascend.sglang.sglang_place_archive:
    dest: /opt/sglang-wheels
    files:
      sglang_router-0.3.0-cp38-abi3-manylinux_2_28_x86_64.whl: {size: 4194304, mtime: 1764000000}
  register: wheelhouse
"""

RETURN = r"""
transfer:
  description: The listed files that are missing, not regular files, or of another size or modification time.
  returned: always
  type: list
  elements: str
chmod:
  description: The listed files that only differ in mode.
  returned: always
  type: list
  elements: str
written:
  description: The paths written from O(archive).
  returned: when O(archive) is given
  type: list
  elements: str
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ascend.sglang.plugins.module_utils.files._wheelhouse import ArchiveError, differing, unpack


def main() -> None:
    module = AnsibleModule(
        argument_spec=dict(
            dest=dict(type="path", required=True),
            files=dict(type="dict", required=True),
            archive=dict(type="path"),
            mode=dict(type="str", default="0644"),
            directory_mode=dict(type="str", default="0755"),
        ),
        supports_check_mode=True,
    )
    params = module.params
    try:
        mode, directory_mode = int(params["mode"], 8), int(params["directory_mode"], 8)
    except ValueError:
        module.fail_json(msg=f"mode and directory_mode are octal numbers (got {params['mode']!r}, "
                             f"{params['directory_mode']!r})")
    dest, files = params["dest"], params["files"]
    try:
        for entry in files.values():
            if not isinstance(entry, dict) or int(entry["size"]) < 0:
                raise ValueError(entry)
            int(entry["mtime"])
    except (KeyError, TypeError, ValueError):
        module.fail_json(msg="files maps each relative path to {size: bytes, mtime: seconds}")
    try:
        transfer, chmod = differing(dest, files, mode)
    except (ArchiveError, OSError) as exc:
        module.fail_json(msg=f"{dest}: {exc}")
    result = dict(changed=bool(transfer or chmod), transfer=transfer, chmod=chmod)
    if module.check_mode:
        module.exit_json(**result)
    try:
        for name in chmod:
            os.chmod(os.path.join(dest, name), mode)
        if params["archive"] is not None:
            result["written"] = unpack(params["archive"], dest, files, transfer, mode, directory_mode)
    except (ArchiveError, OSError) as exc:
        module.fail_json(msg=f"{dest}: {exc}", **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
