#!/usr/bin/python
# Copyright: ascend.sglang contributors
# Apache License 2.0
# The work happens in the action plugin of the same name, on the controller; this file carries the
# documentation (ansible-doc ascend.sglang.sglang_render_files).

from __future__ import annotations

DOCUMENTATION = r"""
module: sglang_render_files
short_description: Render a host's SGLang files from the plan in one step, onto the host or into a render directory
description:
  - Lists the files a host's plan entry produces (C(cann_env.sh), the kernel settings, and for each service its
    environment file, secret file, launcher and systemd unit, and for each watched service its watchdog
    configuration and unit, plus the watchdog program), renders them on the controller from the
    C(ascend.sglang.sglang_service) role's templates, and writes them in one step.
  - Deployment (O(render_dir) unset) - the files of O(host) go to their deployment directories
    (C(sglang_etc_dir), C(sglang_libexec_dir), C(sglang_systemd_dir), C(sglang_sysctl_dir)) in one call of
    M(ascend.sglang.sglang_place_files), which creates the directories and replaces each differing file
    atomically with its mode (secret files C(0600), owned by root).
  - Render mode (O(render_dir) set) - every host of the plan gets a directory C(<render_dir>/<host>/) with its
    C(cann_env.sh), C(sysctl.conf) and, per service, C(<name>.json) (role, instance, node rank, argv, env),
    C(<name>.env), C(<name>.sh) and C(<name>.service), written on the controller, each host with its own settings
    from the plan (its inventory values, e.g. C(sglang_etc_dir), checked); O(settings) win over them.
  - C(changed) per file, a diff per changed file in diff mode, nothing written in check mode. Environment files,
    secret files and the summaries (which hold the environment) never appear in the result nor in a diff.
version_added: 0.4.0
options:
  plan:
    description: The deployment plan (C(sglang_plan)).
    type: dict
    required: true
  host:
    description: The host whose files are deployed (deployment only).
    type: str
    default: inventory_hostname
  render_dir:
    description: Render mode - write every host's files under this controller directory instead of deploying.
    type: path
  roles:
    description:
      - Service roles whose services' files are included (C(prefill), C(decode), C(mixed), C(router)).
      - Unset - every service, and the host's own files (C(cann_env.sh), kernel settings).
    type: list
    elements: str
  kinds:
    description:
      - File kinds to include, among C(cann_env), C(sysctl), C(summary), C(env), C(secrets), C(launcher), C(unit),
        C(watchdog_program), C(watchdog_config), C(watchdog_unit). Unset - all of them.
    type: list
    elements: str
  settings:
    description:
      - Paths and settings written into the files, by their role variable names - C(sglang_etc_dir),
        C(sglang_libexec_dir), C(sglang_systemd_dir), C(sglang_sysctl_dir), C(sglang_restart_sec),
        C(sglang_timeout_stop_sec), C(sglang_limit_nofile) and the watchdog's C(sglang_watchdog_*) settings. They
        win over the host's settings in the plan; unset keys take those, then the settings table's defaults.
    type: dict
    default: {}
  secrets:
    description: >-
      Role -> flag -> value for the services with secret flags (deployment only). Unset, the host's own
      C(sglang_secrets), read by the action (their values never enter the plan).
    type: dict
  restart_all:
    description: Deployment - restart every selected service (e.g. C(cann_env.sh) or the packages changed), not
      only those whose files changed.
    type: bool
    default: false
  cann_env:
    description:
      - Deployment - also write the host's C(cann_env.sh) (a host running a server only), first, in the same call.
        When it changes, every selected service that sources it (a server on the host runtime) is due for a restart
        (reason C(cann_env.sh changed)).
    type: bool
    default: false
  record_start:
    description:
      - Deployment - also record this deploy's start (seconds since the epoch) on the host, in the call that places
        its files (O(ascend.sglang.sglang_place_files#module:record_start)), the default start of a later
        collection's journal window. Not a change; not written in check mode.
    type: float
  record_path:
    description: Where O(record_start) is written (unset - C(/var/lib/sglang/last-deploy.json), where collections
      read it).
    type: path
  health:
    description:
      - Deployment - also look once at the health of the services whose unit this call writes, in the same call,
        once their files are in place (O(ascend.sglang.sglang_place_files#module:health)); the result is
        RV(health). Its keys are the role's health settings.
    type: dict
    suboptions:
      readiness:
        description: Look at a service's readiness URL where it has one (a router's), else at its health URL.
        type: bool
        required: true
      timeout:
        description: Seconds each HTTP request may take.
        type: int
        required: true
  apply_sysctl:
    description:
      - Deployment with O(kinds) naming C(sysctl) - also apply the host plan's kernel settings in the same call, once
        C(90-sglang.conf) is in place (O(ascend.sglang.sglang_place_files#module:sysctl)). Each live value that
        differs is written where sysctl(8) writes it, under the host's C(sglang_proc_sys_dir). The result is
        RV(sysctl).
    type: bool
    default: false
extends_documentation_fragment:
  - ascend.sglang.attributes.controller
  - ascend.sglang.attributes.diff
author:
  - ascend.sglang maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: Write this host's prefill files in one step
  ascend.sglang.sglang_render_files:
    plan: "{{ sglang_plan }}"
    roles: [prefill]
    settings:
      sglang_etc_dir: /etc/sglang
  register: files

- name: Render every host's files on the controller
  ascend.sglang.sglang_render_files:
    plan: "{{ sglang_plan }}"
    render_dir: ./render
"""

RETURN = r"""
health:
  description: Per service of this call, C(healthy) and C(status) at the look of O(health); empty without it.
  returned: deployment
  type: dict
sysctl:
  description: The kernel settings O(apply_sysctl) found at another live value (C(name), C(before), C(after)),
    written (in check mode to be written); empty without it.
  returned: deployment
  type: list
  elements: dict
files:
  description: Deployment - one entry per file (C(path), C(kind), C(service), C(changed)); render mode - how many files.
  returned: always
  type: raw
files_changed:
  description: How many files were (or would be) written.
  returned: render mode
  type: int
changed_services:
  description: Services whose environment, secret, launcher or unit file changed.
  returned: always
  type: list
  elements: str
changed_units:
  description: Services whose unit file changed.
  returned: always
  type: list
  elements: str
watched:
  description: Services that have a watchdog.
  returned: always
  type: list
  elements: str
changed_watchdogs:
  description: Watched services whose watchdog configuration or unit (or the watchdog program) changed.
  returned: always
  type: list
  elements: str
daemon_reload:
  description: Whether a unit file changed (systemd must reload).
  returned: always
  type: bool
services:
  description: Deployment - per planned service of the call, why it is due for a restart of its own (C(due) - its
    files changed, O(restart_all), or it runs other files than its own) and its state (C(running), C(enabled),
    C(unit_changed), C(new_unit), its C(watchdog)). What restarts is decided for the whole fleet from every host's
    report, by the filter P(ascend.sglang.sglang_rollout#filter) (an instance restarts as a whole, on every host).
  returned: deployment
  type: list
  elements: dict
pending:
  description: Deployment - the units with a restart pending from an earlier run cut short (C(unit), C(reason),
    C(files)).
  returned: deployment
  type: list
  elements: dict
stale_watchdogs:
  description: Services of these roles that get no watchdog now but whose watchdog unit an earlier deployment left
    on the host (looked for in the same module call); the role stops and removes those watchdogs.
  returned: deployment
  type: list
  elements: str
stale_watchdog_files:
  description: The unit, configuration and state file of each of those watchdogs, by path on the host (named with
    the host's settings, as the renderer names them).
  returned: deployment
  type: list
  elements: str
"""
