# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Controller-side plan step: runs the planner once over groups/hostvars."""

from __future__ import annotations

import os

from ansible.errors import AnsibleError
from ansible.plugins.action import ActionBase

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _settings
from ansible_collections.ascend.sglang.plugins.plugin_utils.report import _plan_table
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import Collector, PlanError
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._inputs import plan_inputs, read_inventory, template_reader
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._serialize import plain


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _VALID_ARGS = frozenset(("profile", "profiles_dir"))
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super().run(tmp, task_vars)
        args = plain(self._task.args)  # plain Python: Ansible's tagged types reach no writer
        groups = task_vars.get("groups") or {}
        hostvars = task_vars.get("hostvars") or {}
        errors = Collector()
        # Every sglang_* name of the play and of each planned host, through the settings table.
        host_values, variables = read_inventory(groups, hostvars, task_vars, template_reader(self._templar, errors), errors)
        # The planner's own inputs: the options where a caller gives them, else the run's values read through the
        # table here (plan.yml passes none: no Jinja default beside the table's).
        profile_id = args.get("profile") or _settings.one_value("sglang_profile", variables, errors)
        profiles_dir = args.get("profiles_dir") or _settings.one_value("sglang_profiles_dir", variables, errors)
        if not profile_id:
            # A result, not an exception: plan.yml's next task shows it (this task's own result is not logged).
            result.update(failed=True, msg="sglang plan rejected: variable 'sglang_profile' is not set: pass "
                                           "-e sglang_profile=<id> or run one of the per-profile playbooks")
            return result
        self._check_archive(variables, errors)
        self._check_controller(errors)
        try:
            result_plan = plan_inputs(str(profile_id), groups, host_values, variables, errors, profiles_dir)
        except PlanError as exc:
            result.update(failed=True, msg=exc.render(), findings=exc.as_dicts())
            return result
        # Returned as a result, not as a fact: playbooks register it and set_fact sglang_plan.
        planned = result_plan.as_dict()
        # What will run where, for the operator to review (plugin_utils/report/_plan_table.py).
        result.update(changed=False, plan=planned, table=_plan_table.lines(result_plan),
                      plan_table={key: value for key, value in _plan_table.document(result_plan).items()
                                  if key != "plan"})
        return result

    def _check_controller(self, errors):
        """The controller's plays run on localhost and hand each host's steps to that host's own connection
        (delegate_to): they must run there over the local connection. Ansible's implicit localhost has it; a
        localhost the inventory lists itself gets the default (ssh) unless the inventory says otherwise, and every
        controller step would then go through an ssh login to this machine."""
        connection = str(self._play_context.connection or "")
        if connection.rsplit(".", 1)[-1] != "local":
            errors.add(f"the controller's steps run on localhost, which the inventory lists with the connection "
                       f"{connection or 'of the defaults'!r}: give it ansible_connection: local, or leave localhost "
                       "out of the inventory (Ansible's implicit localhost is local)",
                       host="localhost", variable="ansible_connection")

    def _check_archive(self, variables, errors):
        """The image tarball is copied from the controller by every host: missing, the run would stop on the hosts
        after the plan (and after other hosts' pulls); looked up as the copy task does (files/, the playbook's)."""
        archive = variables.get("sglang_container_image_archive")
        if variables.get("sglang_runtime") != "container" or not isinstance(archive, str) or not archive.strip():
            return
        try:
            found = self._find_needle("files", archive)
        except AnsibleError:
            found = None
        if not found or not os.path.isfile(found):
            errors.add(f"{archive!r} is not a file on the controller (relative paths are looked up beside the "
                       "playbook and in its files/ directory)", variable="sglang_container_image_archive")
