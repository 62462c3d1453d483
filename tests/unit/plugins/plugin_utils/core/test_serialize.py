"""_serialize: plain Python from Ansible's types, and YAML every reader reads back as written."""

from __future__ import annotations

import datetime

import pytest
import yaml

from ansible_collections.ascend.sglang.plugins.plugin_utils.core import _serialize
from go_yaml import load as go_load

RETYPED = ["y", "Y", "n", "yes", "No", "ON", "off", "true", "False", "null", "Null", "~", "", "1", "-1", "+1", "017",
           "0o17", "0x1F", "0b101", "1_000", "1e3", "1E3", "-1.5e-3", ".5", "1.", "1:20", "+Inf", "-inf", ".nan",
           "NaN", "infinity", "2025-01-01", "2025-01-01 10:00:00", "2025-1-1T10:00:00Z"]
KEPT = ["0.5.6.post2", "--tp-size", "enp189s0f0", "lmsysorg/sglang:v1", "http://a:1/x", "llm", "yesno", "1e", "e3",
        "0x", "1.2.3", "on-call", "sglang-router"]


@pytest.mark.parametrize("text", RETYPED + KEPT)
def test_every_string_reads_back_as_itself(text):
    written = _serialize.yaml_text({"value": text, "list": [text]})
    assert go_load(written) == {"value": text, "list": [text]}
    assert yaml.safe_load(written) == {"value": text, "list": [text]}


@pytest.mark.parametrize("text", KEPT)
def test_plain_strings_stay_unquoted(text):
    # Quoted only where a reader needs it: manifests stay readable.
    assert _serialize.yaml_text({"v": text}) == f"v: {text}\n"


def test_plain_makes_subclasses_plain_and_dates_text():
    class Tagged(str):
        pass

    class TaggedInt(int):
        pass

    value = _serialize.plain({Tagged("k"): [Tagged("v"), TaggedInt(2), (1, 2), datetime.date(2025, 1, 1)]})
    assert value == {"k": ["v", 2, [1, 2], "2025-01-01"]}
    # Exact types, not subclasses.
    assert [type(next(iter(value))), type(value["k"][0]), type(value["k"][1])] == [str, str, int]
    assert _serialize.plain(True) is True and [type(_serialize.plain(TaggedInt(0)))] == [int]


def test_a_value_that_is_not_plain_is_refused_with_its_path():
    class Tagged(str):
        pass

    with pytest.raises(_serialize.NotPlain, match=r"spec\.env\[1\]: Tagged is not plain"):
        _serialize.yaml_text({"spec": {"env": ["a", Tagged("b")]}})
