# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The input contract: every inventory value the collection reads, typed and checked on the controller.

Pure; no Ansible import.  Each checker takes the raw value and a ``Where`` (group, host, variable),
adds a finding to the Collector when the value is unusable and returns the clean value (or None).
Nothing here expands, strips or coerces a user value into something else: a value is taken
literally or refused.

IPv6 is refused: SGLang's ``--dist-init-addr`` and the MemFabric store URL are ``host:port`` strings
split on the last ':' by their consumers, and the Ascend collective stack this collection targets
(HCCL over the NIC of ``sglang_nic``) is deployed on IPv4; an unbracketed or half-bracketed address
would hang a rendezvous instead of failing.  Hosts take an IPv4 address or a DNS name.
"""

from __future__ import annotations

import dataclasses
import difflib
import ipaddress
import math
import re
from typing import Any, Iterable, Mapping

from ansible_collections.ascend.sglang.plugins.module_utils.checks import _checks
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import Collector

# C0 controls, DEL and C1 controls: none may reach a file on a host.
CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# Longest value accepted anywhere (PATH_MAX); anything longer is a mistake or an attack.
MAX_LEN = 4096
ENV_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Inventory host names become directory names in render mode and appear in messages.
INVENTORY_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:-]{0,252}")
HOST_LABEL_RE = re.compile(r"[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?")
# A command found on PATH (python3, python3.11) when not an absolute path.
COMMAND_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")
RELEASE_RE = re.compile(r"[0-9][0-9A-Za-z.+-]{0,63}")
# Linux dev_valid_name(): 1..15 bytes, not '.' or '..', no '/', ':' or whitespace.  ',' is refused
# too: GLOO/HCCL read a comma as a list of interfaces.  Printable ASCII only.
NIC_RE = re.compile(r"[!-~]{1,15}")
NIC_FORBIDDEN = frozenset("/:,")
HARDWARE = ("A2", "A3")
BOOL_STRINGS = {"true": True, "yes": True, "on": True, "1": True,
                "false": False, "no": False, "off": False, "0": False}


@dataclasses.dataclass(frozen=True)
class Where:
    variable: str
    group: str | None = None
    host: str | None = None

    def add(self, errors: Collector, message: str) -> None:
        errors.add(message, group=self.group, host=self.host, variable=self.variable)


class Literal(str):
    """A user-provided text: rendered as is, never searched for planner {placeholders}."""

    __slots__ = ()


def _shown(value: Any) -> str:
    """A short, single-line picture of a refused value (never the whole of a 100 kB string)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def nearest(name: str, known: Iterable[str], cutoff: float = 0.75) -> str | None:
    """The known name a misspelled one most likely meant (a variable, a launch flag), None when none is close."""
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=cutoff)
    return close[0] if close else None


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, (list, tuple, set)):
        return "a list"
    if value is None:
        return "null"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    return f"a {type(value).__name__}"


def text(value: Any, errors: Collector, where: Where, *, blank_ok: bool = False,
         what: str = "a string") -> str | None:
    """A string with no control characters, not absurdly long, blank only where allowed."""
    if not isinstance(value, str):
        where.add(errors, f"must be {what}, got {_type_name(value)} {_shown(value)}")
        return None
    if len(value) > MAX_LEN:
        where.add(errors, f"is {len(value)} characters long (at most {MAX_LEN})")
        return None
    bad = CONTROL_RE.search(value)
    if bad:
        where.add(errors, f"contains the control character {bad.group()!r} ({_shown(value)}); refused")
        return None
    if not blank_ok and not value.strip():
        where.add(errors, f"must not be blank (got {_shown(value)}); remove the variable to use the default")
        return None
    return value


def absolute_path(value: Any, errors: Collector, where: Where, *, no_blanks: bool = False) -> str | None:
    """An absolute path; ``no_blanks`` where it reaches a systemd unit (see unit_path)."""
    path = text(value, errors, where, what="an absolute path (a string)")
    if path is None:
        return None
    if not path.startswith("/"):
        where.add(errors, f"must be an absolute path, got {_shown(path)}")
        return None
    if no_blanks:
        bad = UNIT_UNSAFE_RE.search(path)
        if bad:
            why = UNIT_UNSAFE_WHY[" " if bad.group().isspace() else bad.group()]
            where.add(errors, f"must not contain {why} ({_shown(path)}): it is written into a systemd unit")
            return None
    return path


# What systemd does to a character of a unit's command line: a blank splits the word, quotes and backslashes
# are unquoted or unescaped, '%' starts a specifier, '$' expands a variable (systemd.service(5), "Command
# lines"); ';' separates commands.  A path that reaches a unit is refused with any of them, never escaped.
UNIT_UNSAFE_RE = re.compile(r"[\s\"'\\%$;]")
UNIT_UNSAFE_WHY = {" ": "blanks", '"': "a quote", "'": "a quote", "\\": "a backslash",
                   "%": "'%' (systemd expands it as a specifier)", "$": "'$' (systemd expands it as a variable)",
                   ";": "';' (systemd reads it as a command separator)"}


def unit_path(value: Any, errors: Collector, where: Where) -> str | None:
    """A path that reaches a systemd unit: absolute and made only of characters systemd takes literally."""
    return absolute_path(value, errors, where, no_blanks=True)


def command(value: Any, errors: Collector, where: Where) -> str | None:
    """An interpreter: an absolute path without blanks, or a command name found on PATH."""
    cmd = text(value, errors, where, what="an interpreter path (a string)")
    if cmd is None:
        return None
    if cmd.startswith("/"):
        return absolute_path(cmd, errors, where, no_blanks=True)
    if not COMMAND_RE.fullmatch(cmd):
        where.add(errors, f"must be an absolute path or a command name like python3, got {_shown(cmd)}")
        return None
    return cmd


def release(value: Any, errors: Collector, where: Where) -> str | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        where.add(errors, f"must be a string (quote it: \"{value}\"), got {_type_name(value)} {value!r}")
        return None
    rel = text(value, errors, where, what="a release string")
    if rel is not None and not RELEASE_RE.fullmatch(rel):
        where.add(errors, f"is not a release version, got {_shown(rel)}")
        return None
    return rel


def integer(value: Any, errors: Collector, where: Where, low: int, high: int) -> int | None:
    """An integer (or a string of decimal digits, as INI inventories give them) within low..high."""
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and re.fullmatch(r"[0-9]{1,10}", value):
        number = int(value)
    if number is None:
        where.add(errors, f"must be an integer, got {_type_name(value)} {_shown(value)}")
        return None
    if not low <= number <= high:
        where.add(errors, f"must be within {low}..{high}, got {number}")
        return None
    return number


def positive(value: Any, errors: Collector, where: Where) -> float | None:
    """A positive number (an int, a float or its string), below 1e9."""
    try:
        number = float(value) if not isinstance(value, bool) and isinstance(value, (int, float, str)) else -1.0
    except ValueError:
        number = -1.0
    if not 0.0 < number < 1e9:
        where.add(errors, f"must be a positive number, got {_type_name(value)} {_shown(value)}")
        return None
    return number


def boolean(value: Any, errors: Collector, where: Where) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in BOOL_STRINGS:
        return BOOL_STRINGS[value.lower()]
    where.add(errors, f"must be true or false, got {_type_name(value)} {_shown(value)}")
    return None


def _hostname_ok(name: str) -> bool:
    name = name[:-1] if name.endswith(".") else name
    if not 0 < len(name) <= 253:
        return False
    labels = name.split(".")
    if all(label.isdigit() for label in labels):
        return False  # a malformed IPv4 address, not a name
    return all(HOST_LABEL_RE.fullmatch(label) for label in labels)


def address(value: Any, errors: Collector, where: Where) -> str | None:
    """An IPv4 address or a DNS host name, exactly as given (no blanks, no port, no IPv6)."""
    addr = text(value, errors, where, what="an address (a string)")
    if addr is None:
        return None
    try:
        parsed = ipaddress.ip_address(addr)
    except ValueError:
        parsed = None
    with_port = _address_with_port(addr) if parsed is None else None
    if with_port is not None:
        host, port = with_port
        ports = ("ansible_port sets the port Ansible connects to" if where.variable == "ansible_host"
                 else "the profile sets every port")
        where.add(errors, f"{_shown(addr)} is an address with a port ({port}): {where.variable} takes "
                          f"an address alone ({ports}); use {_shown(host)}")
        return None
    if isinstance(parsed, ipaddress.IPv6Address) or (parsed is None and ":" in addr):
        where.add(errors, f"IPv6 address {_shown(addr)} is not supported: SGLang's --dist-init-addr and the "
                          "MemFabric store URL take host:port; use the host's IPv4 address or a DNS name")
        return None
    if parsed is None and not _hostname_ok(addr):
        where.add(errors, f"is neither an IPv4 address nor a host name: {_shown(addr)}")
        return None
    return addr


def _address_with_port(addr: str) -> tuple[str, str] | None:
    """(address, port) of an IPv4 address or a host name with a port (``198.51.100.11:8000``, ``node1:8000``); None
    for anything else (an IPv6 address, bracketed with a port or not, is refused as IPv6)."""
    head, sep, port = addr.rpartition(":")
    if not sep or not port.isdigit() or ":" in head or head.startswith("["):
        return None
    try:
        ipaddress.IPv4Address(head)
    except ValueError:
        if not _hostname_ok(head):
            return None
    return head, port


def address_key(addr: str) -> str:
    """The form two addresses are compared in: canonical IPv4, lower-case names without a final dot."""
    try:
        return ipaddress.ip_address(addr).compressed
    except ValueError:
        return addr.lower().rstrip(".")


def is_loopback(addr: str) -> bool:
    try:
        return ipaddress.ip_address(addr).is_loopback
    except ValueError:
        return address_key(addr) in ("localhost", "localhost.localdomain") or address_key(addr).endswith(
            ".localhost")


def is_unspecified(addr: str) -> bool:
    try:
        return ipaddress.ip_address(addr).is_unspecified
    except ValueError:
        return False


def nic(value: Any, errors: Collector, where: Where) -> str | None:
    name = text(value, errors, where, what="an interface name (a string)")
    if name is None:
        return None
    if not NIC_RE.fullmatch(name) or name in (".", "..") or NIC_FORBIDDEN & set(name):
        where.add(errors, f"is not a Linux interface name ({_shown(name)}): 1..15 printable characters, "
                          "no blank, '/', ':' or ',', not '.' or '..'")
        return None
    return name


def hardware(value: Any, errors: Collector, where: Where) -> str | None:
    if value not in HARDWARE:
        where.add(errors, f"must be one of {', '.join(HARDWARE)}, got {_shown(value)}")
        return None
    return str(value)


def env_name(value: Any, errors: Collector, where: Where) -> str | None:
    if not isinstance(value, str) or not ENV_NAME_RE.fullmatch(value):
        where.add(errors, f"{_shown(value)} is not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)")
        return None
    return value


def inventory_name(value: str, errors: Collector, where: Where) -> bool:
    if not INVENTORY_NAME_RE.fullmatch(value):
        where.add(errors, "inventory host name must be ASCII letters, digits, '_', '.', ':', '-' (it names "
                          "the host's directory in render mode and its files)")
        return False
    return True


# ---- checkers of the settings table (plugin_utils/plan/_settings.py) ------------------------------------------

# pip inputs (sglang_server_install): a distribution name (PEP 508) and a version.
PACKAGE_RE = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?")
VERSION_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+!_-]{0,63}")


def stack_pins(value: Any, errors: Collector, where: Where) -> Any:
    """sglang_server_stack: package -> version, each pinned as ``NAME==VERSION``."""
    if not isinstance(value, Mapping):
        where.add(errors, f"must be a mapping of package -> version, got {_type_name(value)} {_shown(value)}")
        return None
    for name, version in value.items():
        here = Where(f"{where.variable}.{name}", where.group, where.host)
        if not isinstance(name, str) or not PACKAGE_RE.fullmatch(name):
            here.add(errors, f"{_shown(name)} is not a package name")
        elif re.sub(r"[-_.]+", "-", name).lower() == "sglang":
            # The plan renders and checks every flag for one release: a pin here would install another one.
            here.add(errors, "sglang's release is the plan's: set sglang_release (every flag is checked against it), "
                             "not a stack entry")
        elif not isinstance(version, (str, int, float)) or isinstance(version, bool) \
                or not VERSION_RE.fullmatch(str(version)):
            here.add(errors, f"must be a version such as 2.8.0+cpu, got {_shown(version)}")
    return value


def wheelhouse(value: Any, errors: Collector, where: Where) -> Any:
    """sglang_wheelhouse: a controller directory (relative to where ansible-playbook runs), or "" for the index."""
    return text(value, errors, where, blank_ok=True, what="a controller directory (a string)")


def preflight_settings(variables: Mapping[str, Any], errors: Collector) -> dict[str, Any]:
    """sglang_preflight_checks (check name -> fail | warn | off) and sglang_preflight_weights (quick | full), as the
    plan carries them (every check with its level)."""
    checks: dict[str, str] = {}
    raw = variables.get("sglang_preflight_checks")
    where = Where("sglang_preflight_checks")
    if raw is not None and not isinstance(raw, Mapping):
        where.add(errors, f"must be a mapping of check name to fail, warn or off, got {_type_name(raw)} {_shown(raw)}")
    for name, value in (raw or {}).items() if isinstance(raw, Mapping) else ():
        shown = name if isinstance(name, str) and len(name) <= 40 and not CONTROL_RE.search(name) else _shown(name)
        if not isinstance(name, str) or name not in _checks.CHECKS:
            Where(f"sglang_preflight_checks.{shown}").add(
                errors, f"is not a preflight check; the checks are {', '.join(_checks.CHECKS)}")
            continue
        # A bare YAML `off` arrives as false.
        word = "off" if value is False else value
        if word not in _checks.LEVELS:
            Where(f"sglang_preflight_checks.{name}").add(
                errors, f"must be one of {', '.join(_checks.LEVELS)}, got {_type_name(value)} {_shown(value)}")
            continue
        checks[name] = word
    weights = variables.get("sglang_preflight_weights")
    if weights is not None and weights not in _checks.WEIGHTS_MODES:
        Where("sglang_preflight_weights").add(
            errors, f"must be one of {', '.join(_checks.WEIGHTS_MODES)}, got {_type_name(weights)} {_shown(weights)}")
        weights = None
    return _checks.settings(checks, weights)


# ---- overrides ---------------------------------------------------------------------------------------------

# Flags whose value is a credential (--api-key, --admin-api-key, --control-plane-api-keys, --ssl-keyfile-password,
# ...): taken only from sglang_secrets, which reaches a root-only file, never the world-readable launcher.
SECRET_FLAG_RE = re.compile(r"--(?:[a-z0-9-]+-)?(?:api-keys?|password|passwd|secret|credentials?)")
# Env names the collection's files use themselves: the launcher reads the secret values from SGLANG_SECRET_<i>
# (sourced from the .secrets file) and a container gets its NPUs through ASCEND_VISIBLE_DEVICES.
RESERVED_ENV_RE = re.compile(r"SGLANG_SECRET_[0-9A-Za-z_]*|ASCEND_VISIBLE_DEVICES")

# Env values the planner computes whatever the profile says: set through the inventory instead.
COMPUTED_ENV = {
    "HCCL_SOCKET_IFNAME": "set the host's sglang_nic",
    "GLOO_SOCKET_IFNAME": "set the host's sglang_nic",
    "ASCEND_MF_STORE_URL": "it is the first prefill instance's rank 0 address and the profile's store port",
}


def _arg_value(value: Any, errors: Collector, where: Where) -> Any:
    """An override's flag value: true, a number, a non-blank string or a non-empty list of those."""
    if value is True:
        return True
    if isinstance(value, bool):
        where.add(errors, "false is not a value: use null to remove the flag")
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            where.add(errors, f"must be a finite number, got {value!r}")
            return None
        return value
    if isinstance(value, str):
        checked = text(value, errors, where)
        return Literal(checked) if checked is not None else None
    if isinstance(value, (list, tuple)):
        if not value:
            where.add(errors, "an empty list is not a value: use null to remove the flag")
            return None
        items = []
        for index, item in enumerate(value):
            sub = Where(f"{where.variable}[{index}]", where.group, where.host)
            if isinstance(item, (list, tuple, Mapping)) or isinstance(item, bool) or item is None:
                sub.add(errors, f"list items must be strings or numbers, got {_type_name(item)}")
                return None
            items.append(_arg_value(item, errors, sub))
        return None if any(i is None for i in items) else items
    where.add(errors, f"must be true, a number, a string or a list, got {_type_name(value)} {_shown(value)}")
    return None


def _env_value(value: Any, errors: Collector, where: Where) -> str | None:
    if isinstance(value, bool):
        where.add(errors, f"a boolean is not an environment value: quote it (\"1\", \"true\"), got {value!r}")
        return None
    if isinstance(value, (int, float)) and not (isinstance(value, float) and not math.isfinite(value)):
        return Literal(str(value))
    checked = text(value, errors, where, blank_ok=True, what="a string or a number")
    return Literal(checked) if checked is not None else None


def check_overrides(raw: Any, scope: Mapping[str, str], computed_env: Mapping[str, set[str]],
                    errors: Collector) -> dict[str, dict[str, dict[str, Any]]]:
    """sglang_overrides -> {role: {"args": {flag: value|None}, "env": {NAME: value|None}}}, only the valid
    parts, user strings wrapped as Literal.  ``scope`` maps each role the deployment runs to its group;
    ``computed_env`` holds, per role, the env names the planner fills in."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        errors.add(f"must be a mapping of role -> {{args, env}}, got {_type_name(raw)}", variable="sglang_overrides")
        return {}
    clean: dict[str, dict[str, dict[str, Any]]] = {}
    for role, body in raw.items():
        key = f"sglang_overrides.{role}"
        if role not in ("prefill", "decode", "mixed", "router"):
            errors.add(f"unknown role '{role}'", variable=key)
            continue
        if role not in scope:
            what = ("there is no router host" if role == "router"
                    else f"the profile has no {role} servers (it runs {', '.join(r for r in scope if r != 'router')})")
            errors.add(f"overrides a role this deployment does not run: {what}", group=role, variable=key)
            continue
        if body is None:
            continue
        if not isinstance(body, Mapping):
            errors.add(f"must be a mapping with 'args' and/or 'env', got {_type_name(body)}", group=role, variable=key)
            continue
        unknown = set(body) - {"args", "env"}
        if unknown:
            errors.add(f"unknown keys {sorted(map(str, unknown))} (use 'args' and 'env')", group=role, variable=key)
        clean[role] = {"args": _override_args(body.get("args"), role, key, errors),
                       "env": _override_env(body.get("env"), role, key, computed_env, errors)}
    return clean


def _flag_hint(flag: Any) -> str:
    """The full spelling of a flag written without its dashes or with underscores (tp-size, -tp-size, tp_size)."""
    if not isinstance(flag, str):
        return ""
    name = flag.lstrip("-").replace("_", "-")
    return f": write '--{name}'" if re.fullmatch(r"[a-z0-9][a-z0-9-]*", name) else ""


def _override_args(raw_args: Any, role: str, key: str, errors: Collector) -> dict[str, Any]:
    """sglang_overrides.<role>.args -> {flag: value | None (removed)}, the valid entries."""
    args: dict[str, Any] = {}
    if raw_args is not None and not isinstance(raw_args, Mapping):
        errors.add(f"must be a mapping of --flag: value, got {_type_name(raw_args)}", group=role,
                   variable=f"{key}.args")
        return args
    for flag, value in (raw_args or {}).items():
        shown = flag if isinstance(flag, str) and len(flag) <= 80 and not CONTROL_RE.search(flag) else _shown(flag)
        where = Where(f"{key}.args.{shown}", role)
        if not isinstance(flag, str) or not re.fullmatch(r"--[a-z0-9][a-z0-9-]*", flag):
            # Flags are full --names, as SGLang's parsers spell them: the operator's key is named as written.
            where.add(errors, f"the key '{shown}' is not a full --flag name{_flag_hint(flag)}")
            continue
        if SECRET_FLAG_RE.fullmatch(flag) and value is not None:
            where.add(errors, f"{flag} is a secret: give it in sglang_secrets.{role}.{flag} (written to a "
                              "root-only file), never in sglang_overrides (written into the launcher, which "
                              "every user of the host can read); value not shown")
            continue
        if value is None:
            args[flag] = None
            continue
        checked = _arg_value(value, errors, where)
        if checked is not None:
            args[flag] = checked
    return args


def _override_env(raw_env: Any, role: str, key: str, computed_env: Mapping[str, set[str]],
                  errors: Collector) -> dict[str, Any]:
    """sglang_overrides.<role>.env -> {NAME: value | None (removed)}, the valid entries."""
    env: dict[str, Any] = {}
    if raw_env is not None and not isinstance(raw_env, Mapping):
        errors.add(f"must be a mapping of NAME: value, got {_type_name(raw_env)}", group=role,
                   variable=f"{key}.env")
        return env
    for name, value in (raw_env or {}).items():
        where = Where(f"{key}.env.{name}" if isinstance(name, str) and ENV_NAME_RE.fullmatch(name)
                      else f"{key}.env", role)
        if env_name(name, errors, where) is None:
            continue
        if RESERVED_ENV_RE.fullmatch(name):
            where.add(errors, f"{name} is reserved: the collection's launcher and container use it")
            continue
        if name in COMPUTED_ENV or name in computed_env.get(role, set()):
            hint = COMPUTED_ENV.get(name, "change the inventory")
            where.add(errors, f"{name} is computed by the planner; {hint} instead")
            continue
        if value is None:
            env[name] = None
            continue
        checked = _env_value(value, errors, where)
        if checked is not None:
            env[name] = checked
    return env


# ---- secrets -------------------------------------------------------------------------------------------

def check_secrets(raw: Any, scope: Mapping[str, str], errors: Collector) -> dict[str, list[str]]:
    """sglang_secrets ({role: {--flag: value}}) -> the secret flag names per role.  The values are checked
    (non-blank strings without control characters) but never kept, and never shown in a message."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        errors.add(f"must be a mapping of role -> {{--flag: secret}}, got {_type_name(raw)}", variable="sglang_secrets")
        return {}
    flags: dict[str, list[str]] = {}
    for role, body in raw.items():
        key = f"sglang_secrets.{role}"
        if role not in scope:
            errors.add("not a role this deployment runs (" + ", ".join(scope) + ")", variable=key)
            continue
        if not isinstance(body, Mapping):
            errors.add(f"must be a mapping of --flag: secret, got {_type_name(body)}", group=role, variable=key)
            continue
        for flag, value in body.items():
            if not isinstance(flag, str) or not re.fullmatch(r"--[a-z0-9][a-z0-9-]*", flag):
                errors.add("keys must be full --flag names", group=role, variable=key)
                continue
            where = Where(f"{key}.{flag}", role)
            if not isinstance(value, str):
                where.add(errors, f"must be a string, got {_type_name(value)} (value not shown)")
            elif not value.strip() or len(value) > MAX_LEN or CONTROL_RE.search(value):
                where.add(errors, "must be a non-blank string without control characters, at most "
                                  f"{MAX_LEN} characters (value not shown)")
            else:
                flags.setdefault(role, []).append(flag)
    return flags


# For the settings table's own checkers (plugin_utils/plan/_settings.py): the same pictures of a refused value.
shown = _shown
type_name = _type_name


_BATCH = re.compile(r"([0-9]{1,10})(%?)")


def parse_batch(value: Any) -> tuple[int, bool] | None:
    """``sglang_restart_batch`` as (number, is a percentage): a count (``2``, ``"2"``) or a percentage (``"25%"``);
    None for anything else. The one reading of the value: the settings table's check and batch_size both use it."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return None
    match = _BATCH.fullmatch(str(value).strip())
    return (int(match.group(1)), bool(match.group(2))) if match else None
