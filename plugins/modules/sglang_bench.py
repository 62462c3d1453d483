#!/usr/bin/python
# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Run the profile's documented sglang.bench_serving command (with overrides) and parse its result."""

from __future__ import annotations

DOCUMENTATION = r"""
module: sglang_bench
short_description: Run the documented sglang.bench_serving command against the deployment and parse its result
description:
  - Runs on the benchmark host (the router's host, or the first PD-mixed server's host). Applies
    O(overrides) to the plan's benchmark flags, runs C(python -m module) with them (bounded by O(timeout)) and parses the last
    "Serving Benchmark Result" block of its output.
  - Returns the output and the figures; judging them against the profile is left to
    M(ascend.sglang.sglang_bench_report) on the controller, which also saves the raw output.
  - Writes nothing on the host, so C(changed) is always false. In check mode the command is not run;
    the final argv is returned.
version_added: 0.3.0
options:
  flags:
    description: >-
      The plan's benchmark flags in order (C(sglang_plan.bench.flags)), each a pair C([flag, [values...]]);
      a flag without a value has an empty list.
    type: list
    elements: raw
    required: true
  module:
    description: The Python module the benchmark runs (C(sglang_plan.bench.module)).
    type: str
    default: sglang.bench_serving
  prefix:
    description: >-
      Words run before the argv: the engine command of the container runtime (C(sglang_plan.bench.container)),
      which runs the benchmark in the SGLang image. Empty on the host runtime.
    type: list
    elements: str
    default: []
  overrides:
    description: >-
      Flag -> value changes, e.g. C({--num-prompts: 64, --dataset-name: random-ids}); a list gives several
      values, C(true) a bare flag, C(null) or C(false) removes the flag. Flags must be full C(--names). Unset: the
      plan's flags as they are (the playbooks pass C(sglang_bench_overrides), whose default the settings table holds).
    type: dict
  python:
    description: >-
      Interpreter with SGLang installed on the benchmark host (the plan's C(sglang_bench_python): the operator's,
      else the servers').
    type: str
    required: true
  tokenizer:
    description: Local tokenizer directory (C(--tokenizer)), for hosts without access to a model hub.
    type: str
  model:
    description: Model name or path passed as C(--model).
    type: str
  timeout:
    description: Seconds after which the benchmark is killed and the task fails (bench.yml passes
      C(sglang_bench_timeout) from the plan).
    type: int
    required: true
  environment:
    description: >-
      Extra environment variables of the benchmark process (e.g. C(HF_HUB_OFFLINE=1)); unset, none (the playbooks
      pass C(sglang_bench_environment), whose default the settings table holds).
    type: dict
extends_documentation_fragment:
  - ascend.sglang.attributes.host
author:
  - ascend.sglang maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: Run the documented benchmark with a local tokenizer and fewer prompts
  ascend.sglang.sglang_bench:
    python: "{{ sglang_plan.bench.python }}"
    module: "{{ sglang_plan.bench.module }}"
    flags: "{{ sglang_plan.bench.flags }}"
    overrides: {--num-prompts: 64}
    tokenizer: /data/models/DeepSeek-R1-W8A8
    timeout: "{{ sglang_plan.settings.sglang_bench_timeout }}"
  register: sglang_bench_result
"""

RETURN = r"""
argv:
  description: The command that ran (or would run in check mode).
  returned: always
  type: list
  elements: str
rc:
  description: Exit status of the benchmark (-1 when it did not run).
  returned: always
  type: int
stdout:
  description: The benchmark's output.
  returned: always
  type: str
stderr:
  description: The benchmark's error output.
  returned: always
  type: str
parsed:
  description:
    - The parsed result block (C(metrics), C(unknown), C(duplicates); none of them when the output has no block)
      and C(num_prompts), the prompts the command sends (its C(--num-prompts), else bench_serving's default 1000),
      which M(ascend.sglang.sglang_bench_report) holds the successful requests to.
  returned: always
  type: dict
parse_error:
  description: Why the output could not be parsed.
  returned: when the output has no result block
  type: str
duration_s:
  description: Wall-clock seconds of the run.
  returned: always
  type: float
"""

import os
import subprocess
import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.ascend.sglang.plugins.module_utils.bench._bench import BenchParseError, command, parse_result


def main():
    module = AnsibleModule(
        argument_spec={
            "flags": {"type": "list", "elements": "raw", "required": True},
            "module": {"type": "str", "default": "sglang.bench_serving"},
            "prefix": {"type": "list", "elements": "str", "default": []},
            "overrides": {"type": "dict"},
            "python": {"type": "str", "required": True},
            "tokenizer": {"type": "str", "no_log": False},  # a directory, not a secret
            "model": {"type": "str"},
            "timeout": {"type": "int", "required": True},
            "environment": {"type": "dict"},
        },
        supports_check_mode=True,
    )
    p = module.params
    overrides = dict(p["overrides"] or {})
    for flag, value in (("--tokenizer", p["tokenizer"]), ("--model", p["model"])):
        if value:
            overrides[flag] = value
    try:
        argv, prompts = command(p["python"], p["module"], p["flags"], overrides)
    except ValueError as exc:
        module.fail_json(msg=str(exc))
    # sglang_runtime container: the engine command that runs the argv in the image (plan bench.container).
    argv = list(p["prefix"] or []) + argv
    result = {"changed": False, "argv": argv, "rc": -1, "stdout": "", "stderr": "",
              "parsed": {"num_prompts": prompts}, "duration_s": 0.0}
    if module.check_mode:
        module.exit_json(msg="check mode: the benchmark was not run", **result)
    env = dict(os.environ, **{str(k): str(v) for k, v in (p["environment"] or {}).items()})
    start = time.monotonic()
    try:
        # An argv list, no shell: nothing of the profile or the overrides is interpreted by a shell.
        # Not module.run_command: the benchmark must be killed after p["timeout"] seconds.
        proc = subprocess.run(  # pylint: disable=ansible-bad-function
            argv, capture_output=True, text=True, timeout=p["timeout"], env=env, check=False)
        result.update(rc=proc.returncode, stdout=proc.stdout, stderr=proc.stderr)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode("utf-8", "replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        result.update(rc=-1, stdout=out, duration_s=round(time.monotonic() - start, 1))
        module.fail_json(msg=f"the benchmark did not finish within {p['timeout']} s and was killed", **result)
    except OSError as exc:
        module.fail_json(msg=f"cannot run {argv[0]}: {exc}", **result)
    result["duration_s"] = round(time.monotonic() - start, 1)
    try:
        result["parsed"] = dict(parse_result(result["stdout"]), num_prompts=prompts)
    except BenchParseError as exc:
        result["parse_error"] = str(exc)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
