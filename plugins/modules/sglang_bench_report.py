#!/usr/bin/python
# Copyright: ascend.sglang contributors
# Apache License 2.0
# The work happens in the action plugin of the same name, on the controller; this file carries the
# documentation (ansible-doc ascend.sglang.sglang_bench_report).

from __future__ import annotations

DOCUMENTATION = r"""
module: sglang_bench_report
short_description: Judge a benchmark run against the profile's published figures; save output, JSON and a PNG chart
description:
  - Runs on the controller with the registered result of M(ascend.sglang.sglang_bench).
  - Saves the raw output, a JSON report (parsed metrics, measured and published figures, their ratios, verdict)
    and a PNG bar chart of measured vs published figures (written by a built-in encoder; nothing to install)
    under O(output_dir), named C(<profile>-<UTC time>.txt|json|png).
  - Compares mean TTFT, TPOT, ITL, output tok/s and output tok/s per card (output tok/s / O(cards))
    with the profile's published figures (ratio measured / published).
  - Fails when a request failed (successful requests < --num-prompts), no token was generated, the result has no
    mean TPOT, or mean TPOT exceeds O(tpot_target_ms) (default the profile's) by more than O(tolerance); also when the
    benchmark exited non-zero or printed no result block.
  - A profile held to a TTFT target (C(ttft_target_ms); a configuration measured by its first token, output 1
    token) fails when mean TTFT exceeds it (or O(ttft_target_ms)) by more than O(tolerance); a profile with a TTFT
    target only needs no TPOT figure.
  - The files are controller-side reports, written in check mode too when there is a result; C(changed) is false.
version_added: 0.3.0
options:
  result:
    description: The registered result of M(ascend.sglang.sglang_bench).
    type: dict
    required: true
  profile:
    description: Profile id (C(sglang_plan.profile)).
    type: str
    required: true
  cards:
    description: Cards the deployment's servers occupy (C(sglang_plan.cards); an A3 card is two NPU dies); default
      those of the profile's documented deployment.
    type: float
  profiles_dir:
    description: Directory of the profiles (default the collection's C(profiles/)).
    type: path
  output_dir:
    description: Controller directory of the reports (bench.yml passes C(sglang_bench_dir) from the plan).
    type: path
    required: true
  tolerance:
    description: >-
      Allowed excess of mean TPOT (and mean TTFT) over its target, as a fraction (0.10 = 10 %). The published
      figures themselves exceed their target by up to 9.6 %. bench.yml passes C(sglang_bench_tpot_tolerance) from
      the plan.
    type: float
    required: true
  tpot_target_ms:
    description: >-
      Mean TPOT target in milliseconds to hold the deployment to instead of the profile's C(tpot_target_ms)
      (e.g. a stricter service level).
    type: float
  ttft_target_ms:
    description: >-
      Mean TTFT target in milliseconds to hold the deployment to instead of the profile's C(ttft_target_ms)
      (bench.yml passes C(sglang_bench_ttft_target_ms)).
    type: float
  chart:
    description: Write the PNG chart.
    type: bool
    default: true
  fail:
    description: Fail the task when the run fails a criterion (C(false) only reports); bench.yml passes
      C(sglang_bench_fail) from the plan.
    type: bool
    required: true
extends_documentation_fragment:
  - ascend.sglang.attributes.controller
author:
  - ascend.sglang maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: Judge the run of the benchmark host
  ascend.sglang.sglang_bench_report:
    result: "{{ hostvars[sglang_plan.bench.host].sglang_bench_result }}"
    profile: "{{ sglang_plan.profile }}"
    output_dir: "{{ sglang_plan.settings.sglang_bench_dir }}"
    tolerance: "{{ sglang_plan.settings.sglang_bench_tpot_tolerance }}"
    fail: "{{ sglang_plan.settings.sglang_bench_fail }}"
"""

RETURN = r"""
passed:
  description: Whether every criterion holds.
  returned: unless skipped
  type: bool
failures:
  description: Every failed criterion, in words.
  returned: unless skipped
  type: list
  elements: str
figures:
  description: Measured mean_ttft_ms, mean_tpot_ms, mean_itl_ms, output_throughput_tok_s, output_tps_per_card.
  returned: unless skipped
  type: dict
comparison:
  description: Per figure, measured, published and ratio (measured / published).
  returned: unless skipped
  type: list
  elements: dict
table:
  description: The comparison as text, one line per element.
  returned: unless skipped
  type: list
  elements: str
files:
  description: Paths of the raw output (C(raw)), the JSON report (C(json)) and the chart (C(chart)).
  returned: unless skipped
  type: dict
"""
