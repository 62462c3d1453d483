"""What Galaxy's importer needs of the collection (scripts/lint.sh's galaxy gate runs the importer itself): a README
for every role, generated from its argument specification, with a play that runs; and the collection's URLs, which
only the publisher gives (scripts/release.sh), never a made-up address in galaxy.yml."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
ROLES = sorted(p.name for p in (ROOT / "roles").iterdir() if (p / "meta").is_dir())
URL_KEYS = ("repository", "documentation", "issues", "homepage")
# A test address: .invalid is reserved (RFC 2606), so it can never be taken for the project's home.
TEST_URL = "https://example.invalid/ascend-sglang"


def _settings():
    spec = importlib.util.spec_from_file_location("settings_script", ROOT / "scripts" / "settings.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _release(tmp_path: Path, **urls: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SGLANG_COLLECTION_")}
    env.update(urls)
    return subprocess.run(["scripts/release.sh", str(tmp_path / "out")], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600, check=False)


@pytest.mark.parametrize("role", ROLES)
def test_every_role_has_its_generated_readme(role: str) -> None:
    path = ROOT / "roles" / role / "README.md"
    assert path.read_text(encoding="utf-8") == _settings().readme_text(role), "run scripts/settings.py write"
    text = path.read_text(encoding="utf-8")
    assert "](../../docs/docsite/rst/variables.rst)" in text
    assert (path.parent / "../../docs/docsite/rst/variables.rst").resolve().is_file()
    assert f"ascend.sglang.{role}\n" in text.split("## Example")[1]
    # Every variable the role's entry points document is in its table.
    specs = yaml.safe_load((ROOT / "roles" / role / "meta" / "argument_specs.yml").read_text(encoding="utf-8"))
    for entry in specs["argument_specs"].values():
        for name in entry.get("options", {}):
            assert f"| `{name}` |" in text, (role, name)


def test_role_readme_examples_pass_the_syntax_check(tmp_path: Path) -> None:
    """Each README's play, by FQCN against the collection as the checkout's ansible.cfg finds it, in one run."""
    plays = []
    for role in ROLES:
        text = (ROOT / "roles" / role / "README.md").read_text(encoding="utf-8")
        example = text.split("## Example\n\n```yaml\n")[1].split("```", 1)[0]
        plays.extend(yaml.safe_load(example))
    playbook = tmp_path / "examples.yml"
    playbook.write_text(yaml.safe_dump(plays, sort_keys=False), encoding="utf-8")
    proc = subprocess.run([str(BIN / "ansible-playbook"), "--syntax-check", "-i", "inventories/example", str(playbook)],
                          cwd=ROOT, env=dict(os.environ, ANSIBLE_NOCOLOR="1"), capture_output=True, text=True,
                          timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_galaxy_yml_holds_no_made_up_address() -> None:
    """The URLs are the project's real home, which the publisher gives to scripts/release.sh: none, or a real https
    one, in galaxy.yml, and never the gate's test address."""
    meta = yaml.safe_load((ROOT / "galaxy.yml").read_text(encoding="utf-8"))
    for key in URL_KEYS:
        value = meta.get(key)
        if value is not None:
            assert str(value).startswith("https://"), key
            assert not re.search(r"(\.invalid|\.example|\.test|example\.(com|org|net))(/|:|$)", str(value)), key


@pytest.mark.parametrize("urls, variable", [
    ({}, "SGLANG_COLLECTION_REPOSITORY is not set"),
    ({"SGLANG_COLLECTION_REPOSITORY": "http://example.invalid/ascend-sglang"}, "SGLANG_COLLECTION_REPOSITORY must be"),
    ({"SGLANG_COLLECTION_REPOSITORY": "example.invalid/ascend-sglang"}, "SGLANG_COLLECTION_REPOSITORY must be"),
    ({"SGLANG_COLLECTION_REPOSITORY": "https://example.invalid/a b"}, "SGLANG_COLLECTION_REPOSITORY must be"),
    ({"SGLANG_COLLECTION_REPOSITORY": TEST_URL, "SGLANG_COLLECTION_ISSUES": "issues"}, "SGLANG_COLLECTION_ISSUES must be"),
    ({"SGLANG_COLLECTION_REPOSITORY": TEST_URL, "SGLANG_COLLECTION_DOCUMENTATION": "ftp://example.invalid/docs"},
     "SGLANG_COLLECTION_DOCUMENTATION must be"),
], ids=["missing", "http", "no-scheme", "blank", "bad-issues", "bad-documentation"])
def test_release_refuses_without_an_https_repository_url(tmp_path: Path, urls: dict, variable: str) -> None:
    before = (ROOT / "galaxy.yml").read_bytes()
    proc = _release(tmp_path, **urls)
    assert proc.returncode != 0 and variable in proc.stderr, proc.stderr
    assert proc.stdout == "" and not (tmp_path / "out").exists()
    assert (ROOT / "galaxy.yml").read_bytes() == before


@pytest.mark.ansible
def test_release_builds_with_the_publishers_urls_and_leaves_galaxy_yml_alone(tmp_path: Path) -> None:
    before = (ROOT / "galaxy.yml").read_bytes()
    proc = _release(tmp_path, SGLANG_COLLECTION_REPOSITORY=TEST_URL,
                    SGLANG_COLLECTION_DOCUMENTATION=f"{TEST_URL}/docs")
    assert proc.returncode == 0, proc.stderr[-3000:]
    tarball = Path(proc.stdout.strip().splitlines()[-1])
    version = yaml.safe_load(before)["version"]
    assert tarball == tmp_path / "out" / f"ascend-sglang-{version}.tar.gz" and tarball.is_file()
    with tarfile.open(tarball) as tar:
        info = json.load(tar.extractfile("MANIFEST.json"))["collection_info"]
        members = set(tar.getnames())
    assert info["repository"] == TEST_URL and info["documentation"] == f"{TEST_URL}/docs"
    assert info["issues"] is None and info["homepage"] is None
    assert {f"roles/{role}/README.md" for role in ROLES} <= members
    assert (ROOT / "galaxy.yml").read_bytes() == before


def test_readme_install_says_how_to_build_the_publishable_tarball() -> None:
    install = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## Install\n")[1].split("\n## ")[0]
    assert "scripts/release.sh" in install and "SGLANG_COLLECTION_REPOSITORY" in install
