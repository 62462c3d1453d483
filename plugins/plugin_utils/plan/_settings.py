# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The settings table: one row per ``sglang_*`` variable the collection reads or reserves.

Pure; no Ansible import.  A row holds the variable's name, its scope, its checker, its default, one line of
documentation and the role entry points that read it.  The roles' ``defaults/main.yml`` and the options of
their ``meta/argument_specs.yml`` are generated from it (``scripts/settings.py``; the drift check fails on any
difference), the plan reads the inventory through it (``_inputs.py``) and the render action takes its
defaults from it.  A new variable is one more row here.

Scopes:
- ``deployment``: one value for the whole deployment (group_vars/all, the inventory's ``all: vars`` or ``-e``);
  a different value on a group or host is refused, since the plan reads it once for every host.
- ``host``: may differ per host; checked on every host of the plan with that host's value.
- ``run``: an option of one playbook (``-e``); one value for the run, like a deployment variable.
- ``parameter``: a role parameter the collection's playbooks pass to its roles.
- ``internal``: set by the collection itself (facts, registered results); an inventory must not set it.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable, Mapping

from ansible_collections.ascend.sglang.plugins.module_utils.npu import _npu_topo
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _contract as c
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _metrics
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _k8s_values
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import Collector
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _model_sources as _sources

DEPLOYMENT, HOST, RUN, PARAMETER, INTERNAL = "deployment", "host", "run", "parameter", "internal"
SCOPES = (DEPLOYMENT, HOST, RUN, PARAMETER, INTERNAL)
Check = Callable[[Any, Collector, "c.Where"], Any]


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Any = _NoDefault()


class _Deferred:
    def __repr__(self) -> str:
        return "DEFERRED"


# A host value that refers to other hosts or to the plan itself (sglang_router_version:
# "{{ hostvars['localhost'].sglang_plan.releases.sglang_router }}"): evaluated on the host, after the plan.
DEFERRED: Any = _Deferred()

# The entry points of the thin server roles (each forwards to ascend.sglang.sglang_service; deploy.yml waits for
# every server through sglang_service:wait_healthy at once, so they have no health gate of their own).
SERVERS_MAIN = ("prefill:main", "decode:main", "mixed:main")


@dataclasses.dataclass(frozen=True)
class Setting:
    name: str
    scope: str
    doc: str
    # None: checked by the planner together with the profile (the doc names where); otherwise a _contract checker.
    check: Check | None = None
    default: Any = NO_DEFAULT
    # argument_specs type (str, int, bool, path, list, dict, float), list elements and choices.
    type: str = "str"
    elements: str | None = None
    choices: tuple[str, ...] | None = None
    # role:entry_point of every argument_specs.yml entry that documents it.
    entries: tuple[str, ...] = ()
    # Roles whose defaults/main.yml holds it (the thin server roles take sglang_service's).
    defaults_in: tuple[str, ...] = ()
    # What the value reaches on a host (a reminder when adding a row; shown in the docs).
    reaches: str = ""
    # The host's files depend on it (plugin_utils/targets/_host_files.py): render mode and deployment write it in.
    files: bool = False
    # The input of the role templates (roles/sglang_service/templates) the value fills: their own names, which the
    # files carry in their header comments, so that a file on a host stays byte for byte what it was.
    template: str | None = None
    # The Python type of the plan's value where the plan resolves the operator's value into another form than the
    # row's ``type`` (plan/_run_settings.py, the planner's sources by directory): the settings record
    # (plan/_settings_record.py, generated) is typed with it.
    resolved: str = ""

    def spec(self) -> dict[str, Any]:
        """This row as an argument_specs option."""
        out: dict[str, Any] = {"type": self.type}
        if self.elements:
            out["elements"] = self.elements
        if self.choices:
            out["choices"] = list(self.choices)
        if self.default is not NO_DEFAULT and not (isinstance(self.default, str) and "{{" in self.default):
            out["default"] = self.default
        out["description"] = self.doc
        return out


# ---- checkers the contract does not hold -----------------------------------------------------------------

# A pip requirement specifier (PEP 508 name, extras, version clauses); never an option (no leading '-'), no
# blank, URL or path: the pip module passes each item as one argument, and an option there would change what
# pip does (--index-url, --extra-index-url, -e).  A Jinja template is accepted: it is evaluated on the host,
# where the plan's release is known (sglang=={{ sglang_plan.releases.sglang }}).
REQUIREMENT_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9._,-]+\])?"
                            r"((===?|~=|!=|<=?|>=?)[A-Za-z0-9.*+!_-]+(,(===?|~=|!=|<=?|>=?)[A-Za-z0-9.*+!_-]+)*)?")
TEMPLATE_RE = re.compile(r"\{\{[^{}]*\}\}")
# "python3 -m venv", "/usr/bin/python3.11 -m venv", "virtualenv": a command and plain words, split on blanks.
VENV_COMMAND_RE = re.compile(r"(/[A-Za-z0-9_./+-]+|[A-Za-z0-9_][A-Za-z0-9_.+-]*)( [A-Za-z0-9_=.,+-]+)*")


def _requirements(value: Any, errors: Collector, where: c.Where) -> Any:
    if not isinstance(value, list):
        where.add(errors, f"must be a list of pip requirement specifiers, got {c.type_name(value)} {c.shown(value)}")
        return None
    for index, item in enumerate(value):
        here = c.Where(f"{where.variable}[{index}]", where.group, where.host)
        checked = c.text(item, errors, here, what="a requirement specifier (a string)")
        if checked is None:
            continue
        plain = TEMPLATE_RE.sub("0", checked)
        if checked.lstrip().startswith("-"):
            here.add(errors, f"{c.shown(checked)} is a pip option, not a requirement: options are not accepted "
                             "(use sglang_wheelhouse for an offline index)")
        elif not REQUIREMENT_RE.fullmatch(plain):
            here.add(errors, f"is not a pip requirement specifier such as sglang==0.5.6.post2, got {c.shown(checked)}")
    return value


def _venv_command(value: Any, errors: Collector, where: c.Where) -> Any:
    checked = c.text(value, errors, where, what="a command (a string)")
    if checked is not None and not VENV_COMMAND_RE.fullmatch(checked):
        where.add(errors, f"must be a command and plain words such as 'python3 -m venv', got {c.shown(checked)}")
        return None
    return checked


def _version(value: Any, errors: Collector, where: c.Where) -> Any:
    """An exact package version, or "" (not set)."""
    if value == "":
        return value
    if not isinstance(value, str) or not c.VERSION_RE.fullmatch(value):
        where.add(errors, f"must be a version such as 0.3.1 (a string), got {c.type_name(value)} {c.shown(value)}")
        return None
    return value


def _word(*words: str) -> Check:
    def check(value: Any, errors: Collector, where: c.Where) -> Any:
        # A bare YAML `off` / `no` arrives as false.
        word = "off" if value is False and "off" in words else value
        if word not in words:
            where.add(errors, f"must be one of {', '.join(words)}, got {c.type_name(value)} {c.shown(value)}")
            return None
        return word
    return check


def _factor(value: Any, errors: Collector, where: c.Where) -> Any:
    """sglang_upgrade_tpot_factor: a number from 1 (the target itself) to 100."""
    number = None
    if not isinstance(value, bool) and isinstance(value, (int, float, str)):
        try:
            number = float(value)
        except ValueError:
            number = None
    if number is None or not 1.0 <= number <= 100.0:
        where.add(errors, f"must be a number from 1 to 100, got {c.type_name(value)} {c.shown(value)}")
        return None
    return number


def _ratio(value: Any, errors: Collector, where: c.Where) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        where.add(errors, f"must be a number within 0..1, got {c.type_name(value)} {c.shown(value)}")
        return None
    try:
        number = float(value)
    except ValueError:
        number = -1.0
    if not 0.0 <= number <= 1.0:
        where.add(errors, f"must be a number within 0..1, got {c.shown(value)}")
        return None
    return number


def _mapping(value: Any, errors: Collector, where: c.Where) -> Any:
    if not isinstance(value, Mapping):
        where.add(errors, f"must be a mapping, got {c.type_name(value)} {c.shown(value)}")
        return None
    return value


def _controller_path(value: Any, errors: Collector, where: c.Where) -> Any:
    return c.text(value, errors, where, what="a path on the controller (a string)")


def _absolute_paths(value: Any, errors: Collector, where: c.Where) -> Any:
    """A list of absolute paths (glob patterns too); one path is a list of one, as the module's list option takes it."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        where.add(errors, f"must be a list of absolute paths, got {c.type_name(value)} {c.shown(value)}")
        return None
    checked = [c.absolute_path(item, errors, c.Where(f"{where.variable}[{index}]", where.group, where.host))
               for index, item in enumerate(value)]
    return None if None in checked else checked


def _model_source(value: Any, errors: Collector, where: c.Where) -> Any:
    found = _sources.problems(value)
    if not isinstance(value, (str, Mapping)) and value is not None:
        found = [f"must be a source or a mapping of model directory to source, got {c.type_name(value)}"]
    for problem in found:
        where.add(errors, problem)
    return None if found else value


def _owner(value: Any, errors: Collector, where: c.Where) -> Any:
    checked = c.text(value, errors, where, what="a user or user:group (a string)")
    if checked is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]*(:[A-Za-z_][A-Za-z0-9_.-]*)?", checked):
        where.add(errors, f"must be a user or user:group such as hwhiaiuser:hwhiaiuser, got {c.shown(checked)}")
        return None
    return checked


def _dir_mode(value: Any, errors: Collector, where: c.Where) -> Any:
    # YAML reads an unquoted 0755 as the number 493.
    text = f"0{value:o}" if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 0o777 else value
    if not isinstance(text, str) or not re.fullmatch(r"0?[0-7]{3}", text) or int(text, 8) & 0o500 != 0o500:
        where.add(errors, f"must be an octal mode (a string) such as '0755' that lets its owner read and enter the "
                          f"directory, got {c.type_name(value)} {c.shown(value)}")
        return None
    return text


def _since(value: Any, errors: Collector, where: c.Where) -> Any:
    checked = c.text(value, errors, where, what="a journal time (a string)")
    if checked is not None and not re.fullmatch(
            r"@[0-9]{1,12}|[0-9]{4}-[0-9]{2}-[0-9]{2}( [0-9]{2}:[0-9]{2}(:[0-9]{2})?)?|today|yesterday", checked):
        where.add(errors, f"must be @EPOCH, YYYY-MM-DD[ HH:MM[:SS]], today or yesterday, got {c.shown(checked)}")
        return None
    return checked


def _names(value: Any, allowed: str) -> list[str] | None:
    """A list of names, or a comma-separated string of them, each made of ``allowed`` characters (a regex class)
    -> the names, stripped; None when it is not."""
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(i, str) and re.fullmatch(f"[{allowed}]+", i.strip())
                                              for i in items):
        return None
    return [i.strip() for i in items]


def _restart_only(value: Any, errors: Collector, where: c.Where) -> Any:
    """sglang_restart_only: instance keys, a list or comma-separated -> the list, each once; or "pending" as it is.
    The planner keeps the keys it plans (plan/_run_settings.py)."""
    names = _names(value, "A-Za-z0-9_.-")
    if names is None:
        where.add(errors, f"must be instance keys (a list, or comma-separated), got {c.shown(value)}")
        return None
    return "pending" if isinstance(value, str) and names == ["pending"] else list(dict.fromkeys(names))


def _retire(value: Any, errors: Collector, where: c.Where) -> Any:
    """sglang_retire: instance keys or inventory host names, a list or comma-separated -> the list, each once."""
    names = _names(value, "A-Za-z0-9_.:-")
    if names is None:
        where.add(errors, f"must be instance keys or inventory hosts (a list, or comma-separated), got {c.shown(value)}")
        return None
    return list(dict.fromkeys(names))


def _restart_batch(value: Any, errors: Collector, where: c.Where) -> Any:
    """sglang_restart_batch: a count, or a percentage of the server instances (plugin_utils/rollout/_instances.py)."""
    parsed = c.parse_batch(value)
    if parsed is not None and parsed[1] and 1 <= parsed[0] <= 100:
        return f"{parsed[0]}%"
    if parsed is not None and not parsed[1]:
        return c.integer(parsed[0], errors, where, 1, 100000)
    where.add(errors, f"must be a count of instances (1, 2, ...) or a percentage of them from 1% to 100%, "
                      f"got {c.shown(value)}")
    return None


def _npu_cpus(value: Any, errors: Collector, where: c.Where) -> Any:
    """sglang_npu_cpus: NPU (device) index -> the CPU list near it, as ``npu-smi info -t topo`` gives it
    (module_utils/npu/_npu_topo.py); {} = not pinned."""
    if value is None or value == {}:
        return {}
    if not isinstance(value, Mapping):
        where.add(errors, f"must be a mapping of NPU index to CPU list (e.g. {{0: '144-167'}}), got {c.shown(value)}")
        return None
    out: dict[int, str] = {}
    for key, cpus in value.items():
        index = key if isinstance(key, int) and not isinstance(key, bool) else (
            int(key) if isinstance(key, str) and re.fullmatch(r"[0-9]{1,2}", key) else None)
        if index is None or not 0 <= index <= 15:
            where.add(errors, f"key {c.shown(key)} is not an NPU index (0..15)")
            continue
        text = str(cpus) if isinstance(cpus, (int, str)) and not isinstance(cpus, bool) else ""
        try:
            out[index] = _npu_topo.format_cpu_list(_npu_topo.parse_cpu_list(text))
        except ValueError:
            where.add(errors, f"NPU {index}: {c.shown(cpus)} is not a CPU list (e.g. 0-23,48-71)")
    return dict(sorted(out.items()))


def _replicas(value: Any, errors: Collector, where: c.Where) -> Any:
    """sglang_instances_per_host: a count of replicas, or max (plugins/plugin_utils/plan/_packing.py)."""
    return "max" if value == "max" else c.integer(value, errors, where, 1, 16)


# A deployment's name: part of the Prometheus files' names, a label value in every target and alert, and quoted
# inside the rules' PromQL selectors; letters, digits, '.', '_' and '-' only, so it needs no escaping anywhere.
DEPLOYMENT_RE = re.compile(r"[A-Za-z0-9]([A-Za-z0-9_.-]{0,62}[A-Za-z0-9])?")


def _deployment(value: Any, errors: Collector, where: c.Where) -> Any:
    checked = c.text(value, errors, where, what="a name (a string)")
    if checked is not None and not DEPLOYMENT_RE.fullmatch(checked):
        where.add(errors, f"must be a name of letters, digits, '.', '_' and '-' (at most 64, starting and ending "
                          f"with a letter or digit), got {c.shown(checked)}")
        return None
    return checked


ROUTER_LISTEN = ("loopback", "host_ip", "any")


def _int(low: int, high: int) -> Check:
    return lambda value, errors, where: c.integer(value, errors, where, low, high)


S = Setting


def F(*args: Any, **kwargs: Any) -> Setting:
    """A row the host's files depend on."""
    return Setting(*args, files=True, **kwargs)


# The rows of the directories a host's files are placed in, and of the watchdog's state directory: the renderer's
# file list (plugin_utils/targets/_host_files.py) and the purge name them through these, by their full names.
ETC_DIR, LIBEXEC_DIR, SYSTEMD_DIR = "sglang_etc_dir", "sglang_libexec_dir", "sglang_systemd_dir"
SYSCTL_DIR, WATCHDOG_STATE_DIR = "sglang_sysctl_dir", "sglang_watchdog_state_dir"
# upgrade.yml's previous generations of the servers' files, and deploy.yml's record of what they run.
GENERATION_DIR = "sglang_generation_dir"


_SVC = ("sglang_service:main",) + SERVERS_MAIN
_SVC_R = _SVC + ("router:main",)
_WAIT = ("sglang_service:wait_healthy", "router:wait_healthy")
_WATCH = ("sglang_service:wait_healthy",)
_PLANNED = "checked by the planner with the profile"

TABLE: tuple[Setting, ...] = (
    # ---- the deployment: one value for every host ----------------------------------------------------------
    S("sglang_profile", RUN, "Profile id of the deployment (the per-profile playbooks set it).", c.text),
    S("sglang_deployment", DEPLOYMENT, "Name of this deployment (default: the profile id): names its Prometheus "
      "files, is the label deployment of every target and alert, and heads status.yml; give two deployments of "
      "one profile that share a Prometheus different names.", _deployment),
    S("sglang_router_listen", DEPLOYMENT, "Where the router listens: loopback (127.0.0.1, the documented launch), "
      "host_ip (the router host's sglang_host_ip) or any (every address). The router has no client key: expose it "
      "only behind a firewall or a proxy that authenticates.", _word(*ROUTER_LISTEN), "loopback",
      choices=ROUTER_LISTEN),
    S("sglang_model_path", DEPLOYMENT, "Model weights directory on every server host (--model-path).", c.absolute_path, type="path"),
    S("sglang_draft_model_path", DEPLOYMENT, "Draft model directory of the speculative-decoding profiles.",
      c.absolute_path, type="path"),
    S("sglang_model_source", DEPLOYMENT, "Where the model directories come from: one source for sglang_model_path, or "
      "a mapping of model directory to source; a source is " + _sources.FORMS + ". Set, deploy.yml stages the "
      "weights first (playbooks/stage_weights.yml).", _model_source, type="raw",
      resolved="dict[str, str]"),
    S("sglang_model_owner", DEPLOYMENT, "Owner (user or user:group) of the model directories and files the weights "
      "staging creates (default: the user Ansible becomes).", _owner),
    S("sglang_model_mode", DEPLOYMENT, "Mode of the model directories the weights staging creates (their files get "
      "it without the execute bits).", _dir_mode, "0755"),
    S("sglang_init_expert_location", DEPLOYMENT, "Recorded expert distribution of the profiles that load one.",
      c.absolute_path, type="path"),
    S("sglang_release", DEPLOYMENT, "SGLang release the argv is rendered and validated for.", c.release),
    S("sglang_router_release", DEPLOYMENT, "sglang-router release the router argv is rendered for.", c.release),
    S("sglang_python", DEPLOYMENT, "Interpreter of the servers (absolute path or a command on PATH).", c.command,
      "python3"),
    S("sglang_router_python", DEPLOYMENT, "Interpreter of the router.", c.command, "python3"),
    S("sglang_overrides", DEPLOYMENT, "Per role, flags and env values over the profile's (" + _PLANNED + ").",
      entries=(), type="dict"),
    S("sglang_secrets", DEPLOYMENT, "Secret launch values per role, e.g. C({router: {--api-key: ...}}); the plan "
      "keeps only the flag names, the values go to a root-only file.", type="dict",
      entries=("sglang_service:main", "sglang_service:render")),
    S("sglang_runtime", DEPLOYMENT, "host (the host's Python) or container (" + _PLANNED + ").", choices=('host', 'container')),
    S("sglang_container_engine", DEPLOYMENT, "podman or docker (" + _PLANNED + ").", choices=('podman', 'docker')),
    S("sglang_container_engine_path", DEPLOYMENT, "Absolute path of the engine the launchers run (default "
      "/usr/bin/<engine>): a PATH in the services' environment cannot hide it.", c.unit_path, type="path"),
    S("sglang_container_image", DEPLOYMENT, "Image of every service (" + _PLANNED + ")."),
    S("sglang_container_shm_size", DEPLOYMENT, "--shm-size of the containers (" + _PLANNED + ")."),
    S("sglang_container_ascend_runtime", DEPLOYMENT, "Run through the Ascend container runtime (" + _PLANNED + ").", type="bool"),
    S("sglang_container_image_archive", DEPLOYMENT, "Controller tarball of '<engine> save', loaded instead of "
      "pulled; must exist on the controller (" + _PLANNED + ").", type="path"),
    S("sglang_preflight_checks", DEPLOYMENT, "Check name -> fail, warn or off (" + _PLANNED + ").", type="dict"),
    S("sglang_preflight_weights", DEPLOYMENT, "quick or full comparison of the weights between ranks ("
      + _PLANNED + ").", choices=('quick', 'full')),
    S("sglang_metrics", DEPLOYMENT, "Servers export Prometheus metrics (--enable-metrics) and each Rust router its "
      "exporter on its host's address (--prometheus-host/--prometheus-port); playbooks/monitoring.yml writes the "
      "scrape targets and alert rules. false: the documented launches as they are.", c.boolean, True, "bool"),
    S("sglang_router_metrics_port", DEPLOYMENT, "Port of the routers' Prometheus exporter (the router's own default).",
      _int(1, 65535), _metrics.ROUTER_DEFAULT_METRICS_PORT, "int"),
    S("sglang_metrics_scrape_interval", DEPLOYMENT, "Scrape interval of the generated Prometheus jobs, and evaluation "
      "interval of the rules (a Prometheus duration).", _metrics.duration, "15s"),
    S("sglang_alert_down_for", DEPLOYMENT, "How long a server, router or router worker must be down before its alert "
      "fires (a Prometheus duration).", _metrics.duration, "1m"),
    S("sglang_alert_ttft_p90_seconds", DEPLOYMENT, "TTFT p90 (seconds) above which SGLangTTFTHigh fires after 10m "
      "(default: 3 x the profile's published mean TTFT, else 30).", c.positive, type="float"),
    # ---- each host ------------------------------------------------------------------------------------------
    S("sglang_host_ip", HOST, "Address the host's services bind and its peers dial (default ansible_host).",
      c.address),
    S("sglang_nic", HOST, "Interface of HCCL/GLOO (HCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME): required on every rank of "
      "a multi-node instance; on a single-node instance used where given, lo where not.", c.nic),
    S("sglang_hardware", HOST, "A2 or A3: checked against the profile.", c.hardware),
    S("sglang_instances_per_host", HOST, "Replicas of a single-node PD-mixed instance on the host, each on its own "
      "NPUs (--base-gpu-id) and ports: a number (1..16) or max, as many as the host's NPUs hold (the planner "
      "refuses it for any other profile).", _replicas, 1, "raw"),
    S("sglang_npu_cpus", HOST, "The CPUs near each NPU of the host, as npu-smi info -t topo prints them (NPU index "
      "-> CPU list, e.g. {0: '144-167'}): each server's unit is pinned to the CPUs of its NPUs (CPUAffinity=, a "
      "container's --cpuset-cpus); {} runs it unpinned. Preflight says what to set.", _npu_cpus, {}, "dict"),
    F(ETC_DIR, HOST, "Directory of C(cann_env.sh) and of the services' C(<name>.env) files.", c.unit_path,
      "/etc/sglang", "path", entries=("sglang_service:render",) + _SVC_R,
      defaults_in=("sglang_service",), reaches="launcher, watchdog unit ExecStart=",
      template="sglang_tpl_etc_dir"),
    F(LIBEXEC_DIR, HOST, "Directory of the launchers C(<name>.sh) (ExecStart of the units).", c.unit_path,
      "/usr/local/libexec/sglang", "path", entries=_SVC_R + ("sglang_service:render",),
      defaults_in=("sglang_service",), reaches="unit ExecStart=", template="sglang_tpl_libexec_dir"),
    F(SYSTEMD_DIR, HOST, "Directory of the systemd units C(<name>.service).", c.absolute_path, "/etc/systemd/system",
      "path", entries=_SVC_R, defaults_in=("sglang_service",)),
    F(SYSCTL_DIR, HOST, "Directory of the persisted settings file C(90-sglang.conf).", c.absolute_path,
      "/etc/sysctl.d", "path", entries=("host_tuning:main",), defaults_in=("host_tuning",)),
    S("sglang_cpu_sysfs_dir", HOST, "sysfs CPU directory (overridable for tests).", c.absolute_path,
      "/sys/devices/system/cpu", "path", entries=("host_tuning:main",), defaults_in=("host_tuning",)),
    S("sglang_proc_sys_dir", HOST, "Where the live kernel settings are read and written, as sysctl(8) does "
      "(overridable for tests).", c.absolute_path, "/proc/sys", "path", entries=("host_tuning:main",),
      defaults_in=("host_tuning",)),
    S("sglang_host_tuning_governor", HOST, "Manage the CPU frequency governor.", c.boolean, True, "bool",
      entries=("host_tuning:main",), defaults_in=("host_tuning",)),
    S("sglang_host_tuning_sysctl", HOST, "Manage the kernel settings (sysctl).", c.boolean, True, "bool",
      entries=("host_tuning:main",), defaults_in=("host_tuning",)),
    F("sglang_restart_sec", HOST, "C(RestartSec=) of the units.", _int(0, 3600), 10, "int",
      entries=_SVC_R + ("sglang_service:render",), defaults_in=("sglang_service",),
      template="sglang_tpl_restart_sec"),
    F("sglang_timeout_stop_sec", HOST, "C(TimeoutStopSec=) of the units.", _int(1, 86400), 60, "int",
      entries=_SVC_R + ("sglang_service:render",), defaults_in=("sglang_service",),
      template="sglang_tpl_timeout_stop_sec"),
    F("sglang_limit_nofile", HOST, "C(LimitNOFILE=) of the units.", _int(1, 1073741816), 1048576, "int",
      entries=_SVC_R + ("sglang_service:render",), defaults_in=("sglang_service",),
      template="sglang_tpl_limit_nofile"),
    S("sglang_server_install", HOST, "Install the server's Python packages into I(sglang_server_venv) before "
      "deploying (off: the image provides SGLang).", c.boolean, False, "bool", entries=_SVC,
      defaults_in=("sglang_service",)),
    S("sglang_server_packages", HOST, "pip requirement specifiers to install instead of the reference stack; "
      "empty: the reference environment of the plan's SGLang release.", _requirements, [], "list", "str",
      entries=_SVC + ("sglang_service:install",), defaults_in=("sglang_service",)),
    S("sglang_server_venv", HOST, "Virtualenv receiving the server packages (created when missing).", c.absolute_path,
      "/opt/sglang", "path", entries=_SVC + ("sglang_service:install",), defaults_in=("sglang_service",)),
    S("sglang_server_virtualenv_command", HOST, "Command creating the virtualenv.", _venv_command,
      "python3 -m venv", entries=_SVC + ("sglang_service:install",), defaults_in=("sglang_service",)),
    S("sglang_wheelhouse", HOST, "Controller-side directory of wheels for offline installs (\"\": the package "
      "index); copied to the host and given to pip with --find-links.", c.wheelhouse, "",
      entries=_SVC_R + ("sglang_service:install",), defaults_in=("sglang_service", "router")),
    S("sglang_server_wheelhouse_dest", HOST, "Host-side copy of I(sglang_wheelhouse).", c.absolute_path,
      "/var/cache/sglang/wheelhouse", "path", entries=_SVC + ("sglang_service:install",),
      defaults_in=("sglang_service",)),
    S("sglang_wheelhouse_only", HOST, "With I(sglang_wheelhouse), install from it alone (C(--no-index)); false "
      "adds it to the package index.", c.boolean, True, "bool", entries=("sglang_service:main", "sglang_service:install"),
      defaults_in=("sglang_service",)),
    S("sglang_server_stack", HOST, "Package -> version completing or overriding the release's reference "
      "environment, e.g. C({torch: 2.9.0+cpu}).", c.stack_pins, {}, "dict",
      entries=("sglang_service:main", "sglang_service:install"), defaults_in=("sglang_service",)),
    S("sglang_router_install", HOST, "Install sglang-router==I(sglang_router_version) into I(sglang_router_venv) "
      "on router hosts.", c.boolean, False, "bool", entries=("router:main",), defaults_in=("router",)),
    S("sglang_router_version", HOST, "Exact sglang-router version; required when I(sglang_router_install).",
      _version, "", entries=("router:main",), defaults_in=("router",)),
    S("sglang_router_venv", HOST, "Virtualenv receiving sglang-router (created when missing).", c.absolute_path,
      "/opt/sglang-router", "path", entries=("router:main",), defaults_in=("router",)),
    S("sglang_router_virtualenv_command", HOST, "Command creating the router's virtualenv.", _venv_command,
      "python3 -m venv", entries=("router:main",), defaults_in=("router",)),
    S("sglang_router_wheelhouse_dest", HOST, "Host-side copy of I(sglang_wheelhouse) on router hosts.", c.absolute_path,
      "/var/cache/sglang/wheelhouse", "path", entries=("router:main",), defaults_in=("router",)),
    S("sglang_router_register_timeout", HOST, "Seconds to wait for the router to list (and find healthy) an "
      "instance it was missing.", _int(1, 86400), 300, "int",
      entries=("router:wait_healthy",), defaults_in=("router",)),
    S("sglang_health_retries", HOST, "Health checks per service before giving up (at most retries x delay "
      "seconds).", _int(1, 100000), 180, "int", entries=_WAIT, defaults_in=("sglang_service",)),
    S("sglang_health_delay", HOST, "Seconds between two health checks of a service.", _int(0, 3600), 10, "int",
      entries=_WAIT, defaults_in=("sglang_service",)),
    S("sglang_health_timeout", HOST, "Timeout in seconds of one HTTP health request.", _int(1, 3600), 10, "int",
      entries=_WAIT, defaults_in=("sglang_service",)),
    S("sglang_health_log_lines", HOST, "Journal lines of an unhealthy service shown in the failure message.",
      _int(1, 100000), 40, "int", entries=_WAIT, defaults_in=("sglang_service",)),
    S("sglang_health_readiness", HOST, "Wait for a service's ready URL (the Rust router's /readiness) where it has "
      "one; false: its health URL only.", c.boolean, True, "bool", entries=_WATCH, defaults_in=("sglang_service",)),
    F("sglang_watchdog_enabled", HOST, "Install the instance watchdog for every rank of a multi-node instance and "
      "on router hosts with a worker API.", c.boolean, True, "bool", entries=_WATCH, defaults_in=("sglang_service",)),
    F("sglang_watchdog_single_node", HOST, "Also watch single-node servers.", c.boolean, False, "bool", entries=_WATCH,
      defaults_in=("sglang_service",)),
    F("sglang_watchdog_interval", HOST, "Seconds between two checks of rank 0's C(/health_generate).",
      _int(1, 3600), 10, "int", entries=_WATCH, defaults_in=("sglang_service",)),
    F("sglang_watchdog_timeout", HOST, "Seconds one check may take before it counts as failed.", _int(1, 3600), 30,
      "int", entries=_WATCH, defaults_in=("sglang_service",)),
    F("sglang_watchdog_failures", HOST, "Failed checks in a row after which the instance is dead or hung.",
      _int(1, 1000), 3, "int", entries=_WATCH, defaults_in=("sglang_service",)),
    F("sglang_watchdog_startup_grace", HOST, "Seconds after a rank (re)started during which failed checks do not "
      "count (model loading).", _int(1, 86400), 900, "int", entries=_WATCH, defaults_in=("sglang_service",)),
    F("sglang_watchdog_max_restarts", HOST, "Restarts within I(sglang_watchdog_window) after which the watchdog "
      "gives up.", _int(1, 1000), 5, "int", entries=_WATCH, defaults_in=("sglang_service",)),
    F("sglang_watchdog_window", HOST, "Seconds over which restarts are counted.", _int(1, 604800), 3600, "int",
      entries=_WATCH, defaults_in=("sglang_service",)),
    F("sglang_watchdog_backoff_initial", HOST, "Seconds between the first and the second restart, doubled after "
      "each further one.", _int(1, 86400), 30, "int", entries=_WATCH, defaults_in=("sglang_service",)),
    F("sglang_watchdog_backoff_max", HOST, "Longest wait between two restarts (at least the initial backoff).",
      _int(1, 86400), 600, "int", entries=_WATCH, defaults_in=("sglang_service",)),
    F("sglang_watchdog_python", HOST, "Interpreter running the watchdog (standard library only).", c.unit_path,
      "/usr/bin/python3", "path", entries=_WATCH, defaults_in=("sglang_service",), reaches="watchdog unit",
      template="sglang_tpl_watchdog_python"),
    F(WATCHDOG_STATE_DIR, HOST, "Directory of the watchdogs' state files.", c.unit_path,
      "/var/lib/sglang-watchdog", "path", entries=_WATCH, defaults_in=("sglang_service",)),
    S("sglang_stage_port", HOST, "Port of the read-only rsync daemon a host that holds a verified model directory "
      "serves it to the others on, while stage_weights.yml runs.", _int(1, 65535), 8873, "int"),
    S("sglang_stage_rsync", HOST, "rsync on the host (absolute path or a command on PATH).", c.command, "rsync"),
    S("sglang_watchdog_port", HOST, "Port on rank 0's address where rank 0's watchdog serves its unit's "
      "InvocationID to the other ranks' watchdogs (read from rank 0's host).", _int(1, 65535), 8990, "int",
      entries=_WATCH, defaults_in=("sglang_service",)),
    S(GENERATION_DIR, HOST, "Where upgrade.yml keeps each server's previous files (the last good generation, root "
      "only) and deploy.yml records the release, image and interpreter the servers run (runtime.json).", c.unit_path,
      "/var/lib/sglang/generations", "path"),
    S("sglang_monitoring_host_dir", HOST, "Where playbooks/monitoring.yml writes the Prometheus files on the hosts of "
      "the sglang_monitoring group.", c.absolute_path, "/etc/prometheus/sglang", "path"),
    S("sglang_container_pull_timeout", HOST, "Seconds a pull (or load) of the image may take on a host.",
      _int(1, 86400), 3600, "int", entries=("sglang_service:image",), defaults_in=("sglang_service",)),
    S("sglang_container_archive_dest", HOST, "Where the controller's image tarball is copied on the host before "
      "'<engine> load' (its directory is created 0700 when missing, never changed).", c.absolute_path,
      "/var/cache/sglang/sglang-image.tar", "path", entries=("sglang_service:image",),
      defaults_in=("sglang_service",)),
    # ---- options of one playbook (-e) ---------------------------------------------------------------------
    S("sglang_monitoring_dir", RUN, "playbooks/monitoring.yml: write the Prometheus files into this controller "
      "directory (else onto the sglang_monitoring hosts).", _controller_path, type="path"),
    S("sglang_import_source", RUN, "playbooks/import_profiles.yml: the best-practice document to import into profiles "
      "(the rendered page saved as text, or a per-model MDX page).", _controller_path, type="path"),
    S("sglang_import_parser_python", RUN, "playbooks/import_profiles.yml: a Python interpreter on the controller with "
      "an SGLang release installed; the imported server commands of that release go through its own parser.",
      _controller_path, type="path"),
    S("sglang_import_router_python", RUN, "playbooks/import_profiles.yml: a Python interpreter on the controller with "
      "an sglang-router release installed; the imported router commands of that release go through its parser.",
      _controller_path, type="path"),
    S("sglang_profiles_dir", RUN, "A controller directory of the operator's own profiles: playbooks/import_profiles.yml "
      "writes into it (never over a file it did not write), and every playbook that plans looks a profile up there "
      "before the collection's.", _controller_path, type="path"),
    S("sglang_plan_file", RUN, "plan.yml (and every playbook that plans): also write the plan table and the plan "
      "as JSON to this controller path.", _controller_path, type="path"),
    S("sglang_render_dir", RUN, "Render mode: write every host's files into this controller directory instead of "
      "deploying.", _controller_path, type="path", entries=("sglang_service:render",)),
    S("sglang_k8s_dir", RUN, "playbooks/kubernetes.yml: write the Kubernetes manifests into this controller "
      "directory (new, empty or holding an earlier export of the same plan).", _controller_path, type="path"),
    S("sglang_k8s_kind", RUN, "Kubernetes export: rbg (one RoleBasedGroup) or lws (a LeaderWorkerSet per server "
      "role, the router as a Deployment).", _word(*_k8s_values.KINDS), "rbg", choices=_k8s_values.KINDS),
    S("sglang_k8s_name", RUN, "Kubernetes export: the name every object's name starts with.", _k8s_values.name,
      "sglang"),
    S("sglang_k8s_namespace", RUN, "Kubernetes export: the namespace of the objects (and of the DNS names the "
      "router and the ranks dial).", _k8s_values.namespace, "default"),
    S("sglang_k8s_instances", RUN, "Kubernetes export: role -> instance count (router: replicas of the router); "
      "default: the profile's documented instances and one router.", _k8s_values.instances, type="dict"),
    S("sglang_k8s_npu_resource", RUN, "Kubernetes export: the NPU resource the device plugin offers "
      "(huawei.com/ascend-1980 on Huawei Cloud CCE).", _k8s_values.resource, "huawei.com/Ascend910"),
    S("sglang_k8s_model_pvc", RUN, "Kubernetes export: a PersistentVolumeClaim holding the model directories, "
      "mounted read-only at their common parent (default: each model path as a read-only hostPath).",
      _k8s_values.object_name, type="str"),
    S("sglang_k8s_secret_name", RUN, "Kubernetes export: the Secret holding the secret flags' values.",
      _k8s_values.object_name, "sglang-secrets"),
    S("sglang_k8s_secret_flags", RUN, "Kubernetes export: role -> the --flags whose values come from the Secret "
      "(its key: the flag without the leading dashes, e.g. api-key).", _k8s_values.secret_flags, type="dict"),
    S("sglang_k8s_router_discovery", RUN, "Kubernetes export: a router with a worker API (not --mini-lb) finds its "
      "workers by label (sglang-router's Kubernetes service discovery, with a ServiceAccount allowed to list and "
      "watch the namespace's pods) instead of a fixed list; a --mini-lb router keeps its fixed list.",
      c.boolean, True, "bool"),
    S("sglang_k8s_prometheus_operator", RUN, "Kubernetes export: with metrics on (sglang_metrics), a PodMonitor per "
      "role and the alert and recording rules of monitoring.yml as a PrometheusRule (monitoring.coreos.com/v1, "
      "for a Prometheus Operator in the cluster).", c.boolean, True, "bool"),
    S("sglang_k8s_rollout_partition", RUN, "Kubernetes export: server role -> its rolling update's partition (the "
      "instances below it keep their version: hold a role with its count, a canary with its count - 1); default: "
      "none, every instance is updated.", _k8s_values.partition, type="dict"),
    S("sglang_k8s_startup_seconds", RUN, "Kubernetes export: how long a server may take to load its model before "
      "the liveness probe counts (the startup probe's allowance).", _int(60, 86400), 3600, "int"),
    S("sglang_preflight_fail_on", RUN, "Stop deploy/preflight on: fail, warn or never.", _word("fail", "warn", "never"),
      "fail", choices=('fail', 'warn', 'never')),
    S("sglang_preflight_skip", RUN, "Skip the preflight checks of deploy.yml.", c.boolean, False, "bool"),
    S("sglang_preflight_stack", RUN, "A server stack other than the reference environment: warn, fail or off.",
      _word("warn", "fail", "off"), "warn", choices=('warn', 'fail', 'off')),
    S("sglang_preflight_json", RUN, "Also write the preflight report as JSON on the controller.", _controller_path, type="path"),
    S("sglang_preflight_probe_timeout", RUN, "Seconds of each preflight probe (TCP connect, health request).",
      _int(1, 3600), 3, "int"),
    S("sglang_preflight_runtime_timeout", RUN, "Seconds of the server interpreter's stack report and of each NPU "
      "tool call (npu-smi, at least 30; hccn_tool, at least 10).", _int(1, 3600), 60, "int"),
    S("sglang_preflight_min_hbm_free_ratio", RUN, "Free HBM ratio every NPU needs (default: the service's "
      "--mem-fraction-static).", _ratio, type="float"),
    S("sglang_min_driver_version", RUN, "Lowest NPU driver version preflight accepts; unset, the driver (Ascend "
      "HDK) the planned release's CANN needs where profiles/_releases.yml names one, else any.", c.text),
    S("sglang_min_cann_version", RUN, "Lowest CANN toolkit version preflight accepts.", c.text),
    # A command name is looked up on the host in PATH and then in the driver's tool directories (the driver puts
    # npu-smi in /usr/local/sbin or /usr/local/bin), so a stand-in placed in PATH is found too.
    S("sglang_npu_smi", RUN, "npu-smi on the hosts: a command name (looked up in PATH, then the driver's tool "
      "directories) or an absolute path.", c.command, "npu-smi"),
    S("sglang_hccn_tool", RUN, "hccn_tool on the hosts (absolute path).", c.absolute_path,
      "/usr/local/Ascend/driver/tools/hccn_tool", "path"),
    S("sglang_npu_driver_info", RUN, "The driver's version.info on the hosts.", c.absolute_path,
      "/usr/local/Ascend/driver/version.info", "path"),
    S("sglang_npu_toolkit_info", RUN, "Glob patterns (absolute) of the toolkit's ascend_toolkit_install.info on the "
      "hosts; the first readable match with a version wins (one path is a list of one).", _absolute_paths,
      ["/usr/local/Ascend/ascend-toolkit/latest/*-linux/ascend_toolkit_install.info",
       "/usr/local/Ascend/cann/*-linux/ascend_toolkit_install.info",
       "/usr/local/Ascend/cann-*/*-linux/ascend_toolkit_install.info",
       "/usr/local/Ascend/ascend-toolkit/*/*-linux/ascend_toolkit_install.info"], "list", "str"),
    S("sglang_doctor_fail_on", RUN, "doctor.yml fails on: fail, warn or never.", _word("fail", "warn", "never"),
      "fail", choices=('fail', 'warn', 'never')),
    S("sglang_doctor_include_ok", RUN, "doctor.yml also lists the checks that passed.", c.boolean, False, "bool"),
    S("sglang_doctor_json", RUN, "Where doctor.yml writes its JSON report on the controller.", _controller_path,
      "sglang-doctor.json", "path"),
    S("sglang_status_json", RUN, "Where status.yml writes its JSON report on the controller.", _controller_path,
      "sglang-status.json", "path"),
    S("sglang_status_fail_unhealthy", RUN, "status.yml fails when a service is not healthy.", c.boolean, False, "bool"),
    S("sglang_status_timeout", RUN, "Seconds of each status probe.", _int(1, 600), 5, "int"),
    S("sglang_stop_disable", RUN, "stop.yml also disables the units.", c.boolean, True, "bool"),
    S("sglang_stop_purge", RUN, "stop.yml also removes the files of the deployment.", c.boolean, False, "bool"),
    S("sglang_stop_retries", RUN, "Checks (one per second) that a stopped service is gone.", _int(1, 3600), 45, "int"),
    S("sglang_stop_port_timeout", RUN, "Seconds a stopped service's ports may take to close.", _int(1, 3600), 30, "int"),
    S("sglang_restart_only", RUN, "Instance keys restart.yml restarts (a list, or comma-separated).", _restart_only,
      type="raw", resolved="list[str] | str"),
    S("sglang_restart_batch", RUN, "Instances restart.yml may take out of service at once (maxUnavailable): a "
      "count, or a percentage of the server instances (25%).", _restart_batch, 1, "raw", resolved="int"),
    S("sglang_restart_router_timeout", RUN, "Seconds the router may take to drop or list an instance.",
      _int(1, 86400), 300, "int"),
    S("sglang_retire", RUN, "Instances retire.yml takes out of the deployment: instance keys (mixed-i3) or inventory "
      "hosts (every instance with a rank on one), a list or comma-separated.", _retire, type="raw",
      resolved="list[str]"),
    S("sglang_retire_force", RUN, "retire.yml may retire every instance of a role, or instances behind a --mini-lb "
      "router (no worker API: it keeps sending them requests until a deploy restarts it).", c.boolean, False, "bool"),
    S("sglang_retire_drain_timeout", RUN, "Seconds retire.yml waits, once an instance is out of the routers, for its "
      "running requests to reach zero (rank 0's /metrics) before it stops it.", _int(0, 86400), 300, "int"),
    S("sglang_upgrade_all_at_once", RUN, "deploy.yml deploys a change of SGLang release, container image or server "
      "interpreter onto running servers, restarting every instance at once (otherwise it refuses and names "
      "upgrade.yml).", c.boolean, False, "bool"),
    S("sglang_upgrade_bench", RUN, "upgrade.yml benchmarks its canaries (the profile's benchmark with "
      "sglang_upgrade_bench_prompts prompts; a PD-mixed canary alone, a PD one through the router) before the "
      "other instances follow; off: the health gate alone.", c.boolean, True, "bool"),
    S("sglang_upgrade_bench_prompts", RUN, "Prompts of a canary's benchmark.", _int(1, 100000), 16, "int"),
    S("sglang_upgrade_tpot_factor", RUN, "A canary fails its benchmark when its mean TPOT exceeds the profile's "
      "target (or sglang_bench_tpot_target_ms) times this factor, or a request fails.", _factor, 1.5, "float"),
    S("sglang_stage_parallel", RUN, "Hosts that pull a model directory at once (stage_weights.yml).",
      _int(1, 4096), 8, "int"),
    S("sglang_stage_tree", RUN, "Hosts that hold a verified copy serve the others (a tree); false: every host pulls "
      "from the source (a star).", c.boolean, True, "bool"),
    S("sglang_stage_fanout", RUN, "Hosts the source and each serving host send to at once in a tree.",
      _int(1, 64), 1, "int"),
    S("sglang_stage_verify", RUN, "sizes: the files staged have the source's sizes (rsync checks each transfer); "
      "full: every file is compared with the source by content and its sha256 goes into the weights checks' "
      "cache, where the hosts' copies must agree.", _word("sizes", "full"), "sizes", choices=("sizes", "full")),
    S("sglang_stage_bwlimit", RUN, "KiB/s each transfer may take (0: no limit).", _int(0, 1 << 30), 0, "int"),
    S("sglang_stage_timeout", RUN, "Seconds a host's pull may take.", _int(1, 30 * 86400), 86400, "int"),
    S("sglang_stage_progress_interval", RUN, "Seconds between two progress lines of a pull.", _int(1, 3600), 10,
      "int"),
    S("sglang_state_dir", RUN, "Controller directory of the records of what each deployment runs "
      "(<deployment>.json, written by deploy.yml, upgrade.yml and retire.yml; read by plan.yml and retire.yml).",
      _controller_path, "sglang-state", "path"),
    S("sglang_bench_dir", RUN, "Controller directory of the benchmark results.", _controller_path, "sglang-bench",
      "path"),
    S("sglang_bench_environment", RUN, "Extra environment of the benchmark client.", _mapping, {}, "dict"),
    S("sglang_bench_fail", RUN, "bench.yml fails when a documented target is missed.", c.boolean, True, "bool"),
    S("sglang_bench_model", RUN, "--model of the benchmark client.", c.text),
    S("sglang_bench_overrides", RUN, "Flags over the documented benchmark command.", _mapping, {}, "dict"),
    S("sglang_bench_python", RUN, "Interpreter of the benchmark client (default: the servers', sglang_python).",
      c.command, resolved="str"),
    S("sglang_bench_timeout", RUN, "Seconds the benchmark may run.", _int(1, 604800), 7200, "int"),
    S("sglang_bench_tokenizer", RUN, "--tokenizer of the benchmark client.", c.text),
    S("sglang_bench_tpot_target_ms", RUN, "TPOT target of the benchmark in ms (default: the profile's).", c.positive, type="float"),
    S("sglang_bench_tpot_tolerance", RUN, "Tolerance over the TPOT (and TTFT) target (0.10: 10 %).", _ratio, 0.10,
      "float"),
    S("sglang_bench_ttft_target_ms", RUN, "Mean TTFT target of the benchmark in ms (default: the profile's, where it "
      "has one).", c.positive, type="float"),
    S("sglang_collect", RUN, "doctor.yml also collects the failure bundle.", c.boolean, False, "bool"),
    S("sglang_collect_dir", RUN, "Controller directory of the failure bundle.", _controller_path, ".", "path"),
    S("sglang_collect_since", RUN, "Start of the journal window: @EPOCH, YYYY-MM-DD[ HH:MM[:SS]], today, yesterday.",
      _since),
    S("sglang_collect_max_lines", RUN, "Journal lines kept per unit.", _int(1, 1000000), 5000, "int"),
    S("sglang_collect_max_bytes", RUN, "Journal bytes kept per unit.", _int(1, 1 << 30), 4 << 20, "int"),
    S("sglang_collect_dmesg_lines", RUN, "Kernel lines of the NPU driver kept.", _int(1, 100000), 500, "int"),
    # ---- role parameters and the collection's own facts ----------------------------------------------------
    S("sglang_plan", INTERNAL, "The deployment plan computed once on the controller by the planner action "
      "(default: the fact hostvars['localhost'].sglang_plan).", default="{{ hostvars['localhost'].sglang_plan }}",
      type="dict", entries=("host_tuning:main", "router:main", "router:wait_healthy",
                            "sglang_service:main", "sglang_service:image", "sglang_service:install",
                            "sglang_service:wait_healthy", "sglang_service:render") + SERVERS_MAIN,
      defaults_in=("host_tuning", "router", "sglang_service")),
    S("sglang_service_role", PARAMETER, "Only the plan services of this role are handled.",
      choices=("prefill", "decode", "mixed", "router"), entries=("sglang_service:main", "sglang_service:wait_healthy")),
    S("sglang_packages_changed", INTERNAL, "Set when the role's packages were (re)installed in this run: its "
      "services restart.", default=False, type="bool", entries=("sglang_service:main",),
      defaults_in=("sglang_service",)),
    S("sglang_server_packages_changed", INTERNAL, "Set by the install entry point of ascend.sglang.sglang_service: "
      "defined when the server packages were installed (checked) in this run, true when they changed (the host's "
      "services restart).", type="bool", entries=("sglang_service:main",)),
    S("sglang_run_started", INTERNAL, "When this run started (the journal window of a collection)."),
    S("sglang_rollout_failure", INTERNAL, "A host's failed start or health gate, kept for the collection."),
    S("sglang_stack_result", INTERNAL, "Registered: the stack check of deploy.yml."),
    S("sglang_preflight_result", INTERNAL, "Registered: a host's preflight observations."),
    S("sglang_preflight_ping", INTERNAL, "Registered: a host's NPU pings."),
    S("sglang_watchdog_status", INTERNAL, "Registered: a host's watchdog states."),
    S("sglang_status_result", INTERNAL, "Registered: a host's service status (tasks/host_status.yml: status.yml, "
      "restart.yml, upgrade.yml)."),
    S("sglang_fleet_record", INTERNAL, "Set by plan.yml: the controller's record of what the deployment runs "
      "(sglang_state_dir), or none."),
    S("sglang_stage", INTERNAL, "Set by stage_weights.yml on the controller: the stage's plan (what each host lacks, "
      "the rounds)."),
    S("sglang_stage_observed", INTERNAL, "Registered: what a server host holds of its model directories and the "
      "source's listing as it reads it (stage_weights.yml)."),
    S("sglang_stage_pulled", INTERNAL, "Set by stage_weights.yml: what a host received, round by round."),
    S("sglang_stage_failed", INTERNAL, "Set by stage_weights.yml: why a host's part in a round failed."),
    S("sglang_upgrade_files", INTERNAL, "Registered: the new files upgrade.yml wrote on a host."),
    S("sglang_bench_result", INTERNAL, "Registered: the benchmark's result."),
    S("sglang_collect_result", INTERNAL, "Registered: the failure bundle's result."),
)

BY_NAME: dict[str, Setting] = {row.name: row for row in TABLE}
# Values read once for the deployment (and compared on every host that sets them).
ONE_VALUE = (DEPLOYMENT, RUN)


def host_settings() -> tuple[Setting, ...]:
    return tuple(row for row in TABLE if row.scope == HOST)


def defaults(scope: str | None = None) -> dict[str, Any]:
    """name -> default of every row that has one (of one scope)."""
    return {row.name: row.default for row in TABLE
            if row.default is not NO_DEFAULT and (scope is None or row.scope == scope)}


def host_values(planned: Mapping[str, Any] | None, host: str, own: Mapping[str, Any] | None = None
                ) -> dict[str, Any]:
    """One inventory host's host-scope settings by variable name: the plan's (``planned``: its HostPlan.settings;
    checked, defaults filled in) for a host the plan has an entry for; for any other host (None: one that left the
    plan, as stop.yml still reaches it), the values it sets itself (``own``: its variables) checked by this table
    like a planned host's, over the defaults.
    Raises PlanError naming the host and variable of a refused value: its paths would reach the purge unchecked."""
    if planned is not None:
        return dict(planned)
    errors = Collector()
    out = check_host_values(own or {}, errors, None, host)
    errors.raise_if_any()
    return out


def template_inputs(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The role templates' inputs filled from a host's file settings (full names): each row says which it fills."""
    return {row.template: settings[row.name] for row in TABLE if row.template}


def file_defaults() -> dict[str, Any]:
    """The settings a host's files depend on, with their defaults, by their full names (sglang_etc_dir, ...): the
    templates read them under these names too."""
    return {row.name: row.default for row in TABLE if row.files}


def nearest(name: str) -> str | None:
    """The known name a misspelled one most likely meant."""
    return c.nearest(name, BY_NAME)


def unknown_message(name: str) -> str:
    hint = nearest(name)
    return ("is not a variable of this collection" + (f"; did you mean {hint}?" if hint else "")
            + " (every sglang_* variable is a row of the settings table, plugins/plugin_utils/plan/_settings.py)")


def check(row: Setting, value: Any, errors: Collector, where: c.Where) -> Any:
    """One row's value, checked (a row checked by the planner is returned as is)."""
    return value if row.check is None else row.check(value, errors, where)


def one_value(name: str, variables: Mapping[str, Any], errors: Collector) -> Any:
    """One deployment or run value for a step that runs before the plan or without one (plan.yml's own inputs, the
    Kubernetes export, the importer): checked by its row as the plan checks it, the row's default where it is unset
    or refused (None where the row has none).  The one place such a step applies a default: its playbook passes
    nothing, so no Jinja default restates the table."""
    row = BY_NAME[name]
    if row.scope not in ONE_VALUE:
        raise ValueError(f"{name} is a {row.scope} setting, not read once for the run")
    default = None if row.default is NO_DEFAULT else row.default
    value = variables.get(name)
    if value is None:
        return default
    checked = check(row, value, errors, c.Where(name))
    return default if checked is None else checked


def check_host_values(values: Mapping[str, Any], errors: Collector, group: str | None, host: str | None
                      ) -> dict[str, Any]:
    """One host's host-scope values (those it sets) -> every host setting with a default, checked, the host's
    value where it has a usable one.  Cross-row rules live here too."""
    out = defaults(HOST)
    for row in host_settings():
        # The rows without a default (address, NIC, hardware) are the host's facts: read by the topology.
        if row.name in values and row.default is not NO_DEFAULT:
            if values[row.name] is DEFERRED:
                if row.files:
                    c.Where(row.name, group, host).add(
                        errors, "refers to other hosts or to the plan, but the host's files are written from the "
                                "plan: give it a value of its own")
                continue
            checked = check(row, values[row.name], errors, c.Where(row.name, group, host))
            if checked is not None:
                out[row.name] = checked
    if out["sglang_router_install"] is True and not out["sglang_router_version"] \
            and values.get("sglang_router_version") is not DEFERRED:
        c.Where("sglang_router_version", group, host).add(
            errors, "sglang_router_install is true: set the exact sglang-router version to install")
    if out["sglang_watchdog_backoff_max"] < out["sglang_watchdog_backoff_initial"]:
        c.Where("sglang_watchdog_backoff_max", group, host).add(
            errors, f"must be at least sglang_watchdog_backoff_initial ({out['sglang_watchdog_backoff_initial']}), "
                    f"got {out['sglang_watchdog_backoff_max']}")
    return out


def check_one_values(variables: Mapping[str, Any], errors: Collector) -> dict[str, Any]:
    """The deployment and run values (read once for the deployment) -> every such row with a default, and every
    value set of a row with a checker of its own, checked: the checked value, the table's default where the value
    is unset or refused (a refused value is in ``errors``).  The plan keeps it (``sglang_plan.settings``): the
    operations playbooks read their settings there, so that none restates a default of this table.  A value of a
    row checked by the planner with the profile is left to the planner (not returned).  Every row it returns is
    there, None where it is unset and has no default: a playbook reads ``sglang_plan.settings.<name>`` as it is, with
    no Jinja ``default()`` of its own (None reaches a module option as unset)."""
    out = {row.name: None if row.default is NO_DEFAULT else row.default for row in TABLE
           if row.scope in ONE_VALUE and (row.default is not NO_DEFAULT or row.check is not None)}
    for name, value in variables.items():
        row = BY_NAME.get(name)
        if row is not None and row.scope in ONE_VALUE and value is not None:
            checked = check(row, value, errors, c.Where(name))
            if checked is not None and row.check is not None:
                out[name] = checked
    return out
