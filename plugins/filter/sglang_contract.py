# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Template guards: the last line of defence when a caller bypassed the plan's input contract.

Each filter returns its input unchanged or fails the rendering with a message naming the value;
it never escapes or strips (a silently changed value is a deployment nobody reviewed).
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

# What a filter uses is imported when it runs (plugins/filter/sglang_operations.py says why: Ansible imports every
# filter file of the collection in each task's worker process).


def _check_text(value, what):
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._contract import CONTROL_RE, MAX_LEN
    text = str(value)
    bad = CONTROL_RE.search(text)
    if bad:
        raise AnsibleFilterError(f"refusing to write {what}: it contains the control character {bad.group()!r} "
                                 f"({text[:60]!r}); fix the plan input")
    if len(text) > MAX_LEN:
        raise AnsibleFilterError(f"refusing to write {what}: {len(text)} characters (at most {MAX_LEN})")
    return text


def sglang_no_control(value, what="a value"):
    """Any value written into an env file, a launcher or a unit: no control characters."""
    _check_text(value, what)
    return value


def sglang_unit_word(value, what="a unit setting"):
    """A value written into a systemd unit line: no control characters and no blank (a blank splits
    ExecStart=, a newline adds a directive)."""
    text = _check_text(value, what)
    if not text or any(c.isspace() for c in text):
        raise AnsibleFilterError(f"refusing to write {what} into a systemd unit: {text[:60]!r} is blank or contains "
                                 "a blank")
    return value


def sglang_env_name(value):
    """An env-file key: a shell variable name, by full match (a trailing newline is not a name)."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._contract import ENV_NAME_RE
    if not isinstance(value, str) or not ENV_NAME_RE.fullmatch(value):
        raise AnsibleFilterError(f"refusing to write the environment variable name {str(value)[:60]!r}: "
                                 "not [A-Za-z_][A-Za-z0-9_]*")
    return value


class FilterModule:
    def filters(self):
        return {"sglang_no_control": sglang_no_control, "sglang_unit_word": sglang_unit_word,
                "sglang_env_name": sglang_env_name}
