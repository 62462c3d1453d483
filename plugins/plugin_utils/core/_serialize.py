# Copyright: ascend.sglang contributors
# Apache License 2.0
"""Values in plain Python, and the one YAML writer of every file the collection writes on the controller.

Pure; no Ansible import.
- ``plain``: what an action reads from Ansible (templated variables, task arguments, registered results) arrives as
  Ansible's own tagged types (str, int, dict subclasses carrying their origin), which serializers refuse
  (PyYAML's safe dumper: "cannot represent an object") or write differently.  Every action converts what it reads
  once, where it reads it, before planning.
- ``yaml_text``: YAML whose strings come back as the same strings from any reader the files meet: kubectl
  (go-yaml, YAML 1.1 words such as ``y``, ``on``, ``no``; Go's number syntax such as ``1e3``, ``0o17``, ``+Inf``),
  Prometheus (go-yaml) and PyYAML.  PyYAML quotes what its own YAML 1.1 resolver would read as another type; a
  string any of the others reads as a bool, null, number or date is quoted too.  It refuses a value that is not
  plain Python (a bug, named with its path) instead of writing a tag.
"""

from __future__ import annotations

import datetime
import re
from typing import Any, Mapping

import yaml

# Words a YAML 1.1 reader (go-yaml v2, PyYAML) or a YAML 1.2 reader takes for a bool or null.
_WORDS_RE = re.compile(r"(?i:y|n|yes|no|true|false|on|off|null|nil)|~|")
# Numbers in any base YAML 1.1, YAML 1.2 or Go's strconv.Parse{Int,Float} reads (go-yaml resolves a plain scalar
# starting with a digit, a sign or a dot through them): decimal with exponents and underscores, hex (also hex
# floats), octal (0o and leading 0), binary, sexagesimal, infinities and NaN.
_NUMBER_RE = re.compile(r"""[-+]?(
    [0-9][0-9_]*(\.[0-9_]*)?([eE][-+]?[0-9_]+)?
  | \.[0-9][0-9_]*([eE][-+]?[0-9_]+)?
  | 0[xX][0-9a-fA-F_]+(\.[0-9a-fA-F_]*)?([pP][-+]?[0-9_]+)?
  | 0[oO][0-7_]+ | 0[bB][01_]+
  | [0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?
  | \.?(?i:inf|infinity|nan)
)""", re.X)
# A date or timestamp (YAML 1.1 !!timestamp): its first ten characters are enough for a reader to try.
_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt \t].*)?")


def plain(value: Any) -> Any:
    """``value`` with every str, int, float, bool, dict and list subclass (Ansible's tagged types, lazy
    containers) made the plain type; a tuple or set becomes a list; a date or time (YAML reads an unquoted
    2025-01-01 as one) becomes its text.  Anything else is returned as it is, for the checkers to refuse by type."""
    if value is None or type(value) in (bool, int, float, str):
        return value
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, Mapping):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain(v) for v in value]
    if isinstance(value, (datetime.date, datetime.time)):
        return str(value)
    return value


def needs_quotes(text: str) -> bool:
    """A plain scalar ``text`` would be read as something else than this string by one of the readers."""
    return bool(_WORDS_RE.fullmatch(text) or _NUMBER_RE.fullmatch(text) or _DATE_RE.match(text))


class NotPlain(TypeError):
    """A value of a type that is not plain Python reached the writer (its path says where)."""


class _Dumper(yaml.SafeDumper):
    """Block lists indented under their key (as kubectl and the collection write them); strings that another
    reader would retype are single-quoted; anything but plain Python is refused."""

    def increase_indent(self, flow=False, indentless=False):  # noqa: D102 - PyYAML hook
        return super().increase_indent(flow, False)

    def represent_str(self, data):  # noqa: D102 - PyYAML hook
        if needs_quotes(data):
            return self.represent_scalar("tag:yaml.org,2002:str", data, style="'")
        return super().represent_str(data)


_Dumper.add_representer(str, _Dumper.represent_str)


def _refuse_not_plain(value: Any, path: str = "") -> None:
    if value is None or type(value) in (bool, int, float, str):
        return
    # Exact types: a subclass (Ansible's tagged dict) is what this refuses.
    if type(value) in (dict,):
        for key, item in value.items():
            _refuse_not_plain(key, path)
            _refuse_not_plain(item, f"{path}.{key}" if path else str(key))
        return
    if type(value) in (list,):
        for index, item in enumerate(value):
            _refuse_not_plain(item, f"{path}[{index}]")
        return
    raise NotPlain(f"{path or 'the document'}: {type(value).__name__} is not plain Python (convert it with "
                   "_serialize.plain where it is read)")


def yaml_text(data: Any, *, width: int = 1 << 16) -> str:
    """Block YAML of plain ``data``, keys in the order given; long strings stay on one line."""
    _refuse_not_plain(data)
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=width,
                     allow_unicode=True)
