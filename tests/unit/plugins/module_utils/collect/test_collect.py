"""A host's part of the failure bundle (module_utils/collect/_collect.py): every secret taken out on the host, bounded
texts, and what could not be collected listed with its reason. Commands and files are injected. Pure Python."""

from __future__ import annotations

import json

from ansible_collections.ascend.sglang.plugins.module_utils.collect import _collect
from ansible_collections.ascend.sglang.plugins.module_utils.files import _deploy_record
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _settings as table

SECRET = "sk-live-5f0a9c1e77"
HF = "hf_AbCdEf0123456789"
ENV = f'PATH=/usr/bin\nHF_TOKEN="{HF}"\nASCEND_MF_STORE_URL=tcp://mf:secretpw@198.51.100.10:24666\nHCCL_BUFFSIZE=1200\n'
UNIT = "sglang-prefill-i0-r0.service"
JOURNAL = (f"[2026-11-25 10:00:05] server_args=ServerArgs(api_key='{SECRET}', hf_token='{HF}')\n"
           "EI0006: [PID: 1] Getting socket times out.\n")


class Host:
    """The commands of a host with a journal, systemd and npu-smi; dmesg refused as in an unprivileged container."""

    def __init__(self, journal=JOURNAL, npu_smi="/usr/local/sbin/npu-smi"):
        self.calls = []
        self.journal = journal
        self.npu_smi = npu_smi

    def run(self, argv, timeout):
        self.calls.append(list(argv))
        if argv[0] == "journalctl" and argv[1] == "--dmesg":
            return 0, "[  12.3] davinci 0000:c1:00.0: npu driver loaded\n[  13.0] e1000: link up\n", ""
        if argv[0] == "journalctl":
            return 0, self.journal, ""
        if argv[0] == "systemctl":
            return 0, "ActiveState=active\nNRestarts=0\n", ""
        if argv[0] == "dmesg":
            return 1, "", "dmesg: read kernel buffer failed: Operation not permitted"
        if argv[1:] == ["info", "-l"]:
            return 0, "\tTotal Count                    : 2\n\tNPU ID                         : 0\n\tNPU ID : 1\n", ""
        if argv[0] == self.npu_smi:
            return 0, "        Health                         : OK\n", ""
        return 127, "", f"{argv[0]}: not found"

    def which(self, name):
        return self.npu_smi if name == "npu-smi" and self.npu_smi else None


FILES = {"/etc/sglang/sglang-prefill-i0-r0.env": ENV, "/usr/local/libexec/sglang/sglang-prefill-i0-r0.sh": "#!/bin/sh\n"}


def read(path):
    if path not in FILES:
        raise FileNotFoundError(2, "No such file or directory", path)
    return FILES[path]


RUN = table.defaults(table.RUN)


def params(**extra):
    base = {"units": [UNIT], "secrets": [SECRET], "pythons": ["python3"],
            "files": [{"path": "/etc/sglang/sglang-prefill-i0-r0.env", "kind": "env", "sensitive": True},
                      {"path": "/usr/local/libexec/sglang/sglang-prefill-i0-r0.sh", "kind": "launcher"},
                      {"path": "/etc/systemd/system/gone.service", "kind": "unit"}],
            # What the collect action passes: the plan's settings, the table's defaults.
            "npu_smi": RUN["sglang_npu_smi"], "max_lines": RUN["sglang_collect_max_lines"],
            "max_bytes": RUN["sglang_collect_max_bytes"], "dmesg_lines": RUN["sglang_collect_dmesg_lines"]}
    base.update(extra)
    return base


def test_no_secret_leaves_the_host_in_any_file_or_the_index():
    host = Host()
    bundle = _collect.collect(params(), host.run, read, host.which, "@1764064800")
    everything = json.dumps(bundle.files) + json.dumps(bundle.index())
    for secret in (SECRET, HF, "secretpw"):
        assert secret not in everything
    env = bundle.files["files/sglang-prefill-i0-r0.env"]
    assert 'HF_TOKEN=<redacted>' in env and "HCCL_BUFFSIZE=1200" in env
    assert "tcp://<redacted>@198.51.100.10:24666" in env
    # The env file's secret-like value is taken out of the journal too, where SGLang printed it.
    assert f"hf_token='{_collect.REDACTED}'" in bundle.files[f"journal/{UNIT}.log"]
    assert "EI0006" in bundle.files[f"journal/{UNIT}.log"]


def test_the_secrets_file_is_never_asked_for_and_missing_files_are_listed_with_the_reason():
    host = Host()
    bundle = _collect.collect(params(), host.run, read, host.which, "yesterday")
    assert not any(".secrets" in f for f in bundle.files)
    assert {"what": "file /etc/systemd/system/gone.service", "reason": "No such file or directory"} in bundle.failed


def test_journal_window_and_caps_reach_journalctl():
    host = Host()
    _collect.collect(params(max_lines=77), host.run, read, host.which, "@1764064800")
    assert ["journalctl", f"--unit={UNIT}", "--since=@1764064800", "--no-pager", "--quiet", "--output=short-iso",
            "--lines=77"] in host.calls


def test_bytes_cap_keeps_the_newest_lines_and_says_so():
    host = Host(journal="".join(f"line {i}\n" for i in range(1000)))
    bundle = _collect.collect(params(max_bytes=100), host.run, read, host.which, "today")
    text = bundle.files[f"journal/{UNIT}.log"]
    assert text.endswith("line 999\n") and len(text.encode()) <= 100 and text.startswith("line ")
    entry = next(e for e in bundle.collected if e["file"] == f"journal/{UNIT}.log")
    assert entry["truncated"] is True


def test_npu_health_per_listed_npu_and_driver_lines_from_the_kernel_journal_when_dmesg_is_refused():
    host = Host()
    bundle = _collect.collect(params(), host.run, read, host.which, "today")
    assert {"npu-smi/health-0.txt", "npu-smi/health-1.txt", "npu-smi/info.txt"} <= set(bundle.files)
    assert bundle.files["dmesg-npu.txt"] == "[  12.3] davinci 0000:c1:00.0: npu driver loaded\n"
    assert any(f["what"] == "dmesg --time-format=iso" and "Operation not permitted" in f["reason"]
               for f in bundle.failed)
    # pip of an interpreter that is not there: listed, not fatal.
    assert any(f["what"] == "pip list of python3" for f in bundle.failed)


def test_without_npu_smi_the_index_says_why():
    host = Host(npu_smi=None)
    bundle = _collect.collect(params(), host.run, read, host.which, "today")
    assert not any(f.startswith("npu-smi/") for f in bundle.files)
    assert any(f["what"] == "npu-smi" and "not found" in f["reason"] for f in bundle.failed)


def test_short_values_are_not_taken_out_everywhere():
    redact = _collect.Redactor(["1", "on", SECRET])
    assert redact(f"tp 16 on 1 node {SECRET}") == "tp 16 on 1 node <redacted>"


def test_since_values_from_an_inventory_are_checked():
    for good in ("@1764064800", "2026-11-25", "2026-11-25 10:00", "2026-11-25T10:00:05", "today", "yesterday"):
        assert _collect.SINCE.match(good), good
    for bad in ("-1h; rm -rf /", "--all", "2026-11-25\n--all", "today\n", "", "now"):
        assert not _collect.SINCE.match(bad), bad


def test_deploy_record_round_trip(tmp_path):
    path = str(tmp_path / "sub" / "last-deploy.json")
    assert _deploy_record.read_since(path, "yesterday")[0] == "yesterday"
    _deploy_record.write_record(path, 1764064800.7, "deepseek_r1_pd32")
    since, source = _deploy_record.read_since(path, "yesterday")
    assert since == "@1764064800" and "last deploy" in source
    assert oct((tmp_path / "sub" / "last-deploy.json").stat().st_mode & 0o777) == "0o600"
