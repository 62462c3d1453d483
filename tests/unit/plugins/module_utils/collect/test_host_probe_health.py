"""npu-smi's health queries find npu-smi where its table query does: /usr/local/sbin is often not in the PATH of
a non-interactive login, and a bare name there failed every device's health query (rc 127)."""

from __future__ import annotations

import os
import stat

from ansible_collections.ascend.sglang.plugins.module_utils.collect import _host_probe
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _settings as table

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

    # The module's options as the playbooks pass them: the plan's settings, the table's defaults.
    run = table.defaults(table.RUN)
    observed = _host_probe.observe({"npu_health": [6], "hardware": "A2"}, npu_smi=run["sglang_npu_smi"],
                                   driver_info=run["sglang_npu_driver_info"],
                                   toolkit_info=run["sglang_npu_toolkit_info"],
                                   probe_timeout=run["sglang_preflight_probe_timeout"],
                                   runtime_timeout=run["sglang_preflight_runtime_timeout"],
                                   hccn_tool=run["sglang_hccn_tool"])

    device = observed["npu_health"]["6"]
    assert device["rc"] == 0, device
    assert device["health"] == "OK", device
    assert calls.read_text(encoding="utf-8").split() == ["info", "-t", "health", "-i", "6", "-c", "0"]
