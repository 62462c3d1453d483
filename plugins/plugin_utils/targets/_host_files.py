# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The one list of the files a host's plan produces, for deployment and for render mode.

Every file written from the plan (CANN environment, kernel settings, each service's environment, secrets,
launcher and unit, each watched service's watchdog configuration and unit, the watchdog program) is one
FileSpec here; the action plugin ascend.sglang.sglang_render_files renders them from the role templates and
places them on the host or in the render directory. A new file is one more entry in host_files().
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from ansible_collections.ascend.sglang.plugins.module_utils.files._started import record_path
from ansible_collections.ascend.sglang.plugins.module_utils.files._units import service_units
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _settings, _watchdog
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._contract import CONTROL_RE
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import HostPlan, Service

# Deployment directories, by the setting naming them (FileSpec.dir).
ETC, LIBEXEC, SYSTEMD, SYSCTL = _settings.ETC_DIR, _settings.LIBEXEC_DIR, _settings.SYSTEMD_DIR, _settings.SYSCTL_DIR

# Kinds whose change restarts the service they belong to (the watchdog kinds restart its watchdog). Not the
# router's workers at start (router_workers): a deploy applies the planned list through the router's worker API.
SERVICE_KINDS = ("env", "secrets", "launcher", "unit")
WATCHDOG_KINDS = ("watchdog_config", "watchdog_unit")
HOST_KINDS = ("cann_env", "sysctl")
# The program every unit's ExecStartPre runs to record the files it starts from (module_utils/files/_started.py).
RECORD_PROGRAM = "sglang_record_start.sh"

# Settings a host's files depend on, with their defaults, by their full names (rows of the settings table): every
# template reads them under these names.
DEFAULT_SETTINGS = _settings.file_defaults()


def sysctl_conf(values: dict) -> str:
    """90-sglang.conf: the host's kernel settings as sysctl.d(5) reads them. Computed here, not templated: deploy.yml
    compares it with the file preflight's call read (plugin_utils/rollout/_schedules.py tuning_needed)."""
    lines = ["# Managed by Ansible (ascend.sglang); do not edit: changes are overwritten.",
             "# Kernel settings for SGLang on Ascend, from the deployment plan (the host's host_tuning.sysctl)."]
    lines += [f"{key} = {value}" for key, value in values.items()]
    return "\n".join(lines) + "\n"


@dataclass
class FileSpec:
    """One file of a host. name: its name in its deployment directory (dir: the setting naming the directory);
    render_name: its name in the host's render directory (None: not rendered). Exactly one of template (a role
    template), src (a role file) or content (text computed here) gives its content. sensitive: content never
    logged nor diffed."""

    kind: str
    dir: str
    name: str
    mode: str
    render_name: str | None = None
    service: str | None = None
    template: str | None = None
    src: str | None = None
    content: str | None = None
    variables: dict = field(default_factory=dict)
    sensitive: bool = False
    owner: str | None = None
    group: str | None = None


# Checked by a search for a character outside the allowed set: a '$' anchor would let "NAME\n" through.
_BAD_NAME = re.compile(r"[^A-Za-z0-9_.-]|^[^A-Za-z0-9]|^$")
_BAD_ENV_KEY = re.compile(r"[^A-Za-z0-9_]|^[0-9]|^$")
ROLES = ("prefill", "decode", "mixed", "router")


def check_service(svc: Service) -> None:
    """Fails (ValueError) on plan values that would break a file name, a unit or the shell files, before anything
    is written: the plan's dict form went through the playbook's variables, its types are checked here. The
    message never holds an environment value or an argument."""
    name, env, argv = svc.name, svc.env, svc.argv
    label = name if isinstance(name, str) and not CONTROL_RE.search(name) else "(no name)"
    if (not isinstance(name, str) or _BAD_NAME.search(name) or svc.role not in ROLES
            or not isinstance(argv, list) or not argv or not isinstance(env, dict)
            or any(not isinstance(k, str) or _BAD_ENV_KEY.search(k) for k in env)):
        raise ValueError(f"Invalid service in the plan: {label}. A service needs a name made of letters, digits, "
                         "'_', '.', '-', a role among prefill/decode/mixed/router, a non-empty argv list and env keys "
                         "that are shell variable names.")
    span = svc.boot_workers
    if span is not None and not (isinstance(span, list) and len(span) == 2
                                 and all(isinstance(i, int) and not isinstance(i, bool) for i in span)
                                 and 0 < span[0] < span[1] <= len(argv)):
        raise ValueError(f"Invalid service in the plan: {label}: boot_workers must be [start, end) of its argv")
    for key, value in env.items():
        if CONTROL_RE.search(str(value)):
            raise ValueError(f"Invalid service in the plan: {label}: the value of {key} contains a control character")
    for index, arg in enumerate(argv):
        if CONTROL_RE.search(str(arg)):
            raise ValueError(f"Invalid service in the plan: {label}: argument {index} contains a control character")


def _without_env(svc: Service) -> dict:
    """A service as the templates read it (its dict form) without its environment: only the environment file
    holds that."""
    return {k: v for k, v in svc.as_dict().items() if k != "env"}


def summary(svc: Service) -> str:
    """Render mode's <service>.json: what the service runs (the output of to_nice_json, then a newline)."""
    record = {"role": svc.role, "instance": svc.instance, "node_rank": svc.node_rank, "argv": svc.argv, "env": svc.env}
    return json.dumps(record, indent=4, sort_keys=True, separators=(",", ": ")) + "\n"


def start_record(cfg: dict, unit: str, files: list) -> dict:
    """What a unit's ExecStartPre runs: the record program, the unit's record and the files it starts from."""
    return {"program": f"{cfg[LIBEXEC]}/{RECORD_PROGRAM}", "path": record_path(unit), "files": files}


def sources_cann_env(svc: Service) -> bool:
    """Whether a service's launcher sources the host's cann_env.sh: a server on the host runtime. A container's
    image brings CANN; a router runs on no NPU and needs no CANN (nor the servers' NPU environment)."""
    return not svc.container and svc.role != "router"


def is_server_host(host_plan: HostPlan) -> bool:
    """Whether a host runs a server: only such a host gets cann_env.sh, the kernel settings and host tuning."""
    return any(s.role != "router" for s in host_plan.services)


def service_files(cfg: dict, svc: Service) -> list:
    """The files a service starts from, in the order its start record lists them: its environment, secrets,
    launcher and unit, and cann_env.sh where its launcher sources it (sources_cann_env). The container's run
    settings are in the launcher and the unit."""
    return _service_paths(cfg, svc.name, bool(svc.secret_flags), sources_cann_env(svc))


def _service_paths(cfg: dict, name: str, secrets: bool, cann_env: bool) -> list:
    """A service's own files by path (environment, secrets if it has any, launcher, unit) and the host's
    cann_env.sh where it sources it: how the files of one service are named, in one place."""
    files = [f"{cfg[ETC]}/{name}.env"] + ([f"{cfg[ETC]}/{name}.secrets"] if secrets else [])
    files += [f"{cfg[LIBEXEC]}/{name}.sh", f"{cfg[SYSTEMD]}/{name}.service"]
    return files + ([f"{cfg[ETC]}/cann_env.sh"] if cann_env else [])


def workers_file(cfg: dict, name: str) -> str:
    """A router's workers at start (Service.boot_workers), one argument per line, read by its launcher."""
    return f"{cfg[ETC]}/{name}.workers"


def launch_argv(svc: Service) -> list:
    """The argv as the launcher writes it: a router's workers at start are one None, where the launcher puts the
    arguments it read from workers_file()."""
    if not svc.boot_workers:
        return list(svc.argv)
    start, end = svc.boot_workers
    return list(svc.argv[:start]) + [None] + list(svc.argv[end:])


def watchdog_files(cfg: dict, name: str) -> list:
    """The files a service's watchdog starts from: its configuration, its unit and the shared program."""
    return [f"{cfg[ETC]}/{_watchdog.config_name(name)}", f"{cfg[SYSTEMD]}/{_watchdog.unit_name(name)}",
            f"{cfg[LIBEXEC]}/{_watchdog.PROGRAM}"]


def host_files(host_plan: HostPlan, settings: dict | None = None, *, roles=None, kinds=None, render: bool = False,
               profile: str = "", secrets: dict | None = None, check: bool = True) -> list:
    """The files of one host's plan entry, in writing order. settings: the host's settings by their full names
    (unset ones take the table's defaults); roles: service roles to include (None: all, and the host's own files,
    cann_env.sh and the kernel settings, which only a host running a server gets); kinds: file kinds to include
    (None: all); render: render mode's set (summaries, no secrets nor watchdog program). secrets: sglang_secrets
    (role -> flag -> value), needed for services with secret_flags.
    Raises ValueError naming the service when one is not fit to be written (check_service)."""
    cfg = dict(DEFAULT_SETTINGS, **(settings or {}))
    services = [s for s in host_plan.services if roles is None or s.role in roles]
    for svc in services if check else ():
        check_service(svc)
    # The templates' inputs from the host's file settings (each row of the table says which input it fills).
    unit_vars = dict(_settings.template_inputs(cfg), sglang_tpl_profile=profile)
    # The host's own files belong to no role: listed when no roles are selected. The record program comes
    # before any unit that runs it: a run cut short between two files never leaves a unit without it.
    files = [] if render or not services else [
        FileSpec("record_program", LIBEXEC, RECORD_PROGRAM, "0755", src=RECORD_PROGRAM)]
    files += [] if roles is not None or not is_server_host(host_plan) else [
        FileSpec("cann_env", ETC, "cann_env.sh", "0644", "cann_env.sh", template="cann_env.sh.j2",
                 variables={"sglang_tpl_cann": host_plan.cann or {}}),
        FileSpec("sysctl", SYSCTL, "90-sglang.conf", "0644", "sysctl.conf",
                 content=sysctl_conf((host_plan.host_tuning or {}).get("sysctl") or {})),
    ]
    for svc in services:
        files += _service_files(svc, cfg, unit_vars, render, secrets)
    files += _watchdog_specs(services, cfg, render)
    if kinds is not None:
        files = [f for f in files if f.kind in kinds]
    if render:
        files = [f for f in files if f.render_name]
    return files


def _service_files(svc: Service, cfg: dict, unit_vars: dict, render: bool, secrets: dict | None) -> list:
    """One service's files: summary (render mode), environment, secrets, a router's workers at start, launcher,
    unit."""
    files: list = []
    name, bare = svc.name, _without_env(svc)
    if render:
        files.append(FileSpec("summary", ETC, name + ".json", "0640", name + ".json", service=name,
                              content=summary(svc), sensitive=True))
    files.append(FileSpec("env", ETC, name + ".env", "0640", name + ".env", service=name, template="sglang.env.j2",
                          variables={"sglang_tpl_service": svc.as_dict()}, sensitive=True))
    if svc.secret_flags and not render:
        files.append(FileSpec("secrets", ETC, name + ".secrets", "0600", service=name, template="sglang.secrets.j2",
                              variables={"sglang_tpl_service": bare,
                                         "sglang_tpl_secrets": (secrets or {}).get(svc.role) or {}},
                              sensitive=True, owner="root", group="root"))
    if svc.boot_workers:
        start, end = svc.boot_workers
        files.append(FileSpec("router_workers", ETC, name + ".workers", "0644", name + ".workers", service=name,
                              content="".join(f"{arg}\n" for arg in svc.argv[start:end])))
    files.append(FileSpec("launcher", LIBEXEC, name + ".sh", "0755", name + ".sh", service=name,
                          template="sglang.sh.j2",
                          variables=dict(unit_vars, sglang_tpl_service=bare, sglang_tpl_argv=launch_argv(svc),
                                         sglang_tpl_workers_file=(workers_file(cfg, name) if svc.boot_workers
                                                                  else None),
                                         sglang_tpl_cann_env=sources_cann_env(svc))))
    record = start_record(cfg, name + ".service", service_files(cfg, svc))
    files.append(FileSpec("unit", SYSTEMD, name + ".service", "0644", name + ".service", service=name,
                          template="sglang.service.j2",
                          variables=dict(unit_vars, sglang_tpl_service=bare, sglang_tpl_record=record)))
    return files


def _watchdog_specs(services: list, cfg: dict, render: bool) -> list:
    """The watchdog program (once) and each watched service's watchdog configuration and unit."""
    files: list = []
    watch = _watchdog.watched(services, cfg)
    if watch and not render:
        files.append(FileSpec("watchdog_program", LIBEXEC, _watchdog.PROGRAM, "0755", src=_watchdog.PROGRAM))
    for svc in watch:
        name = svc.name
        config_name, unit_name = _watchdog.config_name(name), _watchdog.unit_name(name)
        files.append(FileSpec("watchdog_config", ETC, config_name, "0644", config_name, service=name,
                              template="sglang-watchdog.json.j2",
                              variables={"sglang_tpl_watchdog_config": _watchdog.config(svc, cfg)}))
        files.append(FileSpec("watchdog_unit", SYSTEMD, unit_name, "0644", unit_name, service=name,
                              template="sglang-watchdog.service.j2",
                              variables=dict(_settings.template_inputs(cfg), sglang_tpl_service=_without_env(svc),
                                             sglang_tpl_record=start_record(cfg, unit_name, watchdog_files(cfg, name)))))
    return files


def _own_paths(cfg: dict, name: str) -> list:
    """Every file one service of a host may have, whatever the plan says of it now: its environment, secrets,
    launcher and unit, a router's workers at start, its watchdog's configuration and unit (not the shared program)
    and state file, and the start records of its units."""
    paths = _service_paths(cfg, name, secrets=True, cann_env=False) + [workers_file(cfg, name)]
    paths += [f"{cfg[ETC]}/{_watchdog.config_name(name)}", f"{cfg[SYSTEMD]}/{_watchdog.unit_name(name)}",
              f"{cfg[_settings.WATCHDOG_STATE_DIR]}/{_watchdog.state_name(name)}"]
    return paths + [record_path(unit) for unit in service_units(name)]


def generation_paths(name: str, settings: dict | None = None, cann_env: bool = False) -> list:
    """The files of one service an upgrade keeps as its previous generation and puts back when it rolls back
    (upgrade.yml, module ascend.sglang.sglang_generation): what decides what the service runs - its environment,
    secrets, launcher and unit, its watchdog's configuration and unit. Not its start records nor the watchdog's
    state (what ran, not what to run), nor a router's workers (upgrade.yml restarts no router); the host's
    cann_env.sh with cann_env (a service that sources it: sources_cann_env()). settings: as host_files takes them."""
    cfg = dict(DEFAULT_SETTINGS, **(settings or {}))
    return _service_paths(cfg, str(name), secrets=True, cann_env=cann_env) + [
        f"{cfg[ETC]}/{_watchdog.config_name(str(name))}", f"{cfg[SYSTEMD]}/{_watchdog.unit_name(str(name))}"]


def retired_paths(names: list, settings: dict | None = None) -> list:
    """The files of services retire.yml takes off a host (names), each once; the host's own files (cann_env.sh,
    the kernel settings, the shared programs) stay: its other services use them. settings: as host_files takes
    them."""
    cfg = dict(DEFAULT_SETTINGS, **(settings or {}))
    return list(dict.fromkeys(path for name in names for path in _own_paths(cfg, str(name))))


def purge_paths(host_plan: HostPlan | None, settings: dict | None = None) -> list:
    """Every path stop.yml's purge (sglang_stop_purge) removes on a host, each once: what host_files writes for the
    host's plan entry (None: a host the plan has no entry for), and what an earlier deployment of the same services
    may have left whatever the plan says now (each service's secrets and watchdog files, the start records of its
    units, the watchdog program and state directory, the record program, cann_env.sh and the kernel settings file,
    which a host that ran a server before may hold). settings: as host_files takes them. Nothing is checked: a
    purge removes."""
    cfg = dict(DEFAULT_SETTINGS, **(settings or {}))
    host_plan = host_plan or HostPlan.empty()
    names = [str(s.name) for s in host_plan.services if s.name]

    # Named as host_files names them (_own_paths, as retire.yml removes them): a service's secrets, workers and
    # watchdog whatever the plan says of them now, and the host's own files whatever it runs now.
    paths = [path for name in names for path in _own_paths(cfg, name)]
    paths += [f"{cfg[LIBEXEC]}/{_watchdog.PROGRAM}", str(cfg[_settings.WATCHDOG_STATE_DIR])]
    paths += [f"{cfg[LIBEXEC]}/{RECORD_PROGRAM}", f"{cfg[ETC]}/cann_env.sh", f"{cfg[SYSCTL]}/90-sglang.conf"]
    # upgrade.yml's previous generations and deploy.yml's record of the runtime (the host's settings name the
    # directory; it is no file setting).
    if cfg.get(_settings.GENERATION_DIR):
        paths.append(str(cfg[_settings.GENERATION_DIR]))
    # Every file host_files lists is removed too: a file added there is purged without a change here.
    paths += [f"{cfg[spec.dir]}/{spec.name}" for spec in host_files(host_plan, settings, check=False)]
    return list(dict.fromkeys(paths))
