"""A YAML reader that types plain scalars as kubectl and Prometheus do (go-yaml v2), for reading written files back.

kubectl reads manifests through sigs.k8s.io/yaml, which decodes with go-yaml v2 and then re-encodes as JSON; a plain
(unquoted) scalar is typed by go-yaml's resolve.go (gopkg.in/yaml.v2 v2.4.0, resolve.go, ``resolveTable`` and
``resolve``):
- bool: y Y yes Yes YES true True TRUE on On ON, and n N no No NO false False FALSE off Off OFF;
- null: "" ~ null Null NULL;
- .nan .inf +.inf -.inf in three spellings each;
- int: strconv.ParseInt(s, 0, 64) with every '_' removed first (base prefixes 0x, 0o, 0b and a leading 0 for octal),
  also "0b..." and "-0b..." spelled out;
- float: ``^[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?$`` (yamlStyleFloat), e.g. 1e3;
- a timestamp stays a string when decoded into interface{} (v2's compatibility rule), as JSON then carries it.
PyYAML's safe loader is kinder (it reads ``y`` and ``1e3`` as strings): a file that passes this reader passes both.
"""

from __future__ import annotations

import re

import yaml

_BOOL_TRUE = {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"}
_BOOL_FALSE = {"n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"}
_NULL = {"", "~", "null", "Null", "NULL"}
_SPECIAL_FLOAT = {".nan": float("nan"), ".NaN": float("nan"), ".NAN": float("nan"),
                  ".inf": float("inf"), ".Inf": float("inf"), ".INF": float("inf"),
                  "+.inf": float("inf"), "+.Inf": float("inf"), "+.INF": float("inf"),
                  "-.inf": float("-inf"), "-.Inf": float("-inf"), "-.INF": float("-inf")}
# strconv.ParseInt(s, 0, 64) after the underscores are removed.
_GO_INT = re.compile(r"[-+]?(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)")
_YAML_STYLE_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")


def _go_int(text: str) -> int:
    plain = text.replace("_", "")
    sign = -1 if plain.startswith("-") else 1
    body = plain.lstrip("+-")
    if body[:2] in ("0x", "0X"):
        return sign * int(body[2:], 16)
    if body[:2] in ("0o", "0O"):
        return sign * int(body[2:], 8)
    if body[:2] in ("0b", "0B"):
        return sign * int(body[2:], 2)
    if len(body) > 1 and body.startswith("0"):
        return sign * int(body[1:], 8)
    return sign * int(body)


def resolve(text: str):
    """What go-yaml v2 makes of the plain scalar ``text``."""
    if text in _BOOL_TRUE:
        return True
    if text in _BOOL_FALSE:
        return False
    if text in _NULL:
        return None
    if text in _SPECIAL_FLOAT:
        return _SPECIAL_FLOAT[text]
    if _GO_INT.fullmatch(text.replace("_", "")) and text[:1] in "+-0123456789":
        return _go_int(text)
    if _YAML_STYLE_FLOAT.fullmatch(text.replace("_", "")):
        return float(text.replace("_", ""))
    return text


class GoLoader(yaml.SafeLoader):
    """Quoted scalars are strings; plain ones are typed by ``resolve``."""


def _scalar(loader: GoLoader, node: yaml.ScalarNode):
    value = loader.construct_scalar(node)
    return resolve(value) if node.style is None else value


# Every plain scalar goes through _scalar: PyYAML's own implicit resolvers are replaced.
GoLoader.yaml_implicit_resolvers = {}
GoLoader.add_constructor("tag:yaml.org,2002:str", _scalar)


def load(text: str):
    return yaml.load(text, Loader=GoLoader)  # noqa: S506 - a SafeLoader subclass


def load_all(text: str):
    return list(yaml.load_all(text, Loader=GoLoader))  # noqa: S506 - a SafeLoader subclass
