"""A service's generation of files kept and put back (module_utils/files/_generations.py), on real files under
tmp_path: no root, so every owner and group is the current user's."""

from __future__ import annotations

import grp
import hashlib
import json
import os
import pwd
import stat
from pathlib import Path

import pytest

from ansible_collections.ascend.sglang.plugins.module_utils.files._generations import (
    GenerationError, blob_name, check_services, load_generation, restore, save, snapshot,
)

USER = pwd.getpwuid(os.geteuid()).pw_name
GROUP = grp.getgrgid(os.getegid()).gr_name


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def tree(root: Path) -> dict:
    """Every path under root with its mode and content: what a check-mode run must leave as it was."""
    out = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        out[str(path)] = (stat.S_IMODE(st.st_mode), st.st_uid, path.read_bytes() if path.is_file() else None)
    return out


@pytest.fixture(name="host")
def fixture_host(tmp_path: Path) -> dict:
    """A service's files: an environment (0644), secrets (0600), a unit, and a drop-in that does not exist yet."""
    etc = tmp_path / "etc"
    etc.mkdir()
    env, secrets, unit = etc / "svc.env", etc / "svc.secrets", etc / "systemd" / "svc.service"
    unit.parent.mkdir()
    env.write_text("A='1'\n")
    env.chmod(0o644)
    secrets.write_text("TOKEN='s3cret'\n")
    secrets.chmod(0o600)
    unit.write_text("[Service]\nExecStart=/bin/true\n")
    unit.chmod(0o644)
    later = etc / "systemd" / "svc.service.d" / "later.conf"
    files = [str(env), str(secrets), str(unit), str(later)]
    return {"dir": str(tmp_path / "var" / "generations"), "root": tmp_path, "env": env, "secrets": secrets,
            "unit": unit, "later": later, "services": [{"name": "svc", "files": files}]}


def test_snapshot_lists_each_path_in_order_with_its_metadata(host) -> None:
    manifest, blobs = snapshot("svc", host["services"][0]["files"])
    digest = hashlib.sha256(b"A='1'\n").hexdigest()
    assert manifest["service"] == "svc"
    assert [e["path"] for e in manifest["files"]] == host["services"][0]["files"]
    assert manifest["files"][0] == {"path": str(host["env"]), "present": True, "mode": "0644", "owner": USER,
                                    "group": GROUP, "sha256": digest}
    assert manifest["files"][1]["mode"] == "0600"
    assert manifest["files"][3] == {"path": str(host["later"]), "present": False, "mode": None, "owner": None,
                                    "group": None, "sha256": None}
    assert blobs[digest] == b"A='1'\n" and len(blobs) == 3


def test_save_writes_a_root_only_generation_without_contents_in_the_result(host) -> None:
    result = save(host["dir"], host["services"], False)
    assert result == {"changed": True, "services": ["svc"], "saved": [{"service": "svc", "files": 3, "changed": True}]}
    assert "s3cret" not in json.dumps(result)
    generations, generation = Path(host["dir"]), Path(host["dir"]) / "svc"
    assert mode_of(generations) == 0o700 and mode_of(generation) == 0o700
    manifest = json.loads((generation / "manifest.json").read_text())
    assert "s3cret" not in json.dumps(manifest)
    blobs = sorted(p for p in generation.iterdir() if p.name != "manifest.json")
    assert len(blobs) == 3
    assert all(mode_of(p) == 0o600 for p in generation.iterdir())
    secret = next(e for e in manifest["files"] if e["path"] == str(host["secrets"]))
    assert (generation / blob_name(secret["sha256"])).read_text() == "TOKEN='s3cret'\n"
    # Nothing left beside it: the new generation took its place by rename.
    assert [p.name for p in generations.iterdir()] == ["svc"]


def test_one_blob_per_content(host) -> None:
    twin = host["root"] / "etc" / "twin.env"
    twin.write_bytes(host["env"].read_bytes())
    save(host["dir"], [{"name": "svc", "files": [str(host["env"]), str(twin)]}], False)
    assert sorted(p.name for p in (Path(host["dir"]) / "svc").iterdir()) == [
        blob_name(hashlib.sha256(b"A='1'\n").hexdigest()), "manifest.json"]


def test_saving_the_same_files_again_changes_nothing(host) -> None:
    save(host["dir"], host["services"], False)
    before = tree(host["root"])
    result = save(host["dir"], host["services"], False)
    assert not result["changed"] and result["saved"] == [{"service": "svc", "files": 3, "changed": False}]
    assert tree(host["root"]) == before


def test_a_new_generation_replaces_the_old_one_whole(host) -> None:
    save(host["dir"], host["services"], False)
    host["env"].write_text("A='2'\n")
    host["secrets"].unlink()
    result = save(host["dir"], host["services"], False)
    assert result["saved"] == [{"service": "svc", "files": 2, "changed": True}]
    generation = Path(host["dir"]) / "svc"
    # The old contents went with the old generation.
    assert len([p for p in generation.iterdir() if p.name != "manifest.json"]) == 2
    assert sorted(p.name for p in Path(host["dir"]).iterdir()) == ["svc"]
    manifest = load_generation(host["dir"], "svc")[1]
    assert [e["present"] for e in manifest["files"]] == [True, False, True, False]


def test_round_trip_puts_content_mode_and_absence_back(host) -> None:
    save(host["dir"], host["services"], False)
    original_unit = host["unit"].read_text()
    # The upgrade writes new files: new content, a wider mode, a file that did not exist, one removed.
    host["env"].write_text("A='2'\n")
    host["secrets"].chmod(0o644)
    host["later"].parent.mkdir()
    host["later"].write_text("[Service]\nNice=5\n")
    host["unit"].unlink()
    result = restore(host["dir"], [{"name": "svc", "files": []}], False)
    assert result == {"changed": True, "services": ["svc"], "daemon_reload": True, "restored": [
        {"service": "svc", "path": str(host["env"]), "action": "written"},
        {"service": "svc", "path": str(host["secrets"]), "action": "written"},
        {"service": "svc", "path": str(host["unit"]), "action": "written"},
        {"service": "svc", "path": str(host["later"]), "action": "removed"}]}
    assert host["env"].read_text() == "A='1'\n" and mode_of(host["env"]) == 0o644
    assert host["secrets"].read_text() == "TOKEN='s3cret'\n" and mode_of(host["secrets"]) == 0o600
    assert host["unit"].read_text() == original_unit
    assert not host["later"].exists()
    assert "s3cret" not in json.dumps(result)
    # No temporary file left beside the files put back.
    assert sorted(p.name for p in host["env"].parent.iterdir()) == ["svc.env", "svc.secrets", "systemd"]


def test_restore_creates_a_missing_directory_0755(host) -> None:
    deep = host["root"] / "opt" / "svc" / "run.sh"
    deep.parent.mkdir(parents=True)
    deep.write_text("#!/bin/sh\n")
    deep.chmod(0o755)
    save(host["dir"], [{"name": "svc", "files": [str(deep)]}], False)
    (host["root"] / "opt" / "svc" / "run.sh").unlink()
    (host["root"] / "opt" / "svc").rmdir()
    result = restore(host["dir"], [{"name": "svc"}], False)
    assert result["restored"] == [{"service": "svc", "path": str(deep), "action": "written"}]
    assert not result["daemon_reload"]
    assert mode_of(deep.parent) == 0o755 and mode_of(deep) == 0o755 and deep.read_text() == "#!/bin/sh\n"


def test_restore_with_nothing_to_do_changes_nothing(host) -> None:
    save(host["dir"], host["services"], False)
    before = tree(host["root"])
    result = restore(host["dir"], host["services"], False)
    assert result == {"changed": False, "services": ["svc"], "restored": [], "daemon_reload": False}
    assert tree(host["root"]) == before


def test_restore_uses_the_saved_paths_not_the_given_ones(host) -> None:
    save(host["dir"], host["services"], False)
    other = host["root"] / "etc" / "other.env"
    other.write_text("B=1\n")
    host["env"].write_text("A='2'\n")
    result = restore(host["dir"], [{"name": "svc", "files": [str(other)]}], False)
    assert [r["path"] for r in result["restored"]] == [str(host["env"])]
    assert other.read_text() == "B=1\n" and host["env"].read_text() == "A='1'\n"


def test_check_mode_changes_nothing(host) -> None:
    before = tree(host["root"])
    result = save(host["dir"], host["services"], True)
    assert result["changed"] and result["saved"][0]["changed"]
    assert tree(host["root"]) == before and not Path(host["dir"]).exists()
    save(host["dir"], host["services"], False)
    host["env"].write_text("A='2'\n")
    host["later"].parent.mkdir()
    host["later"].write_text("x\n")
    host["secrets"].chmod(0o640)
    before = tree(host["root"])
    assert save(host["dir"], host["services"], True)["saved"][0]["changed"]
    result = restore(host["dir"], host["services"], True)
    assert result["changed"] and result["daemon_reload"] is False
    assert [(r["path"], r["action"]) for r in result["restored"]] == [
        (str(host["env"]), "written"), (str(host["secrets"]), "written"), (str(host["later"]), "removed")]
    assert tree(host["root"]) == before


def test_restore_of_a_service_without_a_generation_fails_before_changing_anything(host) -> None:
    save(host["dir"], host["services"], False)
    host["env"].write_text("A='2'\n")
    before = tree(host["root"])
    with pytest.raises(GenerationError, match=r"no saved generation in .* for: other, third"):
        restore(host["dir"], [{"name": "svc"}, {"name": "other"}, {"name": "third"}], False)
    assert tree(host["root"]) == before
    with pytest.raises(GenerationError, match="for: svc"):
        restore(str(host["root"] / "nowhere"), [{"name": "svc"}], False)


def test_a_damaged_blob_fails_the_restore_before_changing_anything(host) -> None:
    save(host["dir"], host["services"], False)
    manifest = load_generation(host["dir"], "svc")[1]
    (Path(host["dir"]) / "svc" / blob_name(manifest["files"][2]["sha256"])).write_text("tampered\n")
    host["env"].write_text("A='2'\n")
    before = tree(host["root"])
    with pytest.raises(GenerationError, match=rf"service svc: the saved content of {host['unit']} is damaged"):
        restore(host["dir"], [{"name": "svc"}], False)
    assert tree(host["root"]) == before
    # Saving again repairs it, though the manifest is the same.
    assert save(host["dir"], host["services"], False)["changed"]


@pytest.mark.parametrize("name", ["a/b", "..", ".", "../x", ".hidden", "", "a b", "x\n"])
def test_names_that_are_not_plain_file_names_are_refused(tmp_path, name) -> None:
    with pytest.raises(GenerationError, match="not a plain file name"):
        check_services(str(tmp_path), [{"name": name, "files": []}])
    with pytest.raises(GenerationError, match="not a plain file name"):
        restore(str(tmp_path), [{"name": name}], False)
    assert list(tmp_path.iterdir()) == []


def test_relative_paths_and_repeats_are_refused_naming_the_service(tmp_path) -> None:
    with pytest.raises(GenerationError, match=r"service svc: not an absolute path: 'etc/x.env'"):
        save(str(tmp_path / "g"), [{"name": "svc", "files": ["/etc/hostname", "etc/x.env"]}], False)
    with pytest.raises(GenerationError, match=r"service svc: /etc/hostname given twice"):
        save(str(tmp_path / "g"), [{"name": "svc", "files": ["/etc/hostname", "/etc/hostname"]}], False)
    with pytest.raises(GenerationError, match="service svc: given twice"):
        save(str(tmp_path / "g"), [{"name": "svc", "files": []}, {"name": "svc", "files": []}], False)
    with pytest.raises(GenerationError, match="dir: not an absolute path"):
        save("generations", [{"name": "svc", "files": []}], False)
    assert list(tmp_path.iterdir()) == []


def test_what_is_not_a_regular_file_or_cannot_be_read_fails_the_save_with_nothing_written(host) -> None:
    link = host["root"] / "etc" / "link.env"
    link.symlink_to(host["env"])
    with pytest.raises(GenerationError, match=rf"service b: {link} is not a regular file \(a symbolic link\)"):
        save(host["dir"], [host["services"][0], {"name": "b", "files": [str(link)]}], False)
    with pytest.raises(GenerationError, match=rf"service b: {host['root'] / 'etc'} is not a regular file \(a directory\)"):
        save(host["dir"], [{"name": "b", "files": [str(host["root"] / "etc")]}], False)
    below_a_file = host["env"] / "x"
    with pytest.raises(GenerationError, match=rf"service svc: cannot read {below_a_file}: Not a directory"):
        save(host["dir"], [{"name": "svc", "files": [str(below_a_file)]}], False)
    assert not Path(host["dir"]).exists()
    if os.geteuid() != 0:
        host["secrets"].chmod(0)
        with pytest.raises(GenerationError, match=rf"service svc: cannot read {host['secrets']}"):
            save(host["dir"], host["services"], False)
        assert not Path(host["dir"]).exists()


def test_a_generation_left_aside_by_a_run_cut_short_is_found(host) -> None:
    save(host["dir"], host["services"], False)
    generations = Path(host["dir"])
    # Cut short between the two renames: the old generation moved aside, the new one not yet in place.
    (generations / "svc").rename(generations / ".svc.old")
    (generations / ".svc.new").mkdir()
    host["env"].write_text("A='2'\n")
    result = restore(host["dir"], [{"name": "svc"}], False)
    assert result["restored"] == [{"service": "svc", "path": str(host["env"]), "action": "written"}]
    assert host["env"].read_text() == "A='1'\n"
    # Saving the same files puts it back in its place; a changed file replaces it and the leftovers go.
    assert not save(host["dir"], host["services"], False)["changed"]
    assert sorted(p.name for p in generations.iterdir()) == [".svc.new", "svc"]
    host["env"].write_text("A='3'\n")
    assert save(host["dir"], host["services"], False)["changed"]
    assert sorted(p.name for p in generations.iterdir()) == ["svc"]


def test_services_are_kept_apart(host) -> None:
    other = host["root"] / "etc" / "other.env"
    other.write_text("B=1\n")
    services = host["services"] + [{"name": "other", "files": [str(other)]}]
    result = save(host["dir"], services, False)
    assert result["services"] == ["svc", "other"] and [s["files"] for s in result["saved"]] == [3, 1]
    other.write_text("B=2\n")
    host["env"].write_text("A='2'\n")
    result = restore(host["dir"], [{"name": "other"}], False)
    assert result["restored"] == [{"service": "other", "path": str(other), "action": "written"}]
    assert host["env"].read_text() == "A='2'\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another owner needs root")
def test_owner_and_group_are_put_back(host) -> None:
    save(host["dir"], host["services"], False)
    os.chown(host["secrets"], 65534, 65534)
    result = restore(host["dir"], [{"name": "svc"}], False)
    assert result["restored"] == [{"service": "svc", "path": str(host["secrets"]), "action": "written"}]
    st = host["secrets"].stat()
    assert (st.st_uid, st.st_gid) == (os.geteuid(), os.getegid()) and stat.S_IMODE(st.st_mode) == 0o600
