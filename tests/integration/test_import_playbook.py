"""ascend.sglang.import_profiles with the real ansible-playbook: files, header, idempotence, check mode, the report
against the collection's profiles, and refusals (a document line, a file the importer did not write)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

import parsers
import seeddoc as sd
from test_playbooks import ansible, recap_changed

from ansible_collections.ascend.sglang.tests.unit.import_pages import cells_table

pytestmark = pytest.mark.ansible

# A one-section document in the rendered text form: one PD-mixed server on one host.
DEMO = cells_table(("Demo-S", "Atlas 800I A3", "2", "PD Mixed", "1K-1K", "BF16", "30.00", "100.000")) + """\
Demo-S Atlas 800I A3-2Card PD Mixed 1K-1K 30ms#

Model Deployment#

sysctl -w vm.swappiness=0
MODEL_PATH=xxx
export HCCL_SOCKET_IFNAME=lo
python -m sglang.launch_server --model-path $MODEL_PATH \\
    --host 127.0.0.1 --port 7239 --nnodes 1 --node-rank 0 --tp-size 4

Benchmark#

python -m sglang.bench_serving --dataset-name random --host 127.0.0.1 --port 7239 --random-input-len 1000 --random-output-len 1000
"""
DEMO_ID = "demo_s_a3_2c_mixed_1k_1k_30ms"


def run(source: Path, dest: Path, *extra: str, check: bool = True):
    # By FQCN from another directory, with no inventory: the import needs none.
    return ansible("ansible-playbook", "ascend.sglang.import_profiles", "-e", f"sglang_import_source={source}",
                   "-e", f"sglang_profiles_dir={dest}", *extra, cwd=source.parent, check=check)


def test_import_writes_the_profiles_once_and_check_mode_writes_nothing(tmp_path: Path) -> None:
    source = tmp_path / "000_demo.txt"
    source.write_text(DEMO, encoding="utf-8")
    dest = tmp_path / "profiles"
    checked = run(source, dest, "--check")
    assert recap_changed(checked.stdout) == 1 and not dest.exists()
    assert f"{DEMO_ID} (new):" in checked.stdout
    first = run(source, dest)
    assert recap_changed(first.stdout) == 1
    assert f"{DEMO_ID} (new):" in first.stdout and "no collection profile of this id" in first.stdout
    text = (dest / f"{DEMO_ID}.yml").read_text(encoding="utf-8")
    assert text.startswith("# Imported by ascend.sglang.import_profiles from 000_demo.txt")
    data = yaml.safe_load(text)
    assert data["roles"]["mixed"]["args"]["--host"] == "{host}" and data["roles"]["mixed"]["port"] == 7239
    second = run(source, dest)
    assert recap_changed(second.stdout) == 0 and "1 profiles: 0 new, 0 changed, 1 unchanged" in second.stdout


def test_refusals_name_the_line_and_write_nothing(tmp_path: Path) -> None:
    source = tmp_path / "000_demo.txt"
    source.write_text(DEMO.replace("MODEL_PATH=xxx", "MODEL_PATH=xxx\nwget http://example.invalid/x"),
                      encoding="utf-8")
    dest = tmp_path / "profiles"
    proc = run(source, dest, check=False)
    number = DEMO.splitlines().index("MODEL_PATH=xxx") + 2
    assert proc.returncode != 0 and f"000_demo.txt line {number}" in proc.stdout and not dest.exists()
    # A file of the same name the importer did not write stays as it is.
    source.write_text(DEMO, encoding="utf-8")
    dest.mkdir()
    (dest / f"{DEMO_ID}.yml").write_text("id: the operator's own\n", encoding="utf-8")
    proc = run(source, dest, check=False)
    assert proc.returncode != 0 and "sglang_profiles_dir" in proc.stdout and "did not write" in proc.stdout
    assert (dest / f"{DEMO_ID}.yml").read_text(encoding="utf-8") == "id: the operator's own\n"
    unset = ansible("ansible-playbook", "ascend.sglang.import_profiles", "-e", f"sglang_profiles_dir={dest}",
                    cwd=tmp_path, check=False)
    assert unset.returncode != 0 and "sglang_import_source" in unset.stdout
    # An interpreter that is not one is named before the document is read.
    proc = run(source, tmp_path / "other", "-e", f"sglang_import_parser_python={source}", check=False)
    assert proc.returncode != 0 and "sglang_import_parser_python" in proc.stdout and "not an executable" in proc.stdout
    assert not (tmp_path / "other").exists()


# The release the demo profile targets (the importer's reference release); its parser, set up by setup_parsers.sh.
DEMO_RELEASE = "0.5.6.post2"
ROUTER_RELEASE = "0.3.0"


def need_parsers() -> None:
    for kind, release in (("server", DEMO_RELEASE), ("router", ROUTER_RELEASE)):
        if not parsers.available(kind, release):
            if os.environ.get("SGLANG_PARSERS_REQUIRED") == "1":
                pytest.fail(f"the {kind} parser of {release} is not installed (tests/validation/setup_parsers.sh)")
            pytest.skip(f"{kind} parser {release} not installed; run tests/validation/setup_parsers.sh")


def test_the_real_parser_of_the_release_validates_before_anything_is_written(tmp_path: Path) -> None:
    """With sglang_import_parser_python (an interpreter with SGLang installed) the imported commands go through that
    release's own parser: a value the flag catalog cannot judge (a --dtype choice) refuses the import naming the
    profile, the service and the parser's words; the document as published is written, each parser named."""
    need_parsers()
    server = parsers.interpreter("server", DEMO_RELEASE, tmp_path)
    router = parsers.interpreter("router", ROUTER_RELEASE, tmp_path)
    source = tmp_path / "000_demo.txt"
    source.write_text(DEMO.replace("--tp-size 4", "--tp-size 4 --dtype bfloat1"), encoding="utf-8")
    dest = tmp_path / "profiles"
    proc = run(source, dest, "-e", f"sglang_import_parser_python={server}", check=False)
    assert proc.returncode != 0 and not dest.exists()
    assert f"{DEMO_ID}: SGLang {DEMO_RELEASE}'s parser rejects" in proc.stdout
    assert "sglang.launch_server: error: argument --dtype: invalid choice: 'bfloat1'" in proc.stdout
    source.write_text(DEMO, encoding="utf-8")
    proc = run(source, dest, "-e", f"sglang_import_parser_python={server}",
               "-e", f"sglang_import_router_python={router}")
    assert f"{DEMO_ID}: 1 server command(s) parse with SGLang {DEMO_RELEASE}'s parser" in proc.stdout
    assert f"{DEMO_ID}: 1 router command(s) parse with sglang-router {ROUTER_RELEASE}'s parser" in proc.stdout
    assert (dest / f"{DEMO_ID}.yml").exists()


@pytest.mark.skipif(sd.missing_reason() is not None, reason=str(sd.missing_reason()))
def test_a_changed_document_is_reported_against_the_collections_profiles(tmp_path: Path) -> None:
    """The second January document as downloaded imports into the collection's ten profiles unchanged; a document
    whose first configuration changed one flag and one variable reports exactly those."""
    seed = sd.document("001_*.txt").read_text(encoding="utf-8")
    same = tmp_path / "001_same.txt"
    same.write_text(seed, encoding="utf-8")
    proc = run(same, tmp_path / "same")
    assert proc.stdout.count("same as the collection's profile") == 10
    first_section = seed.index("--mem-fraction-static 0.6")
    edited = seed[:first_section] + seed[first_section:].replace(
        "--mem-fraction-static 0.6", "--mem-fraction-static 0.65", 1)
    edited = edited.replace("export HCCL_BUFFSIZE=0", "export HCCL_BUFFSIZE=200", 1)
    changed = tmp_path / "001_changed.txt"
    changed.write_text(edited, encoding="utf-8")
    proc = run(changed, tmp_path / "changed")
    assert "mixed flags: --mem-fraction-static 0.6 -> 0.65" in proc.stdout
    assert "mixed env: HCCL_BUFFSIZE 0 -> 200" in proc.stdout
    assert proc.stdout.count("same as the collection's profile") == 9


def test_an_imported_profile_is_deployed_from_the_operators_directory(tmp_path: Path) -> None:
    """plan.yml (imported by every deploying playbook) looks the profile up in sglang_profiles_dir first, the
    collection's profiles after it."""
    source = tmp_path / "000_demo.txt"
    source.write_text(DEMO, encoding="utf-8")
    dest = tmp_path / "profiles"
    run(source, dest)
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(yaml.safe_dump({"all": {"vars": {"sglang_model_path": "/models/demo"}, "children": {
        "mixed": {"hosts": {"m0": {"ansible_host": "192.0.2.1", "sglang_host_ip": "198.51.100.1"}}}}}}))
    plan_file = tmp_path / "plan.json"
    ansible("ansible-playbook", "-i", str(inventory), "ascend.sglang.plan", "-e", f"sglang_profile={DEMO_ID}",
            "-e", f"sglang_profiles_dir={dest}", "-e", f"sglang_plan_file={plan_file}", cwd=tmp_path)
    planned = yaml.safe_load(plan_file.read_text())["plan"]
    argv = planned["hosts"]["m0"]["services"][0]["argv"]
    assert planned["profile"] == DEMO_ID and argv[argv.index("--tp-size") + 1] == "4"
    assert argv[argv.index("--host") + 1] == "198.51.100.1"
    # A profile of the collection's own, with the operator's directory set: still found.
    ansible("ansible-playbook", "-i", str(inventory), "ascend.sglang.plan", "-e", "sglang_profiles_dir=" + str(dest),
            "-e", "sglang_profile=qwen3_30b_a3_1c_mixed_3k5_1k5_50ms", "-e", "sglang_draft_model_path=/models/d",
            cwd=tmp_path)


@pytest.mark.parametrize("change, message", [
    (("--tp-size 4", "--tp-size 4 --api-key sk-live-0123456789"),
     "--api-key is given a value in the clear; a credential never goes into a profile"),
    (("MODEL_PATH=xxx", "MODEL_PATH=xxx\nsource /tmp/evil.sh"),
     "/tmp/evil.sh is not under the CANN/Ascend install tree (/usr/local/Ascend/)"),
    (("--random-output-len 1000", "--random-output-len 1000; touch /tmp/pwned"),
     "the benchmark block holds more than the sglang.bench_serving command (';'"),
])
def test_an_untrusted_document_is_refused_with_nothing_written_or_shown(tmp_path: Path, change, message) -> None:
    """A document is untrusted input: a credential, a script outside the CANN tree, a second command after the
    benchmark are refused naming the line; nothing is written, and the credential appears nowhere in the output
    (not at -v either)."""
    source = tmp_path / "000_demo.txt"
    source.write_text(DEMO.replace(*change), encoding="utf-8")
    dest = tmp_path / "profiles"
    proc = run(source, dest, "-v", check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and message in out, out[-3000:]
    assert "sk-live" not in out and not dest.exists()


def test_the_document_s_own_model_path_becomes_the_operators(tmp_path: Path) -> None:
    source = tmp_path / "000_demo.txt"
    source.write_text(DEMO.replace("MODEL_PATH=xxx", "MODEL_PATH=/home/someone/weights/Demo"), encoding="utf-8")
    dest = tmp_path / "profiles"
    run(source, dest)
    data = yaml.safe_load((dest / f"{DEMO_ID}.yml").read_text(encoding="utf-8"))
    assert data["roles"]["mixed"]["args"]["--model-path"] == "{model_path}"


def test_a_profiles_directory_under_a_file_is_refused_naming_it(tmp_path: Path) -> None:
    source = tmp_path / "000_demo.txt"
    source.write_text(DEMO, encoding="utf-8")
    proc = run(source, source / "profiles", check=False)
    assert proc.returncode != 0 and f"cannot be made: '{source}' is a file, not a directory" in proc.stdout, \
        proc.stdout[-3000:]
    assert "Errno" not in proc.stdout + proc.stderr
