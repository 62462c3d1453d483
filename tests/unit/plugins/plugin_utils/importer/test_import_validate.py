"""The import's validation with a parser (plugin_utils/importer/_import_validate.py), the probe's answers given by the test:
which commands go to which release, and how every answer of the probe is reported.  The real parsers run in
tests/integration/test_import_playbook.py."""

from __future__ import annotations

import dataclasses
import sys

import pytest

from ansible_collections.ascend.sglang.plugins.plugin_utils.importer import _import_validate as v
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import load_profile

PD32 = load_profile("deepseek_r1_pd32")
MIXED = load_profile("qwen3_30b_a3_1c_mixed_3k5_1k5_50ms")


@dataclasses.dataclass
class Item:
    id: str
    data: dict
    deployment_from: str | None = None


def probe_answering(version, reject=()):
    """A probe of ``version`` that rejects every command containing one of ``reject``; records its requests."""
    seen = []

    def probe(python, request):
        seen.append((python, request))
        argvs = (request.get("by_release") or {}).get(version, [])
        return {"version": version, "options": [],
                "results": [{"ok": not any(r in a for r in reject), "error": "argument --x: invalid choice"}
                            for a in argvs]}
    probe.seen = seen
    return probe


def test_commands_are_planned_on_the_documented_shape_for_every_supported_release():
    found = v.commands_by_release(PD32, "server")
    ranks = sum(PD32.roles[r].nnodes * PD32.roles[r].documented_instances for r in PD32.server_roles)
    assert list(found) and all(len(cmds) == ranks for cmds in found.values())
    argv = found["0.5.23"][0].argv
    # The release's spelling, the stand-in values of what the inventory gives.
    assert "--cuda-graph-bs" not in argv and argv[argv.index("--model-path") + 1].startswith("/models/")
    router = v.commands_by_release(PD32, "router")
    assert all(len(cmds) == 1 and "--pd-disaggregation" in cmds[0].argv for cmds in router.values())


def test_one_probe_per_interpreter_and_a_report_line_per_profile():
    probe = probe_answering("0.5.9")
    verdict = v.validate([PD32, MIXED], {"server": "/venv/bin/python", "router": None}, probe)
    assert verdict.refusals == [] and len(probe.seen) == 1
    python, request = probe.seen[0]
    assert python == "/venv/bin/python" and request["kind"] == "server" and "0.5.9" in request["by_release"]
    assert any(line.startswith(f"{PD32.id}: ") and "parse with SGLang 0.5.9's parser" in line
               for line in verdict.report)
    assert any("sglang_import_router_python unset" in line for line in verdict.report)


def test_a_release_the_profile_does_not_support_is_reported_not_validated():
    verdict = v.validate([PD32], {"server": "/p"}, probe_answering("0.4.0"))
    assert verdict.refusals == []
    assert any(line.startswith(f"{PD32.id}: not validated with SGLang 0.4.0's parser (the profile supports ")
               for line in verdict.report)


def test_rejected_commands_refuse_naming_profile_service_and_message():
    verdict = v.validate([MIXED], {"server": "/p"}, probe_answering("0.5.9", reject=("--tp-size",)))
    assert verdict.refusals and all(line.startswith(f"{MIXED.id}: SGLang 0.5.9's parser rejects ")
                                    and "argument --x: invalid choice" in line for line in verdict.refusals)


def test_an_interpreter_that_cannot_run_the_parser_is_named_by_its_variable():
    def broken(python, request):
        raise v.ParserUnusable("ModuleNotFoundError: No module named 'sglang'")
    verdict = v.validate([MIXED], {"server": "/usr/bin/python3"}, broken)
    assert verdict.refusals == ["variable 'sglang_import_parser_python': /usr/bin/python3 cannot run the SGLang "
                                "parser: ModuleNotFoundError: No module named 'sglang'"]
    verdict = v.validate([MIXED], {"router": "/r"}, probe_answering(None))
    assert verdict.refusals == ["variable 'sglang_import_router_python': /r has no sglang-router installed"]


def test_the_real_probe_reports_an_interpreter_without_the_package(tmp_path):
    # The tests' own interpreter has no SGLang: the probe's last words are the refusal.
    with pytest.raises(v.ParserUnusable, match="sglang"):
        v.run_probe(sys.executable, {"kind": "server", "argvs": [["--model-path", "/m"]]})
    missing = tmp_path / "no-such-python"
    with pytest.raises(v.ParserUnusable, match=str(missing)):
        v.run_probe(str(missing), {"kind": "server"})


def test_without_interpreters_nothing_is_planned_or_run():
    verdict = v.validate([PD32], {}, probe_answering("0.5.9"))
    assert verdict.refusals == [] and len(verdict.report) == 1 and "not validated with a real parser" in verdict.report[0]


def test_imported_profiles_take_a_reused_deployment_from_the_import_or_the_collection():
    donor = {"id": "demo_a", "title": "a", "model": "m", "hardware": "A3", "cards": 1, "deploy_mode": "pd_mixed",
             "tpot_target_ms": 50,
             "roles": {"mixed": {"port": 7239, "args": {"--model-path": "{model_path}", "--tp-size": 2,
                                                        "--host": "{host}", "--port": "{port}"}}}}
    shared = {k: val for k, val in donor.items() if k not in ("id", "roles")}
    reuse = {"id": "demo_b", "deployment_from": "demo_a", **shared}
    lost = dict(reuse, id="demo_c", deployment_from="demo_gone")
    profiles, refusals = v.imported_profiles(
        [Item("demo_a", donor), Item("demo_b", reuse, "demo_a"), Item("demo_c", lost, "demo_gone")], {})
    assert [p.id for p in profiles] == ["demo_a", "demo_b"] and profiles[1].roles["mixed"].args["--tp-size"] == 2
    assert refusals == ["demo_c: its deployment_from 'demo_gone' is neither imported nor a profile of the collection"]
