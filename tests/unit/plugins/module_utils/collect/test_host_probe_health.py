"""npu-smi's health queries find npu-smi where its table query does: /usr/local/sbin is often not in the PATH of
a non-interactive login, and a bare name there failed every device's health query (rc 127)."""

from __future__ import annotations

import os
import stat

from ansible_collections.ascend.sglang.plugins.module_utils.collect import _host_probe

# npu-smi info -t health -i 3 -c 0 (tests/fixtures/npu_smi, the layout of the real tool's source)
HEALTH = "\tHealth Status                  : OK\n\tError Code                     : NA\n"


def test_health_queries_find_npu_smi_outside_path(tmp_path, monkeypatch):
    sbin = tmp_path / "sbin"
    sbin.mkdir()
    tool = sbin / "npu-smi"
    calls = tmp_path / "calls"
    tool.write_text(f"#!/bin/sh\necho \"$@\" >> '{calls}'\nprintf '{HEALTH.encode('unicode_escape').decode()}'\n",
                    encoding="utf-8")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(_host_probe, "EXTRA_BIN_DIRS", (str(sbin),))
    monkeypatch.setenv("PATH", os.pathsep.join(["/nonexistent", os.path.dirname(os.path.realpath("/bin/sh"))]))

    observed = _host_probe.observe({"npu_health": [6], "hardware": "A2"})

    device = observed["npu_health"]["6"]
    assert device["rc"] == 0, device
    assert device["health"] == "OK", device
    assert calls.read_text(encoding="utf-8").split() == ["info", "-t", "health", "-i", "6", "-c", "0"]
