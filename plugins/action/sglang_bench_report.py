# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Controller side of the benchmark: saves the raw output, judges the parsed figures against the
profile's published ones and target, writes the JSON report and the PNG chart."""

from __future__ import annotations

import datetime
import json
import os

from ansible.errors import AnsibleActionFail
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase

from ansible_collections.ascend.sglang.plugins.plugin_utils.report._bench_verdict import (
    DEFAULT_TPOT_TOLERANCE, evaluate, render_table,
)
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import PlanError
from ansible_collections.ascend.sglang.plugins.plugin_utils.report._png import bench_chart
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import load_profile
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._serialize import plain


def _write(path: str, data: bytes) -> None:
    tmp = path + ".tmp"
    with open(tmp, "wb") as handle:
        handle.write(data)
    os.replace(tmp, path)


def _ms(args: dict, key: str) -> float | None:
    """An optional target in milliseconds from the task's arguments (None: the profile's)."""
    value = args.get(key)
    try:
        return float(value) if value not in (None, "") else None
    except (TypeError, ValueError):
        raise AnsibleActionFail(f"{key}: a number of milliseconds, not {value!r}") from None


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("result", "profile", "profiles_dir", "output_dir", "tolerance", "tpot_target_ms", "chart",
                             "fail", "cards", "ttft_target_ms"))
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super().run(tmp, task_vars)
        args = plain(self._task.args)  # plain Python: Ansible's tagged types reach no writer
        run = args.get("result")
        # Required (the playbooks pass the plan's sglang_bench_dir and sglang_bench_fail): no default here.
        missing = [name for name in ("output_dir", "fail") if args.get(name) in (None, "")]
        if missing:
            raise AnsibleActionFail(f"missing required arguments: {', '.join(missing)}")
        if not isinstance(run, dict):
            raise AnsibleActionFail("result: the registered result of ascend.sglang.sglang_bench")
        try:
            profile = load_profile(str(args.get("profile")), args.get("profiles_dir"))
        except PlanError as exc:
            raise AnsibleActionFail(exc.render()) from exc
        if run.get("skipped") or (self._task.check_mode and run.get("rc", -1) == -1):
            result.update(changed=False, skipped=True, msg="the benchmark did not run (check mode): nothing to judge")
            return result
        tolerance, target, ttft_target, cards = _limits(args, profile)
        argv = [str(a) for a in run.get("argv") or []]
        published = (profile.published or {}).get("figures") or {}
        verdict = evaluate(run.get("parsed") or {}, cards=cards,
                           tpot_target_ms=target if target is not None else profile.tpot_target_ms,
                           published=published, tolerance=tolerance,
                           target_source="sglang_bench_tpot_target_ms" if target is not None else "the profile",
                           ttft_target_ms=ttft_target if ttft_target is not None else profile.ttft_target_ms,
                           ttft_source="sglang_bench_ttft_target_ms" if ttft_target is not None else "the profile")
        if run.get("rc", 0) != 0:
            verdict["failures"].insert(0, f"sglang.bench_serving exited with {run.get('rc')}")
            verdict["passed"] = False
        if run.get("parse_error"):
            verdict["failures"].insert(0, run["parse_error"])
        table = render_table(verdict)
        paths = _write_report(args, profile, run, argv, published, verdict, table)
        # Files on the controller only: the deployment itself is not changed.
        result.update(changed=False, passed=verdict["passed"], failures=verdict["failures"],
                      figures=verdict["figures"], comparison=verdict["comparison"], table=table, files=paths,
                      msg=f"{profile.id}: {'PASS' if verdict['passed'] else 'FAIL'}")
        if not verdict["passed"] and boolean(args["fail"], strict=False):
            result["failed"] = True
            result["msg"] = f"{profile.id}: benchmark FAILED: " + "; ".join(verdict["failures"]) + \
                "\n" + "\n".join(table) + f"\nreport: {paths['json']}"
        return result


def _limits(args: dict, profile) -> "tuple[float, float | None, float | None, float]":
    """The TPOT tolerance, the operator's TPOT and TTFT targets (None: the profile's) and the cards the figures are
    per."""
    tolerance = float(args.get("tolerance") if args.get("tolerance") is not None else DEFAULT_TPOT_TOLERANCE)
    target, ttft_target = _ms(args, "tpot_target_ms"), _ms(args, "ttft_target_ms")
    try:
        cards = float(args["cards"]) if args.get("cards") not in (None, "") else profile.cards_used()
    except (TypeError, ValueError):
        raise AnsibleActionFail(f"cards: a number of cards, not {args.get('cards')!r}") from None
    if cards <= 0:
        raise AnsibleActionFail(f"cards must be > 0 (got {cards})")
    if tolerance < 0 or (target is not None and target <= 0) or (ttft_target is not None and ttft_target <= 0):
        raise AnsibleActionFail("tolerance must be >= 0, tpot_target_ms and ttft_target_ms > 0 (got "
                                f"{tolerance}, {target}, {ttft_target})")
    return tolerance, target, ttft_target, cards


def _write_report(args: dict, profile, run: dict, argv: list, published: dict, verdict: dict, table: list) -> dict:
    """Writes the raw output, the chart and the JSON report under output_dir; returns their paths."""
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out_dir = os.path.abspath(os.path.expanduser(str(args["output_dir"])))
    os.makedirs(out_dir, exist_ok=True)
    base = os.path.join(out_dir, f"{profile.id}-{stamp}")
    raw = (f"$ {' '.join(argv)}\n# exit status {run.get('rc')}, {run.get('duration_s')} s\n"
           f"{run.get('stdout') or ''}\n# ---- stderr ----\n{run.get('stderr') or ''}")
    _write(base + ".txt", raw.encode("utf-8"))
    report = {"profile": profile.id, "title": profile.title, "argv": argv, "rc": run.get("rc"),
              "duration_s": run.get("duration_s"), "raw_output": base + ".txt", "published": published,
              "metrics": (run.get("parsed") or {}).get("metrics") or {}, **verdict}
    paths = {"raw": base + ".txt", "json": base + ".json"}
    if args.get("chart", True):
        png = bench_chart(f"{profile.id} measured vs published", verdict["comparison"], table[-1])
        _write(base + ".png", png)
        paths["chart"] = base + ".png"
    report["files"] = paths
    _write(base + ".json", (json.dumps(report, indent=2, sort_keys=True) + "\n").encode("utf-8"))
    return paths
