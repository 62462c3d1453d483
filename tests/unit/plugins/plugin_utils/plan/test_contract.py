"""The input contract (plugins/plugin_utils/plan/_contract.py): pure Python, no Ansible."""

from __future__ import annotations

import pytest

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _contract as contract
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import Collector, PlanError
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._planner import plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import load_profile
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._topology import build_inventory

PD32 = "deepseek_r1_a3_32c_pd_6k_1k6_20ms"
MIXED_2NODE = "qwen3_480b_a3_16c_mixed_3k5_1k5_50ms"
MIXED_1NODE = "qwen3_30b_a3_1c_mixed_3k5_1k5_50ms"


def check(fn, value, *args, **kwargs):
    errors = Collector()
    result = fn(value, errors, contract.Where("v", "g", "h"), *args, **kwargs)
    return result, [f.message for f in errors.findings]


@pytest.mark.parametrize("value", ["10.0.0.1", "node-1.lab", "node_1", "a3-prefill-0", "198.51.100.11", "Host.Example."])
def test_addresses_accepted(value):
    assert check(contract.address, value) == (value, [])


@pytest.mark.parametrize("value, why", [
    ("", "blank"), (" ", "blank"), ("10.9.3.1 ", "neither"), ("10.9.3.1 --evil", "neither"), ("h;touch x", "neither"),
    ("10.0.0.256", "neither"), ("010.0.0.1", "neither"), ("fd00::1", "IPv6"), ("[fd00::1]", "IPv6"),
    ("::ffff:10.0.0.1", "IPv6"), ("10.0.0.1:80", "with a port (80)"), ("node1:8000", "with a port (8000)"),
    ("[fd00::1]:80", "IPv6"), ("a..b", "neither"), ("-a.b", "neither"),
    ("a\nb", "control"), ("a\x00b", "control"), (["10.0.0.1"], "got a list"), (True, "got a boolean"),
    (10, "got an integer"), ("a" * 300, "neither"), ("h\u00f6st", "neither"),
])
def test_addresses_refused(value, why):
    result, messages = check(contract.address, value)
    assert result is None and len(messages) == 1 and why in messages[0]


def test_address_keys_compare_spellings_of_one_address():
    assert contract.address_key("Node1.Lab.") == contract.address_key("node1.lab")
    assert contract.is_loopback("127.0.0.2") and contract.is_loopback("localhost") and not contract.is_loopback("10.0.0.1")
    assert contract.is_unspecified("0.0.0.0") and not contract.is_unspecified("10.0.0.1")


@pytest.mark.parametrize("value, ok", [
    ("ib0", True), ("enp189s0f0", True), ("eth0.100", True), ("a" * 15, True), ("a" * 16, False), ("eth0; id", False),
    ("eth0/1", False), ("eth0:1", False), ("ib0,ib1", False), (".", False), ("..", False), ("", False),
    ("eth\t0", False), ("\u00e9th0", False), (["ib0"], False),
])
def test_nic_follows_linux_interface_name_rules(value, ok):
    result, messages = check(contract.nic, value)
    assert (result == value and not messages) if ok else (result is None and len(messages) == 1)


@pytest.mark.parametrize("value, ok", [
    ("A", True), ("_a1", True), ("HCCL_BUFFSIZE", True), ("NAME\n", False), ("1A", False), ("A-B", False),
    ("A B", False), ("", False), ("X=1", False), (1, False),
])
def test_env_names_by_full_match(value, ok):
    assert (check(contract.env_name, value)[0] is not None) is ok


@pytest.mark.parametrize("value, no_blanks, ok", [
    ("/etc/sglang", True, True), ("/opt/my dir", False, True), ("/opt/my dir", True, False), ("etc", False, False),
    ("/x\nExecStartPre=/bin/id", False, False), ("/opt/%h", True, False), ("/" + "a" * 5000, False, False),
    ("/a\x00", False, False), (["/a"], False, False), ("", False, False),
    # What systemd would unquote, unescape, expand or split in a unit's command line.
    ("/opt/it's", True, False), ('/opt/"x"', True, False), ("/opt/a\\b", True, False), ("/opt/$HOME", True, False),
    ("/opt/a;b", True, False), ("/opt/a\tb", True, False), ("/opt/it's", False, True),
])
def test_absolute_paths(value, no_blanks, ok):
    assert (check(contract.absolute_path, value, no_blanks=no_blanks)[0] is not None) is ok


@pytest.mark.parametrize("value, ok", [(10, True), ("10", True), (0, True), (3600, True), (3601, False), (-1, False),
                                       ("1; id", False), (True, False), (1.5, False), ("", False), (None, False)])
def test_integers_in_range(value, ok):
    assert (check(contract.integer, value, 0, 3600)[0] is not None) is ok


@pytest.mark.parametrize("value, ok", [("python3", True), ("/opt/sglang/bin/python3", True), ("python3.11", True),
                                       ("python3 -c x", False), ("/opt/my venv/python3", False), ("", False),
                                       ("$(id)", False), (["python3"], False)])
def test_interpreters(value, ok):
    assert (check(contract.command, value)[0] is not None) is ok


def inventory(mixed=2, **variables):
    names = [f"m{i}" for i in range(mixed)]
    hostvars = {n: {"sglang_host_ip": f"10.3.0.{i + 1}", "sglang_nic": "ib0"} for i, n in enumerate(names)}
    variables.setdefault("sglang_model_path", "/models/m")
    variables.setdefault("sglang_draft_model_path", "/models/d")
    return build_inventory({"mixed": names}, hostvars, variables)


def test_user_values_are_taken_literally_and_unknown_placeholders_do_not_crash():
    inv = inventory(sglang_overrides={"mixed": {
        "args": {"--served-model-name": "{port}-{no_such}", "--cuda-graph-bs": ["{host}", 8]},
        "env": {"MY_TAG": "{memfabric_store_url}", "MY_NUM": 7}}})
    p = plan(load_profile(MIXED_2NODE), inv)
    svc = p.hosts["m0"].services[0]
    i = svc.argv.index("--served-model-name")
    assert svc.argv[i + 1] == "{port}-{no_such}"
    i = svc.argv.index("--cuda-graph-bs")
    assert svc.argv[i + 1:i + 3] == ["{host}", "8"]
    assert svc.env["MY_TAG"] == "{memfabric_store_url}" and svc.env["MY_NUM"] == "7"
    # Plain str, not a subclass (Ansible's tagged strings): exact types on purpose.
    assert type(svc.env["MY_TAG"]) is str and all(type(a) is str for a in svc.argv)  # pylint: disable=unidiomatic-typecheck


def test_model_path_with_braces_is_literal():
    p = plan(load_profile(MIXED_2NODE), inventory(sglang_model_path="/models/{port}"))
    argv = p.hosts["m0"].services[0].argv
    assert argv[argv.index("--model-path") + 1] == "/models/{port}"


def test_every_problem_of_the_contract_is_listed_at_once():
    inv = build_inventory(
        {"mixed": ["m0", "m1"], "prefill": []},
        {"m0": {"sglang_host_ip": "127.0.0.1", "sglang_nic": "eth0; id", "sglang_restart_sec": "x"},
         "m1": {"sglang_host_ip": "fd00::1", "sglang_nic": "ib0", "sglang_libexec_dir": "/a b"}},
        {"sglang_model_path": ["/m"], "sglang_overrides": {
            "mixed": {"env": {"NAME\n": "1", "HCCL_SOCKET_IFNAME": "x", "B": True}, "args": {"--x": False}},
            "prefill": {}, "router": {}}})
    with pytest.raises(PlanError) as exc:
        plan(load_profile(MIXED_2NODE), inv)
    got = {(f.host, f.variable) for f in exc.value.findings}
    assert {("m0", "sglang_nic"), ("m0", "sglang_restart_sec"), ("m1", "sglang_host_ip"), ("m1", "sglang_libexec_dir"),
            ("m0", "sglang_host_ip"), (None, "sglang_model_path"), (None, "sglang_overrides.mixed.env"),
            (None, "sglang_overrides.mixed.env.HCCL_SOCKET_IFNAME"), (None, "sglang_overrides.mixed.env.B"),
            (None, "sglang_overrides.mixed.args.--x"), (None, "sglang_overrides.prefill"),
            (None, "sglang_overrides.router")} <= got


def test_bootstrap_ports_of_every_instance_stay_in_range():
    profile = load_profile(PD32)
    groups = {"prefill": ["p0", "p1", "p2"], "decode": ["d0", "d1"], "router": ["r0"]}
    hostvars = {n: {"sglang_host_ip": f"10.0.0.{i + 1}", "sglang_nic": "ib0"}
                for i, n in enumerate(["p0", "p1", "p2", "d0", "d1", "r0"])}
    inv = build_inventory(groups, hostvars, {"sglang_model_path": "/m", "sglang_overrides": {
        "prefill": {"args": {"--disaggregation-bootstrap-port": 65534}}}})
    with pytest.raises(PlanError) as exc:
        plan(profile, inv)
    assert [(f.host, f.message) for f in exc.value.findings] == [
        ("p2", "bootstrap port 65534 + instance 2 = 65536 is above 65535")]


def test_port_clash_is_per_address_not_per_inventory_name():
    profile = load_profile(MIXED_1NODE)
    server_port = profile.roles["mixed"].port
    inv = build_inventory({"mixed": ["m0"], "router": ["r0"]},
                          {"m0": {"sglang_host_ip": "10.0.0.1"}, "r0": {"sglang_host_ip": "10.0.0.1"}},
                          {"sglang_model_path": "/m", "sglang_draft_model_path": "/d",
                           "sglang_overrides": {"router": {"args": {"--port": server_port}}}})
    with pytest.raises(PlanError) as exc:
        plan(profile, inv)
    assert [(f.host, f.variable) for f in exc.value.findings] == [("r0", "port")]
    # The same router port on a machine of its own is fine.
    inv = build_inventory({"mixed": ["m0"], "router": ["r0"]},
                          {"m0": {"sglang_host_ip": "10.0.0.1"}, "r0": {"sglang_host_ip": "10.0.0.2"}},
                          {"sglang_model_path": "/m", "sglang_draft_model_path": "/d",
                           "sglang_overrides": {"router": {"args": {"--port": server_port}}}})
    plan(profile, inv)


def test_loopback_is_fine_for_a_single_node_instance_but_not_for_rank_0_of_two():
    profile = load_profile(MIXED_1NODE)
    plan(profile, build_inventory({"mixed": ["m0"]}, {"m0": {"sglang_host_ip": "127.0.0.1"}},
                                  {"sglang_model_path": "/m", "sglang_draft_model_path": "/d"}))
    with pytest.raises(PlanError) as exc:
        plan(load_profile(MIXED_2NODE), build_inventory(
            {"mixed": ["m0", "m1"]}, {"m0": {"sglang_host_ip": "127.0.0.1", "sglang_nic": "lo"},
                                      "m1": {"sglang_host_ip": "10.0.0.2", "sglang_nic": "ib0"}},
            {"sglang_model_path": "/m"}))
    assert [(f.host, f.variable) for f in exc.value.findings] == [("m0", "sglang_host_ip")]


def test_secrets_reach_the_plan_as_flag_names_only():
    profile = load_profile(MIXED_1NODE)
    inv = build_inventory({"mixed": ["m0"], "router": ["r0"]},
                          {"m0": {"sglang_host_ip": "10.0.0.1"}, "r0": {"sglang_host_ip": "10.0.0.2"}},
                          {"sglang_model_path": "/m", "sglang_draft_model_path": "/d",
                           "sglang_secrets": {"mixed": {"--api-key": "hunter2"}, "router": {"--api-key": "hunter3"}}})
    p = plan(profile, inv)
    assert "hunter" not in repr(p.as_dict())
    assert [s.secret_flags for h in p.hosts.values() for s in h.services] == [["--api-key"], ["--api-key"]]
    assert all("--api-key" not in s.argv for h in p.hosts.values() for s in h.services)


@pytest.mark.parametrize("secrets, variable", [
    ({"prefill": {"--api-key": "k"}}, "sglang_secrets.prefill"),
    ({"mixed": {"--api-key": ""}}, "sglang_secrets.mixed.--api-key"),
    ({"mixed": {"--api-key": ["k"]}}, "sglang_secrets.mixed.--api-key"),
    ({"mixed": {"api-key": "k"}}, "sglang_secrets.mixed"),
    ({"mixed": {"--no-such-flag": "k"}}, "sglang_secrets.mixed.--no-such-flag"),
    ({"mixed": ["--api-key"]}, "sglang_secrets.mixed"),
    (["k"], "sglang_secrets"),
])
def test_bad_secrets_are_named_without_their_value(secrets, variable):
    inv = build_inventory({"mixed": ["m0"]}, {"m0": {"sglang_host_ip": "10.0.0.1"}},
                          {"sglang_model_path": "/m", "sglang_draft_model_path": "/d", "sglang_secrets": secrets})
    with pytest.raises(PlanError) as exc:
        plan(load_profile(MIXED_1NODE), inv)
    assert [f.variable for f in exc.value.findings] == [variable]
    assert "'k'" not in str(exc.value)


def test_a_refused_nic_is_reported_once():
    inv = build_inventory({"mixed": ["m0", "m1"]},
                          {"m0": {"sglang_host_ip": "10.0.0.1", "sglang_nic": "eth0; id"},
                           "m1": {"sglang_host_ip": "10.0.0.2", "sglang_nic": "ib0"}},
                          {"sglang_model_path": "/m"})
    with pytest.raises(PlanError) as exc:
        plan(load_profile(MIXED_2NODE), inv)
    assert [(f.host, f.variable) for f in exc.value.findings] == [("m0", "sglang_nic")]


def preflight(variables):
    errors = Collector()
    got = contract.preflight_settings(variables, errors)
    return got, [(f.variable, f.message) for f in errors.findings]


def test_preflight_checks_default_to_fail_and_take_fail_warn_off():
    got, problems = preflight({})
    assert problems == [] and got["weights"] == "quick"
    assert got["checks"] == {name: "fail" for name in ("npu_link", "npu_net_health", "npu_ip", "npu_tls", "npu_ping",
                                                       "npu_health", "weights")}
    # A bare YAML off is false.
    got, problems = preflight({"sglang_preflight_checks": {"npu_tls": "warn", "npu_ping": False},
                               "sglang_preflight_weights": "full"})
    assert problems == [] and got["checks"]["npu_tls"] == "warn" and got["checks"]["npu_ping"] == "off"
    assert got["weights"] == "full"


@pytest.mark.parametrize("variables, variable, why", [
    ({"sglang_preflight_checks": "off"}, "sglang_preflight_checks", "must be a mapping"),
    ({"sglang_preflight_checks": {"npu_tsl": "off"}}, "sglang_preflight_checks.npu_tsl", "not a preflight check"),
    ({"sglang_preflight_checks": {"npu_link": "skip"}}, "sglang_preflight_checks.npu_link", "fail, warn, off"),
    ({"sglang_preflight_checks": {"npu_link": True}}, "sglang_preflight_checks.npu_link", "got a boolean"),
    ({"sglang_preflight_checks": {"a\nb": "off"}}, "sglang_preflight_checks.'a\\nb'", "not a preflight check"),
    ({"sglang_preflight_weights": "all"}, "sglang_preflight_weights", "quick, full"),
])
def test_preflight_settings_refused(variables, variable, why):
    _unused, problems = preflight(variables)
    assert len(problems) == 1 and problems[0][0] == variable and why in problems[0][1]


def test_the_plan_carries_the_preflight_settings_and_the_hardware():
    profile = load_profile(MIXED_1NODE)
    inv = build_inventory({"mixed": ["m0"], "router": ["r0"]}, {"m0": {"sglang_host_ip": "10.0.0.1"},
                                                                "r0": {"sglang_host_ip": "10.0.0.2"}},
                          {"sglang_model_path": "/m", "sglang_draft_model_path": "/d",
                           "sglang_preflight_checks": {"weights": "warn"}})
    got = plan(profile, inv).as_dict()
    assert got["hardware"] == "A3" and got["preflight"]["checks"]["weights"] == "warn"
    with pytest.raises(PlanError) as exc:
        plan(profile, build_inventory({"mixed": ["m0"]}, {"m0": {"sglang_host_ip": "10.0.0.1"}},
                                      {"sglang_model_path": "/m", "sglang_draft_model_path": "/d",
                                       "sglang_preflight_weights": 1}))
    assert "sglang_preflight_weights" in str(exc.value)


def test_nearest_names_the_closest_known_name_or_none():
    known = {"--mem-fraction-static", "--max-running-requests", "--policy"}
    assert contract.nearest("--mem-fraction-statik", known) == "--mem-fraction-static"
    assert contract.nearest("--max-runing-requests", known) == "--max-running-requests"
    assert contract.nearest("--zzz-qqq", known) is None
    assert contract.nearest("--polcy", []) is None
