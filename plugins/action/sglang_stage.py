# Copyright: ascend.sglang contributors
# Apache License 2.0
"""state=pull of ascend.sglang.sglang_stage: for each directory, starts the host's detached rsync (or attaches to
the one an interrupted run left), prints one progress line per poll (bytes, rate, ETA) while it runs, then has the
host verify what it fetched and move it into place. Every other state runs the module as it is."""

from __future__ import annotations

import time

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.ascend.sglang.plugins.plugin_utils.core._serialize import plain
from ansible_collections.ascend.sglang.plugins.plugin_utils.stage._stage_plan import human

display = Display()
MODULE = "ascend.sglang.sglang_stage"


def _clock(seconds: float) -> str:
    seconds = int(max(0, seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class ActionModule(ActionBase):
    TRANSFERS_FILES = False

    def _step(self, state, pull, args, task_vars):
        module_args = dict(args, state=state, pulls=[pull])
        out = self._execute_module(module_name=MODULE, module_args=module_args, task_vars=task_vars)
        if out.get("failed"):
            why = out.get("msg") or out.get("module_stderr") or "the module failed"
            raise AnsibleActionFail(f"{pull.get('path')}: {state}: {str(why).strip()[-2000:]}")
        return out

    def _pull(self, host, pull, args, task_vars):
        label = f"stage {host}: {pull['path']} from {pull.get('sender') or pull['source']}"
        total = int(pull.get("bytes") or 0)
        started = time.monotonic()
        if self._task.check_mode:
            display.display(f"{label}: would receive {len(pull.get('files') or [])} file(s), up to {human(total)}")
            return {"path": pull["path"], "sender": pull.get("sender"), "moved": [], "transferred": 0, "seconds": 0.0,
                    "would_receive": total}
        begun = self._step("start", pull, args, task_vars)
        if begun.get("attached"):
            display.display(f"{label}: a pull an earlier run started is still running: following it")
        # Both required by state=pull (the module refused the start without them): the plan's
        # sglang_stage_progress_interval and sglang_stage_timeout, whose defaults the settings table holds.
        interval = max(1, int(args["interval"]))
        deadline = started + int(args["timeout"])
        state = {}
        wait = 0.5  # a short pull ends within the first polls; a long one is shown every interval
        while True:
            state = self._step("poll", pull, args, task_vars)
            progress = state.get("progress") or {}
            done = int(progress.get("bytes") or 0)
            rate = int(progress.get("rate") or 0)
            eta = (total - done) / rate if rate and total > done else progress.get("eta") or 0
            if not state.get("running"):
                break
            display.display(f"{label}: {human(done)} of up to {human(total)} ({progress.get('percent', 0)}%), "
                            f"{human(rate)}/s, ETA {_clock(eta)}")
            if time.monotonic() > deadline:
                self._step("stop", pull, args, task_vars)
                raise AnsibleActionFail(f"{pull['path']}: the pull took more than {args.get('timeout')} s "
                                        "(sglang_stage_timeout): stopped; what it fetched stays staged and the next "
                                        "run resumes it")
            time.sleep(min(wait, interval))
            wait *= 2
        if state.get("exit_code") != 0:
            raise AnsibleActionFail(f"{pull['path']}: rsync from {pull['source']} failed ({state.get('error')}); "
                                    "nothing was moved into place; what it fetched stays staged and the next run "
                                    "resumes it")
        done = int((state.get("progress") or {}).get("bytes") or 0)
        finished = self._step("finish", pull, args, task_vars)
        seconds = time.monotonic() - started
        display.display(f"{label}: done, {len(finished.get('moved') or [])} file(s) moved into place, "
                        f"{human(done)} in {seconds:.1f} s")
        return {"path": pull["path"], "sender": pull.get("sender"), "moved": finished.get("moved") or [],
                "transferred": done, "seconds": round(seconds, 2), "digests": finished.get("digests") or {},
                "hashed": finished.get("hashed", 0), "cached": finished.get("cached", 0)}

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super().run(tmp, task_vars)
        args = plain(self._task.args)
        if args.get("state") != "pull":
            result.update(self._execute_module(module_name=MODULE, module_args=args, task_vars=task_vars))
            return result
        host = task_vars.get("inventory_hostname")
        step_args = {k: v for k, v in args.items() if k not in ("state", "pulls")}
        pulls = []
        for pull in args.get("pulls") or []:
            pulls.append(self._pull(host, pull, step_args, task_vars))
        result.update(changed=any(p["moved"] for p in pulls), pulls=pulls)
        return result
