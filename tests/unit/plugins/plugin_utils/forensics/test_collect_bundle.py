"""The failure bundle on the controller (plugin_utils/forensics/_collect_bundle.py): a host that gave nothing is listed with
the reason, the plan goes in without secrets, the archive and its members are owner-only. Pure Python."""

from __future__ import annotations

import json
import os
import stat
import tarfile

import pytest

from ansible_collections.ascend.sglang.plugins.module_utils.collect._collect import REDACTED, Redactor
from ansible_collections.ascend.sglang.plugins.plugin_utils.forensics import _collect_bundle as bundle

SERVICE = {"name": "sglang-prefill-i0-r0", "role": "prefill",
           "env": {"HF_TOKEN": "hf_plan_token_1", "HCCL_BUFFSIZE": "1200"},
           "argv": ["python3", "--api-key", "sk-from-secrets"]}
PLAN = {"profile": "p", "hosts": {"p0": {"services": [SERVICE]}, "d0": {"services": []}}}


def test_unreachable_and_earlier_failed_hosts_get_an_index_with_the_reason(tmp_path):
    bundle.write_host(bundle.host_dir(str(tmp_path), "p0"), {"journal/u.service.log": "x\n"},
                      {"reachable": True, "collected": [{"file": "journal/u.service.log"}], "failed": []})
    missing = bundle.mark_missing(str(tmp_path), ["p0", "d0", "r0"], {"d0": "unreachable: ssh: connect timed out"})
    assert missing == ["d0", "r0"]
    d0 = json.loads((tmp_path / "d0" / "index.json").read_text())
    assert d0["reachable"] is False and d0["failed"] == [{"what": "everything",
                                                          "reason": "unreachable: ssh: connect timed out"}]
    assert "failed earlier" in json.loads((tmp_path / "r0" / "index.json").read_text())["failed"][0]["reason"]
    assert json.loads((tmp_path / "p0" / "index.json").read_text())["reachable"] is True


def test_the_plan_goes_in_without_secret_values():
    secrets = bundle.secret_values({"prefill": {"--api-key": "sk-from-secrets"}})
    text = json.dumps(bundle.redacted_plan(PLAN, Redactor(secrets)))
    assert "hf_plan_token_1" not in text and "sk-from-secrets" not in text and REDACTED in text
    assert '"HCCL_BUFFSIZE": "1200"' in text
    assert PLAN["hosts"]["p0"]["services"][0]["env"]["HF_TOKEN"] == "hf_plan_token_1"  # the caller's plan untouched


@pytest.mark.parametrize("host", ["../etc", ".hidden", "a/b", "", "-x"])
def test_host_names_that_would_leave_the_bundle_are_refused(tmp_path, host):
    with pytest.raises(ValueError):
        bundle.host_dir(str(tmp_path), host)


def test_a_host_file_path_that_leaves_its_directory_is_refused(tmp_path):
    with pytest.raises(ValueError, match="leaves"):
        bundle.write_host(str(tmp_path / "p0"), {"../../x": "y"}, {})


def test_archive_is_owner_only_rooted_at_its_name_and_opens_with_tar(tmp_path):
    root = tmp_path / "sglang-p-20261125T100000Z"
    bundle.write_host(bundle.host_dir(str(root), "p0"), {"journal/u.service.log": "EI0006\n"}, {"reachable": True})
    bundle.write_json(str(root / "plan.json"), {"profile": "p"})
    out = str(tmp_path / "sglang-p-20261125T100000Z.tar.gz")
    size = bundle.archive(str(root), out)
    assert size == os.path.getsize(out) and stat.S_IMODE(os.stat(out).st_mode) == 0o600
    with tarfile.open(out) as tar:
        members = {m.name: m for m in tar.getmembers()}
    assert "sglang-p-20261125T100000Z/p0/journal/u.service.log" in members
    assert all(stat.S_IMODE(m.mode) in (0o600, 0o700) for m in members.values())
    assert all(n.startswith("sglang-p-20261125T100000Z") for n in members)
    with pytest.raises(ValueError, match="already exists .a file., and is never replaced"):  # never over an earlier archive
        bundle.archive(str(root), out)
    os.symlink(os.path.join(str(tmp_path), "elsewhere"), out + ".link")
    with pytest.raises(ValueError, match="already exists .a link."):  # never through a link
        bundle.archive(str(root), out + ".link")


def test_troubled_units_from_systemd_state_and_the_failure_text(tmp_path):
    host = bundle.host_dir(str(tmp_path), "p0")
    bundle.write_host(host, {"systemctl/sglang-prefill-i0-r0.service.txt": "ActiveState=active\nNRestarts=0\n",
                             "systemctl/sglang-prefill-i1-r0.service.txt": "ActiveState=activating\nNRestarts=3\n",
                             "systemctl/sglang-prefill-i10-r0.service.txt": "ActiveState=active\nResult=success\n",
                             "systemctl/sglang-watchdog-sglang-prefill-i0-r0.service.txt": "ActiveState=active\n"},
                      {})
    found = bundle.troubled_units(str(tmp_path), ["p0"], "p0: not healthy: sglang-prefill-i0-r0")
    assert found == [("p0", "sglang-prefill-i0-r0.service"), ("p0", "sglang-prefill-i1-r0.service")]
