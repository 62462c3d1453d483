# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Whether deploy.yml's install of the server stack (sglang_server_install) has anything to do on a host, decided
from what this run's preflight saw of the stack as it is now (module_utils/checks/_preflight_inputs.py stack_look:
every distribution installed in the virtualenv, the installed sglang's requirements, the marker environment).

A host whose stack is current leaves the stack play (no pip check, no requirement listing, no second stack probe:
three module runs fewer per server host on every re-run); its stack report is the stack checks of that look, run in
the same preflight call. Every rule here is the one the play would apply, and each doubt keeps the host in the play,
where pip decides as before:

- a wanted requirement is present as ansible.builtin.pip's check mode finds it: an installed distribution of its
  canonical name whose version its specifier contains, pre-releases included; its markers are not evaluated. One
  with extras or a URL is never taken as present here (pip would install or reinstall what it cannot see).
- the reference environment's other requirements of sglang (install_requirements.yml): those of the installed
  sglang not of an extra, less the excluded names, whose markers hold on the host, each present by the same rule.

Private to the collection; pure, no Ansible import.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any, Mapping, Sequence

from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import Collector
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _contract as c
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._settings import BY_NAME, HOST, TABLE, check
from ansible_collections.ascend.sglang.plugins.plugin_utils.targets._install import canonical, install_plan_for

# The settings the install reads (the rows of the role's install entry point), as the role reads them: a host's own
# value may refer to the plan (sglang_server_packages: ["sglang=={{ hostvars['localhost'].sglang_plan.releases.sglang
# }}"]), which the plan cannot evaluate and leaves at its default (plan/_inputs.py DEFERRED); the role evaluates it
# after the plan, and so does the preflight action on the host's task (its result's ``install_settings``).
INSTALL_SETTINGS = tuple(row.name for row in TABLE if row.scope == HOST and "sglang_service:install" in row.entries)


def install_settings(planned: Mapping[str, Any], own: Mapping[str, Any]) -> dict[str, Any] | None:
    """A host's settings with its own values of the install's settings (``own``: those it sets, evaluated after the
    plan as the role evaluates them), each checked by its row of the settings table as the plan checks it. None
    where one is refused (the role's own run reports it, naming it)."""
    out = dict(planned)
    errors = Collector()
    for name in INSTALL_SETTINGS:
        if name in own:
            out[name] = check(BY_NAME[name], own[name], errors, c.Where(name))
    return None if errors.findings else out


# packaging (PEP 440 and 508, as pip reads them) comes with ansible-core, which depends on it; imported where it is
# used, so that importing this module (every controller plugin that imports the schedules) does not need it.


def _installed(look: Mapping[str, Any]) -> dict[str, str]:
    """Canonical name -> version of every distribution the look listed."""
    dists = look.get("distributions")
    if not isinstance(dists, Mapping):
        return {}
    return {canonical(str(name)): str(version) for name, version in dists.items()}


def present(spec: str, installed: Mapping[str, str]) -> bool:
    """Whether ``spec`` (a pip requirement specifier) is installed, as ansible.builtin.pip's check mode finds it."""
    from packaging.requirements import InvalidRequirement, Requirement
    try:
        req = Requirement(str(spec))
    except InvalidRequirement:
        return False
    return _met(req, installed)


def _met(req: Any, installed: Mapping[str, str]) -> bool:
    """``req`` (packaging's Requirement) is present in ``installed`` (canonical name -> version)."""
    if req.extras or req.url:
        return False
    version = installed.get(canonical(req.name))
    if version is None:
        return False
    try:
        return req.specifier.contains(version, prereleases=True)
    except ValueError:
        return False


def _requirements_met(look: Mapping[str, Any], exclude: Sequence[str], installed: Mapping[str, str]) -> bool:
    """The installed sglang's requirements that install_requirements.yml completes (roles/sglang_service/files/
    sglang_requirements.py chooses the same lines) are all present."""
    from packaging.requirements import InvalidRequirement, Requirement
    requires = look.get("requires")
    markers = look.get("markers")
    if not isinstance(requires, list) or not isinstance(markers, Mapping):
        return False
    excluded = {canonical(str(name)) for name in exclude}
    for line in requires:
        try:
            req = Requirement(str(line))
        except InvalidRequirement:
            return False
        if req.marker is not None and "extra" in re.findall(r"[a-z_]+", str(req.marker)):
            continue  # a requirement of one of sglang's extras: not installed by the roles (the script's own test)
        if canonical(req.name) in excluded:
            continue
        if req.marker is not None:
            try:
                if not req.marker.evaluate(dict(markers, extra="")):
                    continue
            except ValueError:  # packaging's marker errors (an undefined name or comparison, a bad version)
                return False
        if not _met(req, installed):
            return False
    return True


def stack_current(settings: Mapping[str, Any], install: Mapping[str, Any] | None, look: Any) -> bool:
    """Whether the install has nothing to do: ``settings`` the host's (sglang_server_packages, sglang_server_venv),
    ``install`` the reference environment's plan (plugin_utils/targets/_install.py install_plan; read only where
    sglang_server_packages is empty), ``look`` preflight's look at the server interpreter's stack
    (``observed.runtimes[...].stack.look``)."""
    if not isinstance(look, Mapping) or look.get("venv") is not True:
        return False  # no look, or no virtualenv yet: pip creates it
    venv = str(settings.get("sglang_server_venv") or "")
    if not venv or posixpath.normpath(str(look.get("prefix") or "")) != posixpath.normpath(venv):
        return False  # the interpreter looked at is not the one of the virtualenv pip installs into
    installed = _installed(look)
    packages = list(settings.get("sglang_server_packages") or [])
    if packages:
        return all(present(spec, installed) for spec in packages)
    if install is None or install.get("problems") or "requirements" not in install:
        return False  # the play stops on them, naming them
    wanted = list(install["requirements"]) + [str(install["sglang"])]
    return all(present(spec, installed) for spec in wanted) and \
        _requirements_met(look, list(install.get("exclude") or []), installed)


def looks(result: Any) -> list[Mapping[str, Any]] | None:
    """The looks at the server stack in one host's preflight result (sglang_preflight_result): one per server
    interpreter; None where preflight did not look (skipped, failed, another mode) or checked no stack of them."""
    if not isinstance(result, Mapping) or not isinstance(result.get("stack"), Mapping):
        return None
    runtimes = (result.get("observed") or {}).get("runtimes")
    if not isinstance(runtimes, Mapping):
        return None
    found = [(entry.get("stack") or {}).get("look") for entry in runtimes.values() if isinstance(entry, Mapping)]
    found = [look for look in found if look is not None]
    return found or None


def install_done(settings: Mapping[str, Any], release: str, result: Any, memo: dict[str, dict[str, Any]]) -> bool:
    """Whether the install has nothing to do on a host: its settings (the plan's), the plan's SGLang release, its
    preflight result (sglang_preflight_result: the looks at its stack and its own values of the install's settings)
    and ``memo`` (the fleet's install plans, targets/_install.py install_plan_for). False wherever preflight did not
    look, or a value of the host's own is refused."""
    seen = looks(result)
    own = result.get("install_settings") if isinstance(result, Mapping) else None
    checked = install_settings(settings, own if isinstance(own, Mapping) else {})
    if seen is None or checked is None:
        return False
    # The reference environment's plan only where it is installed (it lists the wheelhouse on the controller).
    install = None if checked.get("sglang_server_packages") else install_plan_for(release, checked, memo)
    return all(stack_current(checked, install, look) for look in seen)
