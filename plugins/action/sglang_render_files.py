# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Renders a host's files from the plan and the role templates on the controller, in one step: either sends
them to the host in one module call (deployment) or writes every host's files into the render directory
(render mode). The file list is plugin_utils/targets/_host_files.py."""

from __future__ import annotations

import os
import re
import types

from ansible.errors import AnsibleActionFail
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase
from ansible.template import trust_as_template

from ansible_collections.ascend.sglang.plugins.plugin_utils.targets._host_files import (
    DEFAULT_SETTINGS, SYSTEMD, host_files)
from ansible_collections.ascend.sglang.plugins.module_utils.files._atomic_files import place_all
from ansible_collections.ascend.sglang.plugins.module_utils.http._health_wait import wait_target
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _watchdog
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import HostPlan, Plan, typed_plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.targets import _monitoring
from ansible_collections.ascend.sglang.plugins.plugin_utils.report import _written_files
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._output_dir import ForeignFiles, refuse_foreign
from ansible_collections.ascend.sglang.plugins.plugin_utils.rollout._rollout import (
    file_changes, host_facts, host_queries, restart_reason, stale_watchdogs)
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._serialize import plain

_ROLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "roles", "sglang_service")
# A host's render directory: no path separator, no leading dot or dash.
_BAD_HOST = re.compile(r"[^A-Za-z0-9_.:-]|^[^A-Za-z0-9_]|^$")
# Render mode: the directory of the Prometheus files beside the hosts' directories, and their row in the report.
MONITORING_DIR = "monitoring"
_MONITORING_SPEC = types.SimpleNamespace(kind="monitoring", service="")
# What ansible.builtin.template uses by default: the files are byte for byte what it wrote.
_OVERRIDES = {"trim_blocks": True, "lstrip_blocks": False, "newline_sequence": "\n"}


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("plan", "host", "render_dir", "roles", "kinds", "settings", "secrets", "restart_all",
                             "record_start", "record_path", "cann_env", "health", "apply_sysctl"))

    def _source(self, kind: str, name: str) -> str:
        key = (kind, name)
        if key not in self._sources:
            path = os.path.normpath(os.path.join(_ROLE, kind, name))
            with open(path, encoding="utf-8") as handle:
                self._sources[key] = handle.read()
        return self._sources[key]

    def _content(self, spec) -> str:
        if spec.content is not None:
            return spec.content
        if spec.src is not None:
            return self._source("files", spec.src)
        templar = self._templar.copy_with_new_env(available_variables=spec.variables)
        try:
            text = templar.template(trust_as_template(self._source("templates", spec.template)),
                                    escape_backslashes=False, overrides=_OVERRIDES)
        except Exception as exc:  # pylint: disable=broad-except
            message = str(getattr(exc, "message", None) or exc)
            if spec.sensitive:
                # The template guards quote the start of the value they refuse: of an environment or secret
                # file, only the place ("refusing to write the value of NAME") is reported.
                found = re.search(r"refusing to write [^:]*", message)
                message = (found.group() if found else "a value failed the template guards") + " (value not shown)"
            raise AnsibleActionFail(f"{spec.name}: {message}") from None
        return "" if text is None else str(text)

    @staticmethod
    def _settings(args: dict, host_plan: HostPlan | None) -> dict:
        """The host's file settings as the plan carries them (its own inventory values, checked by the settings
        table, defaults filled in), by their full names; ``settings`` given to the task win (a caller outside the
        collection's roles)."""
        planned = host_plan.settings if host_plan is not None else {}
        settings = {name: planned[name] for name in DEFAULT_SETTINGS if name in planned}
        given = dict(args.get("settings") or {})
        unknown = set(given) - set(DEFAULT_SETTINGS)
        if unknown:
            raise AnsibleActionFail(f"settings: unknown key(s) {', '.join(sorted(unknown))} (the host's file "
                                    f"settings by their full names: {', '.join(sorted(DEFAULT_SETTINGS))})")
        settings.update(given)
        return settings

    def _host_secrets(self, task_vars: dict):
        """The host's sglang_secrets, read here and nowhere else.  Their values never enter the plan (the planner
        keeps the flag names only, and the plan is a fact every host can read), so the playbooks cannot take them
        from sglang_plan.settings; reading them in this one place keeps a Jinja default out of every caller.
        Unset: none (the plan's secret flags then name what is missing)."""
        value = task_vars.get("sglang_secrets")
        return None if value is None else plain(self._templar.template(value))

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super().run(tmp, task_vars)
        self._sources = {}
        args = plain(self._task.args)  # plain Python: Ansible's tagged types reach no writer
        try:
            plan = typed_plan(args.get("plan"))
        except ValueError as exc:
            raise AnsibleActionFail(str(exc)) from None
        roles = args.get("roles")
        kinds = args.get("kinds")
        profile = str(plan.profile or "")
        if args.get("render_dir"):
            return self._render(result, plan, args, roles, kinds, profile)
        host = str(args.get("host") or task_vars.get("inventory_hostname"))
        host_plan = plan.hosts.get(host) or HostPlan.empty()
        settings = self._settings(args, host_plan)
        secrets = args["secrets"] if "secrets" in args else self._host_secrets(task_vars)
        specs = _host_specs(host_plan, settings, args, roles, kinds, profile, secrets)
        cfg = dict(DEFAULT_SETTINGS, **settings)
        paths = [os.path.join(str(cfg[spec.dir]), spec.name) for spec in specs]
        # The services whose files this call writes, their stale watchdog units to look for and the units whose
        # state is judged once the files are in place (plugin_utils/rollout/_rollout.py): asked in the same call.
        queries = host_queries(host_plan.services, [{"kind": spec.kind, "service": spec.service} for spec in specs],
                               str(cfg[SYSTEMD]))
        module_args = self._place_args(specs, paths, cfg, queries, args, profile)
        if args.get("health"):
            # One look at the services of this call once their files are in place (the role's health settings):
            # deploy.yml's health gate makes no call on a host where nothing restarts and every one was healthy.
            look = args["health"]
            readiness = boolean(look.get("readiness"), strict=False)
            module_args["health"] = [
                {"name": svc.name,
                 "url": wait_target({"ready_url": svc.ready_url, "health_url": svc.health_url}, readiness)}
                for svc in queries["services"]]
            module_args["health_timeout"] = int(look["timeout"])
        sysctl = (host_plan.host_tuning or {}).get("sysctl") or {}
        if boolean(args.get("apply_sysctl") or False, strict=False) and sysctl and "sysctl" in (kinds or ()):
            # The live values in the same call, once 90-sglang.conf is in place (the host_tuning role).
            module_args["sysctl"] = {"dir": str(host_plan.settings["sglang_proc_sys_dir"]),
                                     "values": {str(name): str(value) for name, value in sysctl.items()}}
        placed = self._execute_module(module_name="ascend.sglang.sglang_place_files", module_args=module_args,
                                      task_vars=task_vars)
        placed.pop("invocation", None)
        if placed.get("failed"):
            result.update(failed=True, msg=placed.get("msg", "placing the files failed"))
            return result
        self._report(result, specs, paths, placed)
        result["health"] = placed.get("health") or {}
        result["sysctl"] = placed.get("sysctl") or []
        result["stale_watchdogs"] = stale_watchdogs(queries["probe"], placed.get("present") or [])
        # Their files (unit, configuration, state), named as the watchdog names them with this host's settings.
        result["stale_watchdog_files"] = _watchdog.files_of(result["stale_watchdogs"], cfg)
        # Per service, why it is due of its own, and the restarts pending on the host (plugin_utils/rollout/_rollout.py).
        result.update(host_facts(result["files"], queries["services"], placed.get("running") or {},
                                 restart_reason(boolean(args.get("restart_all") or False, strict=False),
                                                result["files"], queries["services"])))
        # The decision is not made here: it needs every host's report (an instance restarts as a whole, on every
        # host), and the role makes it once for the fleet (filter ascend.sglang.sglang_rollout).
        return result

    def _place_args(self, specs: list, paths: list, cfg: dict, queries: dict, args: dict, profile: str) -> dict:
        """The arguments of the one sglang_place_files call: directories, files with their rendered content, the
        units to probe and, for deploy.yml, this deploy's record."""
        directories = []
        for spec in specs:
            path = str(cfg[spec.dir])
            if path not in directories:
                directories.append(path)
        files = []
        for spec, path in zip(specs, paths):
            entry = {"path": path, "mode": spec.mode}
            entry["secret_content" if spec.sensitive else "content"] = self._content(spec)
            if spec.owner:
                entry.update(owner=spec.owner, group=spec.group)
            files.append(entry)
        module_args = {"directories": [{"path": d, "mode": "0755"} for d in directories], "files": files,
                       "probe": list(queries["probe"]), "running": queries["running"]}
        if args.get("record_start") not in (None, ""):
            # deploy.yml: this deploy's start, the default window of a later collection, in the same call.
            module_args.update(record_start=args["record_start"], record_profile=profile)
            if args.get("record_path"):
                module_args["record_path"] = args["record_path"]
        return module_args

    def _report(self, result: dict, specs: list, paths: list, placed: dict) -> dict:
        changed = {f["path"]: f["changed"] for f in placed.get("files", [])}
        new = {f["path"]: f.get("new", False) for f in placed.get("files", [])}
        rows = [{"path": path, "kind": spec.kind, "service": spec.service, "changed": bool(changed.get(path)),
                 "new": bool(new.get(path))} for spec, path in zip(specs, paths)]
        result.update(changed=bool(placed.get("changed")), files=rows, directories=placed.get("directories", []),
                      **file_changes(rows))
        if placed.get("diff"):
            result["diff"] = placed["diff"]
        return result

    def _render(self, result, plan: Plan, args, roles, kinds, profile) -> dict:
        base = os.path.abspath(os.path.expanduser(str(args["render_dir"])))
        directories, files, specs_all, paths = [], [], [], []
        for host, host_plan in plan.hosts.items():
            if not isinstance(host, str) or _BAD_HOST.search(host):
                raise AnsibleActionFail(f"plan.hosts keys must be inventory host names usable as directory names, "
                                        f"got {str(host)[:60]!r}")
            settings = self._settings(args, host_plan)
            host_dir = os.path.join(base, str(host))
            directories.append({"path": host_dir, "mode": 0o755})
            try:
                specs = host_files(host_plan, settings, roles=roles, kinds=kinds, render=True, profile=profile)
            except ValueError as exc:
                raise AnsibleActionFail(f"host {host}: {exc}") from None
            for spec in specs:
                path = os.path.join(host_dir, spec.render_name)
                files.append({"path": path, "data": self._content(spec).encode("utf-8"), "mode": int(spec.mode, 8),
                              "sensitive": spec.sensitive})
                specs_all.append(spec)
                paths.append(path)
        if roles is None and kinds is None and (plan.monitoring or {}).get("metrics"):
            # The Prometheus files monitoring.yml writes (plugin_utils/targets/_monitoring.py), for review with the rest.
            if MONITORING_DIR in plan.hosts:
                raise AnsibleActionFail(f"a host named '{MONITORING_DIR}' would share the render directory of the "
                                        "Prometheus files: render with sglang_metrics=false or rename the host")
            top = os.path.join(base, MONITORING_DIR)
            for rel, text in _monitoring.files(plan, top).items():
                path = os.path.join(top, rel)
                if os.path.dirname(path) not in [d["path"] for d in directories]:
                    directories.append({"path": os.path.dirname(path), "mode": 0o755})
                files.append({"path": path, "data": text.encode("utf-8"), "mode": 0o644, "sensitive": False})
                paths.append(path)
                specs_all.append(_MONITORING_SPEC)
        self._refuse_foreign(base, [d["path"] for d in directories] + paths)
        try:
            placed = place_all(directories, files, bool(self._task.check_mode), bool(self._task.diff))
        except OSError as exc:
            raise AnsibleActionFail(f"writing the render directory failed: {exc}") from None
        self._report(result, specs_all, paths, placed)
        # One line per host and file would swamp the output of a large fleet: counts, and one line per directory
        # naming its files (render.yml shows them).
        result["files"] = len(files)
        result["files_changed"] = sum(1 for f in placed["files"] if f["changed"])
        result["msg"] = f"{len(plan.hosts)} hosts, {result['files']} files, {result['files_changed']} changed"
        result["written"] = _written_files.lines(base, paths, {f["path"]: bool(f["changed"]) for f in placed["files"]})
        return result

    @staticmethod
    def _refuse_foreign(base: str, planned: list) -> None:
        """The render directory holds nothing this plan does not produce (plugin_utils/core/_output_dir.py)."""
        try:
            refuse_foreign(base, planned, "sglang_render_dir", "render")
        except ForeignFiles as exc:
            raise AnsibleActionFail(str(exc)) from None


def _host_specs(host_plan: HostPlan, settings: dict, args: dict, roles, kinds, profile: str, secrets) -> list:
    """The files of one host (with its cann_env.sh first when asked); refuses a server whose secrets the host does
    not see."""
    try:
        specs = host_files(host_plan, settings, roles=roles, kinds=kinds, profile=profile,
                           secrets=secrets or {})
    except ValueError as exc:
        raise AnsibleActionFail(str(exc)) from None
    if boolean(args.get("cann_env") or False, strict=False):
        # The host's cann_env.sh first (a server host's only), in the same call as the services that source it.
        specs = host_files(host_plan, settings, kinds=("cann_env",), profile=profile, check=False) + specs
    by_name = {svc.name: svc for svc in host_plan.services}
    for spec in specs:
        if spec.kind != "secrets":
            continue
        svc = by_name[spec.service]
        missing = [flag for flag in svc.secret_flags if flag not in spec.variables["sglang_tpl_secrets"]]
        if missing:
            raise AnsibleActionFail(
                f"{spec.service}: the plan gives {', '.join(svc.secret_flags)} from sglang_secrets.{svc.role}, "
                f"but this host does not see {', '.join(missing)} (define sglang_secrets for the server hosts "
                "too, e.g. in group_vars/all)")
    return specs
