"""The list of files render.yml prints (plugins/plugin_utils/report/_written_files.py): one line per directory, a
service's files folded into one name, the changed count per line.  Pure Python, no Ansible."""

from __future__ import annotations

from ansible_collections.ascend.sglang.plugins.plugin_utils.report._written_files import lines


def test_one_line_per_directory_with_a_services_files_folded():
    base = "/srv/render"
    paths = [f"{base}/p0/sglang-prefill-i0-r0.{ext}" for ext in ("json", "env", "sh", "service")]
    paths += [f"{base}/p0/cann_env.sh", f"{base}/p0/sysctl.conf", f"{base}/r0/sglang-router-i0.json",
              f"{base}/monitoring/prometheus.yml"]
    changed = {path: path.endswith(".env") for path in paths}
    assert lines(base, paths, changed) == [
        "/srv/render: 8 files, 1 changed",
        "  monitoring/ (1 file, 0 changed): prometheus.yml",
        "  p0/ (6 files, 1 changed): cann_env.sh, sglang-prefill-i0-r0.{env,json,service,sh}, sysctl.conf",
        "  r0/ (1 file, 0 changed): sglang-router-i0.json",
    ]


def test_a_fleet_prints_a_line_per_host_not_per_file():
    base = "/r"
    paths = [f"{base}/h{i}/sglang-mixed-i{i}-r0.{ext}" for i in range(200) for ext in ("env", "json", "service", "sh")]
    out = lines(base, paths, {})
    assert len(out) == 201 and out[0] == "/r: 800 files, 0 changed"
