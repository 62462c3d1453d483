#!/usr/bin/python
# Copyright: ascend.sglang contributors
# Apache License 2.0
# The work happens in the action plugin of the same name, on the controller; this file
# carries the documentation (ansible-doc ascend.sglang.sglang_import_profiles).

from __future__ import annotations

DOCUMENTATION = r"""
module: sglang_import_profiles
short_description: Import a "Best Practice on Ascend NPU" document into profiles
description:
  - Runs on the controller only and contacts no host.
  - Reads a best-practice document, either saved as text (the rendered form of SGLang's Ascend best-practice pages,
    as the collection's own profiles were made from) or as the MDX source of a current per-model page, and writes
    one profile per configuration section into O(dest), in the
    layout the planner reads (the O(ascend.sglang.sglang_plan#module:profiles_dir) option reads such a directory).
  - Each section's table row (model, hardware, cards, mode, dataset, TPOT, quantization, published figures), its
    per-role environment and launch commands, host tuning, CANN lines, router command and benchmark command and
    result are read by running the section's script in bash with recorders, once per host of a stand-in inventory of
    the documented shape; what the document leaves to the operator (addresses, C($((8998+$i))), NIC names,
    C(xxx) and C(your prefill ip1) placeholders, C(hostname -I) loops) becomes the planner's placeholders.
  - "Both forms of the current per-model pages are read: overview tables in HTML or Markdown (a row that links to a
    section belongs to it), C(PD Disaggregation) as the January documents' C(PD Separation), every command block of
    the C(Model Deployment) part as one script (the router has a block of its own), C(<your prefill ip>) and
    C(<your decode ip>) placeholders, and a configuration with prefix caching told apart by its title
    (C(prefix90) in the profile id). The host NIC the pages ask for on a one-node instance
    (C(<network-interface>), C(xxx)) is the planner's loopback binding, as the January one-node scripts set it; a
    NIC the page names there is refused."
  - The collection's recorded deviations and figure corrections for a section of the same title are applied to the
    document text first (O(curate)); one whose text the document no longer has is left out and reported.
  - What cannot be mapped (an unknown construct, a lab address, a flag no supported release has, a value that
    differs between ranks) is refused naming the document line; nothing is written then.
  - Every file written starts with a header line; a file of the same name without it is never overwritten (the
    import is refused). Other files in O(dest) are left alone.
  - Reports, per new or changed profile, what it differs in from the collection's profile of the same id (flags,
    environment, figures and every other field). In check mode only the report is produced.
  - With O(parser_python) (or O(router_python)), each imported profile is planned on stand-in hosts of its documented
    shape for every release it supports, and the server (router) commands of the release that interpreter has
    installed go through that release's own argument parser, run by that interpreter; a command it rejects refuses
    the import, naming the profile, the service and the parser's message. The report says which profiles were
    validated with which release, and which support no release the interpreter has.
version_added: 0.5.0
options:
  source:
    description: >-
      The document to import, a text or MDX file; unset, the run's C(sglang_import_source), read through the
      settings table by the action (required one way or the other).
    type: path
  dest:
    description: >-
      The controller directory the profiles are written into; unset, the run's C(sglang_profiles_dir), read
      through the settings table by the action (required one way or the other).
    type: path
  curate:
    description:
      - Apply the collection's recorded deviations and figure corrections of sections with the same title.
      - With V(false) the document is taken as it is, and every section that needs a fix is refused naming its line.
    type: bool
    default: true
  parser_python:
    description:
      - A Python interpreter on the controller with an SGLang release installed (for example a virtual environment's
        C(bin/python)), whose argument parser validates the imported server commands (C(sglang_import_parser_python)).
      - Unset, the commands are checked against the collection's flag catalogs only, and the report says so.
    type: path
  router_python:
    description:
      - A Python interpreter on the controller with an sglang-router release installed, whose parser validates the
        imported router commands (C(sglang_import_router_python)).
    type: path
extends_documentation_fragment:
  - ascend.sglang.attributes.controller
  - ascend.sglang.attributes.diff
author:
  - ascend.sglang maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: Import a downloaded best-practice document into ./profiles
  ascend.sglang.sglang_import_profiles:
    source: ./best_practice.txt
    dest: ./profiles
  delegate_to: localhost
  run_once: true

- name: Import a per-model page and validate it with the parser of the SGLang installed in a virtual environment
  ascend.sglang.sglang_import_profiles:
    source: ./deepseek_r1.mdx
    dest: ./profiles
    parser_python: /opt/sglang-0.5.9/bin/python
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
document:
  description: The document's id (the leading digits of its file name), recorded as each profile's source.
  returned: success
  type: str
  sample: "000"
dest:
  description: The directory written into.
  returned: success
  type: str
profiles:
  description: One entry per imported profile.
  returned: success
  type: list
  elements: dict
  contains:
    id:
      description: The profile id (the file is C(<id>.yml)).
      type: str
      sample: deepseek_r1_a3_32c_pd_3k5_1k5_50ms
    path:
      description: The file.
      type: str
    status:
      description: C(new), C(changed) or C(unchanged), against the file already in O(dest).
      type: str
    differences:
      description: What the profile differs in from the collection's profile of the same id, one line each.
      type: list
      elements: str
stale_deviations:
  description: Recorded deviations not applied because the document no longer contains their text.
  returned: success
  type: list
  elements: dict
validation:
  description:
    - One line per imported profile and parser, saying which release's parser accepted its commands, or why it was
      not validated.
  returned: success
  type: list
  elements: str
report:
  description: The lines printed for the operator.
  returned: success
  type: list
  elements: str
refusals:
  description: What could not be mapped, one line each, naming the document line.
  returned: failure
  type: list
  elements: str
"""
