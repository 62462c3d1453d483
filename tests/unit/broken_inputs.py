"""The broken-input table: inventories, profiles and overrides the plan refuses, each with the exact text of
its refusal (the group, host and variable at fault, and what is wrong).

Every case runs through the plan's inputs as Ansible gives them (plugins/plugin_utils/plan/_inputs.py: the
inventory's all-vars reach every host and the play, group vars and host vars only their hosts) in the unit
test tests/unit/plugins/plugin_utils/plan/test_refused_inputs.py; a few run end to end through ansible-playbook
in tests/integration/test_broken_inputs.py.
"""

from __future__ import annotations

import copy
from typing import Any, Callable

PD32 = {  # deepseek_r1_pd32: 2 single-node prefill, one 2-node decode instance, router
    "profile": "deepseek_r1_pd32",
    "vars": {"sglang_model_path": "/data/m"},
    "groups": {
        "prefill": {"p0": {"sglang_host_ip": "10.9.1.1"}, "p1": {"sglang_host_ip": "10.9.1.2"}},
        "decode": {"d0": {"sglang_host_ip": "10.9.2.1", "sglang_nic": "ib0"},
                   "d1": {"sglang_host_ip": "10.9.2.2", "sglang_nic": "ib0"}},
        "router": {"r0": {"sglang_host_ip": "10.9.9.1"}},
    },
}
PD24 = {  # qwen3_235b_a3_24c_pd_3k5_1k5_50ms: EAGLE3 + recorded expert distribution
    "profile": "qwen3_235b_a3_24c_pd_3k5_1k5_50ms",
    "vars": {"sglang_model_path": "/data/m", "sglang_draft_model_path": "/data/d",
             "sglang_init_expert_location": "/data/e.pt"},
    "groups": {
        "prefill": {"p0": {"sglang_host_ip": "10.9.1.1"}},
        "decode": {"d0": {"sglang_host_ip": "10.9.2.1", "sglang_nic": "ib0"},
                   "d1": {"sglang_host_ip": "10.9.2.2", "sglang_nic": "ib0"}},
        "router": {"r0": {"sglang_host_ip": "10.9.9.1"}},
    },
}
MIXED = {  # qwen3_480b_a3_16c_mixed_3k5_1k5_50ms: one PD-mixed instance on 2 nodes
    "profile": "qwen3_480b_a3_16c_mixed_3k5_1k5_50ms",
    "vars": {"sglang_model_path": "/data/m"},
    "groups": {"mixed": {"m0": {"sglang_host_ip": "10.9.3.1", "sglang_nic": "ib0"},
                         "m1": {"sglang_host_ip": "10.9.3.2", "sglang_nic": "ib0"}}},
}

ONE_CARD = {  # qwen3_30b_a3_1c_mixed_3k5_1k5_50ms: a single-node PD-mixed instance on 2 of the 16 dies
    "profile": "qwen3_30b_a3_1c_mixed_3k5_1k5_50ms",
    "vars": {"sglang_model_path": "/data/m", "sglang_draft_model_path": "/data/d"},
    "groups": {"mixed": {"m0": {"sglang_host_ip": "10.9.3.1"}}},
}


def with_(base: dict, change: Callable[[dict], Any]) -> dict:
    case = copy.deepcopy(base)
    change(case)
    return case


def override(role: str, kind: str, values: dict) -> Callable[[dict], None]:
    return lambda c: c["vars"].setdefault("sglang_overrides", {}).setdefault(role, {}).setdefault(kind, {}).update(values)


def setvar(name: str, value: Any) -> Callable[[dict], None]:
    return lambda c: c["vars"].__setitem__(name, value)


def hostvar(group: str, host: str, name: str, value: Any) -> Callable[[dict], None]:
    def change(c):
        if value is None:
            c["groups"][group][host].pop(name, None)
        else:
            c["groups"][group][host][name] = value
    return change


# (case id, inventory, expected text: the group / host / variable naming and what is wrong)
CASES = [
    ("decode hosts not a multiple of nnodes",
     with_(PD32, lambda c: c["groups"]["decode"].update(d2={"sglang_host_ip": "10.9.2.3", "sglang_nic": "ib0"})),
     "group 'decode', host 'd2', variable 'roles.decode.nnodes': 3 hosts is not a multiple"),
    ("empty prefill group", with_(PD32, lambda c: c["groups"].pop("prefill")),
     "group 'prefill': the profile deploys prefill servers but the group is empty"),
    ("misspelled prefill group", with_(PD32, lambda c: c["groups"].update(prefil=c["groups"].pop("prefill"))),
     "sglang plan rejected: group 'prefil': is not a group of this collection (prefill, decode, mixed, router): its "
     "hosts p0, p1 are planned nowhere; did you mean 'prefill'?"),
    ("misspelled router group", with_(PD32, lambda c: c["groups"].update(routers=c["groups"].pop("router"))),
     "sglang plan rejected: group 'routers': is not a group of this collection (prefill, decode, mixed, router): "
     "its host r0 is planned nowhere; did you mean 'router'?"),
    ("PD without router", with_(PD32, lambda c: c["groups"].pop("router")),
     "group 'router': PD separation needs a router host"),
    ("host in two server groups", with_(PD32, lambda c: c["groups"]["decode"].update(p1={"sglang_nic": "ib0"})),
     "group 'decode', host 'p1': host is in both 'prefill' and 'decode'"),
    ("two hosts with one address", with_(PD32, hostvar("decode", "d1", "sglang_host_ip", "10.9.2.1")),
     "host 'd1', variable 'sglang_host_ip': address 10.9.2.1 is also the address of host 'd0'"),
    ("multi-node rank without NIC", with_(PD32, hostvar("decode", "d1", "sglang_nic", None)),
     "group 'decode', host 'd1', variable 'sglang_nic'"),
    ("missing model path", with_(PD32, lambda c: c["vars"].pop("sglang_model_path")),
     "variable 'sglang_model_path'"),
    ("EAGLE3 without draft model", with_(PD24, lambda c: c["vars"].pop("sglang_draft_model_path")),
     "variable 'sglang_draft_model_path'"),
    ("expert distribution missing", with_(PD24, lambda c: c["vars"].pop("sglang_init_expert_location")),
     "variable 'sglang_init_expert_location'"),
    ("unknown profile", with_(PD32, lambda c: c.update(profile="deepseek_r1_pd33")),
     "variable 'sglang_profile': unknown profile 'deepseek_r1_pd33'"),
    ("profile id with path characters", with_(PD32, lambda c: c.update(profile="../etc/passwd")),
     "variable 'sglang_profile': '../etc/passwd' is not a profile id"),
    ("mixed hosts in a PD deployment",
     with_(PD32, lambda c: c["groups"].update(mixed={"m0": {"sglang_host_ip": "10.9.3.1"}})),
     "group 'mixed', host 'm0': the profile has no mixed servers"),
    ("prefill hosts in a PD-mixed deployment",
     with_(MIXED, lambda c: c["groups"].update(prefill={"p0": {"sglang_host_ip": "10.9.1.1"}})),
     "group 'prefill', host 'p0': the profile has no prefill servers"),
    ("2-node mixed instance with 3 hosts",
     with_(MIXED, lambda c: c["groups"]["mixed"].update(m2={"sglang_host_ip": "10.9.3.3", "sglang_nic": "ib0"})),
     "group 'mixed', host 'm2', variable 'roles.mixed.nnodes'"),
    ("single-dash flag in an override", with_(PD32, override("decode", "args", {"-max-running-requests": 8})),
     "group 'decode', variable 'sglang_overrides.decode.args.-max-running-requests': the key "
     "'-max-running-requests' is not a full --flag name: write '--max-running-requests'"),
    ("override key without dashes", with_(PD32, override("prefill", "args", {"tp-size": 4})),
     "group 'prefill', variable 'sglang_overrides.prefill.args.tp-size': the key 'tp-size' is not a full --flag "
     "name: write '--tp-size'"),
    ("override key with underscores", with_(PD32, override("prefill", "args", {"tp_size": 4})),
     "variable 'sglang_overrides.prefill.args.tp_size': the key 'tp_size' is not a full --flag name: write "
     "'--tp-size'"),
    ("typo'd flag in an override", with_(PD32, override("decode", "args", {"--max-runing-requests": 8})),
     "group 'decode', variable 'sglang_overrides.decode.args.--max-runing-requests': sglang 0.5.6.post2 has no "
     "option --max-runing-requests; did you mean --max-running-requests?"),
    ("misspelt flag in an override names the release's nearest",
     with_(PD32, override("decode", "args", {"--mem-fraction-statik": 0.8})),
     "group 'decode', variable 'sglang_overrides.decode.args.--mem-fraction-statik': sglang 0.5.6.post2 has no "
     "option --mem-fraction-statik; did you mean --mem-fraction-static?"),
    ("misspelt router flag in an override names the router release's nearest",
     with_(PD32, override("router", "args", {"--polcy": "random"})),
     "group 'router', variable 'sglang_overrides.router.args.--polcy': sglang-router 0.3.0 has no option --polcy; "
     "did you mean --policy?"),
    ("unknown flag in an override with no near one", with_(PD32, override("decode", "args", {"--zzz-qqq": 1})),
     "group 'decode', variable 'sglang_overrides.decode.args.--zzz-qqq': sglang 0.5.6.post2 has no option --zzz-qqq "
     "(a typo, or a flag of another release?)"),
    ("override of an unknown role", with_(PD32, lambda c: c["vars"].update(sglang_overrides={"decoder": {}})),
     "variable 'sglang_overrides.decoder': unknown role 'decoder'"),
    ("override value that is a mapping", with_(PD32, override("decode", "args", {"--max-running-requests": {"a": 1}})),
     "variable 'sglang_overrides.decode.args.--max-running-requests'"),
    ("dp does not divide tp", with_(PD32, override("decode", "args", {"--dp-size": 12})),
     "group 'decode', variable '--dp-size': --dp-size 12 does not divide --tp-size 32"),
    ("dp-lm-head without DP attention", with_(PD32, override("decode", "args", {"--enable-dp-attention": None})),
     "group 'decode', variable '--enable-dp-lm-head'"),
    ("mem fraction out of range", with_(PD32, override("prefill", "args", {"--mem-fraction-static": 1.5})),
     "group 'prefill', variable '--mem-fraction-static'"),
    ("tp does not match the NPUs", with_(PD32, override("decode", "args", {"--tp-size": 16})),
     "group 'decode', variable '--tp-size': --tp-size 16 does not match 16 NPUs per A3 node x 2 node(s) = 32"),
    ("moe dense tp other than 1", with_(PD32, override("decode", "args", {"--moe-dense-tp-size": 2})),
     "group 'decode', variable '--moe-dense-tp-size'"),
    ("DeepEP dispatch above the hard limit",
     with_(PD32, override("decode", "env", {"SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK": "4096"})),
     "variable 'SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK': SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK=4096 "
     "exceeds DeepEP's hard limit of 1024"),
    ("DeepEP dispatch too small for the load",
     with_(PD32, override("decode", "env", {"SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK": "32"})),
     "SGLANG_DEEPEP_NUM_MAX_DISPATCH_TOKENS_PER_RANK=32 is too small: --max-running-requests 832 x draft tokens / "
     "--tp-size 32 = 78"),
    ("SpecV2 with top-k 2", with_(PD32, override("decode", "args", {"--speculative-eagle-topk": 2})),
     "group 'decode', variable '--speculative-eagle-topk'"),
    ("draft tokens not steps + 1", with_(PD32, override("decode", "args", {"--speculative-num-draft-tokens": 5})),
     "group 'decode', variable '--speculative-num-draft-tokens'"),
    ("router port clashes with a server on its host",
     with_(PD32, lambda c: (c["groups"]["router"].update(p0={}), c["groups"]["router"].pop("r0"),
                            override("router", "args", {"--port": 8000})(c))),
     "host 'p0', variable 'port': port 8000 is used twice"),
    ("A2 host in an A3 plan", with_(PD32, hostvar("prefill", "p1", "sglang_hardware", "A2")),
     "group 'prefill', host 'p1', variable 'sglang_hardware': host is an Atlas 800I A2"),
    ("unsupported SGLang release", with_(PD32, setvar("sglang_release", "0.4.0")),
     "variable 'sglang_release': sglang 0.4.0 is not a release this collection renders for"),
    ("flag newer than the chosen release", with_(PD24, setvar("sglang_release", "0.5.6.post2")),
     "variable 'sglang_release': --speculative-draft-model-quantization needs sglang >= 0.5.7"),
    ("computed flag overridden", with_(PD32, override("decode", "args", {"--dist-init-addr": "10.0.0.1:5000"})),
     "variable 'sglang_overrides.decode.args.--dist-init-addr': --dist-init-addr is computed by the planner"),
    ("port override that is not a port", with_(PD32, override("prefill", "args", {"--port": "http"})),
     "variable 'sglang_overrides.prefill.args.--port': --port must be a port number"),
    ("unsupported router release", with_(PD32, setvar("sglang_router_release", "0.2.0")),
     "variable 'sglang_router_release': sglang-router 0.2.0 is not a release"),
    # Dense packing (sglang_instances_per_host).
    ("replicas of a PD-separated role", with_(PD32, hostvar("prefill", "p0", "sglang_instances_per_host", 2)),
     "group 'prefill', host 'p0', variable 'sglang_instances_per_host': only a single-node PD-mixed instance that "
     "uses part of its node can run several replicas on a host; profile 'deepseek_r1_a3_32c_pd_3k5_1k5_50ms' runs prefill servers"),
    ("replicas of a multi-node instance", with_(MIXED, hostvar("mixed", "m1", "sglang_instances_per_host", "max")),
     "group 'mixed', host 'm1', variable 'sglang_instances_per_host': only a single-node PD-mixed instance that uses "
     "part of its node can run several replicas on a host; profile 'qwen3_480b_a3_16c_mixed_3k5_1k5_50ms' runs mixed "
     "instances of 2 nodes"),
    ("more replicas than the node holds", with_(ONE_CARD, hostvar("mixed", "m0", "sglang_instances_per_host", 9)),
     "group 'mixed', host 'm0', variable 'sglang_instances_per_host': 9 replicas of 2 NPUs do not fit the 16 NPUs "
     "of an A3 node: at most 8 (or set max)"),
    ("a replica count that is not a number", with_(ONE_CARD, hostvar("mixed", "m0", "sglang_instances_per_host", "all")),
     "group 'mixed', host 'm0', variable 'sglang_instances_per_host': must be an integer, got a string 'all'"),
    ("a hand-made device slice on a packed host",
     with_(ONE_CARD, lambda c: (hostvar("mixed", "m0", "sglang_instances_per_host", 2)(c),
                                override("mixed", "args", {"--base-gpu-id": 2})(c))),
     "group 'mixed', host 'm0', variable 'sglang_overrides.mixed.args.--base-gpu-id': gives every replica the same "
     "NPUs"),
    # CPU pinning (sglang_npu_cpus).
    ("an NPU's CPUs that are not a CPU list", with_(ONE_CARD, hostvar("mixed", "m0", "sglang_npu_cpus", {0: "0-3\nx"})),
     "group 'mixed', host 'm0', variable 'sglang_npu_cpus': NPU 0: '0-3\\nx' is not a CPU list (e.g. 0-23,48-71)"),
    ("an NPU index beyond a node", with_(ONE_CARD, hostvar("mixed", "m0", "sglang_npu_cpus", {16: "0-3"})),
     "group 'mixed', host 'm0', variable 'sglang_npu_cpus': key 16 is not an NPU index (0..15)"),
    ("NPU CPUs that are a list", with_(ONE_CARD, hostvar("mixed", "m0", "sglang_npu_cpus", ["0-3"])),
     "group 'mixed', host 'm0', variable 'sglang_npu_cpus': must be a mapping of NPU index to CPU list"),
    # Batched rolling restarts (sglang_restart_batch, read by the plan like every run value).
    ("a restart batch of no instance", with_(ONE_CARD, setvar("sglang_restart_batch", 0)),
     "variable 'sglang_restart_batch': must be within 1..100000, got 0"),
    ("a restart batch above 100 %", with_(ONE_CARD, setvar("sglang_restart_batch", "150%")),
     "variable 'sglang_restart_batch': must be a count of instances (1, 2, ...) or a percentage of them from 1% to "
     "100%, got '150%'"),
    ("a restart batch that is a word", with_(ONE_CARD, setvar("sglang_restart_batch", "half")),
     "variable 'sglang_restart_batch': must be a count of instances (1, 2, ...) or a percentage of them from 1% to "
     "100%, got 'half'"),
]


def rename_host(group: str, old: str, new: str) -> Callable[[dict], None]:
    return lambda c: c["groups"][group].__setitem__(new, c["groups"][group].pop(old))


# The input contract (plugins/plugin_utils/plan/_contract.py), class by class.
CONTRACT_CASES = [
    # The worst: values that would have run as code or added systemd directives.
    ("env name with a trailing newline", with_(MIXED, override("mixed", "env", {"NAME\n": "1"})),
     "group 'mixed', variable 'sglang_overrides.mixed.env': 'NAME\\n' is not an environment variable name"),
    ("env name with a shell command", with_(MIXED, override("mixed", "env", {"X=1; id #": "1"})),
     "variable 'sglang_overrides.mixed.env': 'X=1; id #' is not an environment variable name"),
    ("env name starting with a digit", with_(PD32, override("decode", "env", {"1ABC": "1"})),
     "'1ABC' is not an environment variable name"),
    ("libexec dir with a newline (host var)",
     with_(PD32, hostvar("decode", "d1", "sglang_libexec_dir", "/usr/x\nExecStartPre=/bin/id")),
     "group 'decode', host 'd1', variable 'sglang_libexec_dir': contains the control character '\\n'"),
    ("libexec dir with a blank (deployment var)", with_(PD32, setvar("sglang_libexec_dir", "/opt/my dir")),
     "host 'd0', variable 'sglang_libexec_dir': must not contain blanks"),
    ("libexec dir with a systemd specifier", with_(PD32, setvar("sglang_libexec_dir", "/opt/%h")),
     "variable 'sglang_libexec_dir': must not contain '%'"),
    ("etc dir relative", with_(PD32, hostvar("prefill", "p0", "sglang_etc_dir", "etc/sglang")),
     "host 'p0', variable 'sglang_etc_dir': must be an absolute path"),
    ("systemd dir a list", with_(PD32, hostvar("router", "r0", "sglang_systemd_dir", ["/etc/systemd/system"])),
     "group 'router', host 'r0', variable 'sglang_systemd_dir': must be an absolute path (a string), got a list"),
    ("restart sec as a host var with a command",
     with_(PD32, hostvar("decode", "d0", "sglang_restart_sec", "1; id")),
     "host 'd0', variable 'sglang_restart_sec': must be an integer, got a string '1; id'"),
    ("restart sec out of range", with_(PD32, hostvar("prefill", "p1", "sglang_restart_sec", 99999)),
     "host 'p1', variable 'sglang_restart_sec': must be within 0..3600, got 99999"),
    ("stack pin not a version", with_(PD32, hostvar("decode", "d0", "sglang_server_stack", {"torch": "2.8.0 ; x"})),
     "host 'd0', variable 'sglang_server_stack.torch': must be a version"),
    ("stack pins as a list", with_(PD32, hostvar("decode", "d1", "sglang_server_stack", ["torch==2.8.0"])),
     "host 'd1', variable 'sglang_server_stack': must be a mapping of package -> version"),
    ("watchdog interval zero", with_(PD32, hostvar("decode", "d1", "sglang_watchdog_interval", 0)),
     "host 'd1', variable 'sglang_watchdog_interval': must be within 1..3600, got 0"),
    ("watchdog python with a blank", with_(PD32, hostvar("decode", "d0", "sglang_watchdog_python", "/usr/bin/python3 -c x")),
     "host 'd0', variable 'sglang_watchdog_python'"),
    ("timeout stop sec a boolean", with_(MIXED, hostvar("mixed", "m1", "sglang_timeout_stop_sec", True)),
     "host 'm1', variable 'sglang_timeout_stop_sec': must be an integer, got a boolean"),
    ("limit nofile not a number", with_(MIXED, setvar("sglang_limit_nofile", "infinity")),
     "variable 'sglang_limit_nofile': must be an integer, got a string 'infinity'"),
    ("health readiness not a boolean", with_(PD32, hostvar("router", "r0", "sglang_health_readiness", "maybe")),
     "host 'r0', variable 'sglang_health_readiness': must be true or false"),
    ("sysctl dir with a newline", with_(PD32, setvar("sglang_sysctl_dir", "/etc/sysctl.d\n")),
     "variable 'sglang_sysctl_dir': contains the control character"),
    # Types: no list, mapping, boolean or blank stringified into argv or env.
    ("model path a list", with_(PD32, setvar("sglang_model_path", ["/data/m"])),
     "variable 'sglang_model_path': must be an absolute path (a string), got a list"),
    ("model path relative", with_(PD32, setvar("sglang_model_path", "data/m")),
     "variable 'sglang_model_path': must be an absolute path, got 'data/m'"),
    ("model path blank", with_(PD32, setvar("sglang_model_path", " ")),
     "variable 'sglang_model_path': must not be blank"),
    ("draft model path a mapping", with_(PD24, setvar("sglang_draft_model_path", {"path": "/data/d"})),
     "variable 'sglang_draft_model_path': must be an absolute path (a string), got a mapping"),
    ("expert location a boolean", with_(PD24, setvar("sglang_init_expert_location", True)),
     "variable 'sglang_init_expert_location': must be an absolute path (a string), got a boolean"),
    ("python a list", with_(PD32, setvar("sglang_python", ["/usr/bin/python3"])),
     "variable 'sglang_python': must be an interpreter path (a string), got a list"),
    ("python blank", with_(PD32, setvar("sglang_python", "")),
     "variable 'sglang_python': must not be blank"),
    ("router python with arguments", with_(PD32, setvar("sglang_router_python", "python3 -c 'import os'")),
     "variable 'sglang_router_python': must be an absolute path or a command name"),
    ("python path with a blank", with_(MIXED, setvar("sglang_python", "/opt/my venv/bin/python3")),
     "variable 'sglang_python': must not contain blanks"),
    ("release a number", with_(PD32, setvar("sglang_release", 0.5)),
     "variable 'sglang_release': must be a string (quote it"),
    ("release with a flag", with_(PD32, setvar("sglang_router_release", "0.3.0 --evil")),
     "variable 'sglang_router_release': is not a release version"),
    ("hardware in lower case", with_(PD32, hostvar("decode", "d0", "sglang_hardware", "a3")),
     "host 'd0', variable 'sglang_hardware': must be one of A2, A3"),
    ("overrides a list", with_(PD32, setvar("sglang_overrides", [{"decode": {}}])),
     "variable 'sglang_overrides': must be a mapping of role -> {args, env}, got a list"),
    ("override args a list", with_(PD32, lambda c: c["vars"].update(sglang_overrides={"decode": {"args": ["--x"]}})),
     "group 'decode', variable 'sglang_overrides.decode.args': must be a mapping of --flag: value, got a list"),
    ("override env a list", with_(PD32, lambda c: c["vars"].update(sglang_overrides={"decode": {"env": ["A=1"]}})),
     "group 'decode', variable 'sglang_overrides.decode.env': must be a mapping of NAME: value, got a list"),
    ("override of a role a string", with_(PD32, lambda c: c["vars"].update(sglang_overrides={"decode": "fast"})),
     "variable 'sglang_overrides.decode': must be a mapping with 'args' and/or 'env', got a string"),
    ("override with an unknown key", with_(PD32, lambda c: c["vars"].update(sglang_overrides={"decode": {"argz": {}}})),
     "variable 'sglang_overrides.decode': unknown keys ['argz']"),
    ("env value a boolean", with_(PD32, override("decode", "env", {"HCCL_BUFFSIZE": True})),
     "variable 'sglang_overrides.decode.env.HCCL_BUFFSIZE': a boolean is not an environment value"),
    ("env value a list", with_(PD32, override("decode", "env", {"HCCL_BUFFSIZE": ["700"]})),
     "variable 'sglang_overrides.decode.env.HCCL_BUFFSIZE': must be a string or a number, got a list"),
    ("env value with a newline", with_(PD32, override("prefill", "env", {"HCCL_BUFFSIZE": "700\nid"})),
     "variable 'sglang_overrides.prefill.env.HCCL_BUFFSIZE': contains the control character '\\n'"),
    ("flag value false", with_(PD32, override("decode", "args", {"--max-running-requests": False})),
     "variable 'sglang_overrides.decode.args.--max-running-requests': false is not a value"),
    ("flag value blank", with_(PD32, override("decode", "args", {"--served-model-name": ""})),
     "variable 'sglang_overrides.decode.args.--served-model-name': must not be blank"),
    ("flag value list holding a mapping", with_(PD32, override("decode", "args", {"--cuda-graph-bs": [8, {"a": 1}]})),
     "variable 'sglang_overrides.decode.args.--cuda-graph-bs[1]': list items must be strings or numbers"),
    ("flag value with a tab", with_(PD32, override("decode", "args", {"--served-model-name": "a\tb"})),
     "variable 'sglang_overrides.decode.args.--served-model-name': contains the control character '\\t'"),
    ("value that cannot be templated", with_(PD32, setvar("sglang_model_path", "{{ no_such_variable }}")),
     "variable 'sglang_model_path': cannot be evaluated on the controller"),
    # Addresses: IPv4 or a DNS name, nothing else; rank 0 of a multi-node instance dialable.
    ("address with an option", with_(MIXED, hostvar("mixed", "m0", "sglang_host_ip", "10.9.3.1 --evil")),
     "group 'mixed', host 'm0', variable 'sglang_host_ip': is neither an IPv4 address nor a host name"),
    ("address with a shell command", with_(MIXED, hostvar("mixed", "m1", "sglang_host_ip", "h;touch x")),
     "host 'm1', variable 'sglang_host_ip': is neither an IPv4 address nor a host name: 'h;touch x'"),
    ("address with a trailing blank", with_(MIXED, hostvar("mixed", "m1", "sglang_host_ip", "10.9.3.1 ")),
     "host 'm1', variable 'sglang_host_ip': is neither an IPv4 address nor a host name: '10.9.3.1 '"),
    ("address blank", with_(PD32, hostvar("prefill", "p0", "sglang_host_ip", "")),
     "host 'p0', variable 'sglang_host_ip': must not be blank"),
    ("address a list", with_(PD32, hostvar("prefill", "p1", "sglang_host_ip", ["10.9.1.2"])),
     "host 'p1', variable 'sglang_host_ip': must be an address (a string), got a list"),
    ("address out of range", with_(PD32, hostvar("prefill", "p1", "sglang_host_ip", "10.9.1.256")),
     "host 'p1', variable 'sglang_host_ip': is neither an IPv4 address nor a host name"),
    ("IPv6 address", with_(PD32, hostvar("decode", "d0", "sglang_host_ip", "fd00::1")),
     "host 'd0', variable 'sglang_host_ip': IPv6 address 'fd00::1' is not supported"),
    ("bracketed IPv6 address", with_(PD32, hostvar("decode", "d1", "sglang_host_ip", "[fd00::2]")),
     "host 'd1', variable 'sglang_host_ip': IPv6 address '[fd00::2]' is not supported"),
    ("address with a port", with_(PD32, hostvar("prefill", "p0", "sglang_host_ip", "10.9.1.1:8000")),
     "group 'prefill', host 'p0', variable 'sglang_host_ip': '10.9.1.1:8000' is an address with a port (8000): "
     "sglang_host_ip takes an address alone (the profile sets every port); use '10.9.1.1'"),
    ("ansible_host with a port",
     with_(PD32, lambda c: c["groups"]["prefill"].update(p0={"ansible_host": "192.0.2.11:22"})),
     "host 'p0', variable 'ansible_host': '192.0.2.11:22' is an address with a port (22): ansible_host takes an "
     "address alone (ansible_port sets the port Ansible connects to); use '192.0.2.11'"),
    ("host name with a port", with_(MIXED, hostvar("mixed", "m1", "sglang_host_ip", "node2.lab:30000")),
     "host 'm1', variable 'sglang_host_ip': 'node2.lab:30000' is an address with a port (30000): sglang_host_ip "
     "takes an address alone (the profile sets every port); use 'node2.lab'"),
    ("ansible_host used as the address and malformed",
     with_(PD32, lambda c: c["groups"]["prefill"].update(p0={"ansible_host": "10.9.1.1 x"})),
     "host 'p0', variable 'ansible_host': is neither an IPv4 address nor a host name"),
    ("bind-all address as a server address", with_(PD32, hostvar("prefill", "p0", "sglang_host_ip", "0.0.0.0")),
     "host 'p0', variable 'sglang_host_ip': 0.0.0.0 is not an address peers or the router can dial"),
    ("loopback as rank 0 of a multi-node instance", with_(PD32, hostvar("decode", "d0", "sglang_host_ip", "127.0.0.1")),
     "group 'decode', host 'd0', variable 'sglang_host_ip': host is rank 0 of 2-node decode instance 0 with the "
     "loopback address 127.0.0.1"),
    ("localhost as rank 0 of a multi-node instance", with_(MIXED, hostvar("mixed", "m0", "sglang_host_ip", "localhost")),
     "host 'm0', variable 'sglang_host_ip': host is rank 0 of 2-node mixed instance 0 with the loopback address"),
    ("one address spelled twice", with_(PD32, lambda c: (hostvar("prefill", "p0", "sglang_host_ip", "node1.lab")(c),
                                                         hostvar("prefill", "p1", "sglang_host_ip", "NODE1.lab.")(c))),
     "host 'p1', variable 'sglang_host_ip': address NODE1.lab. is also the address of host 'p0'"),
    ("NIC with a shell command", with_(PD32, hostvar("decode", "d0", "sglang_nic", "eth0; id")),
     "host 'd0', variable 'sglang_nic': is not a Linux interface name ('eth0; id')"),
    ("NIC name too long", with_(PD32, hostvar("decode", "d1", "sglang_nic", "enp189s0f0abcdef")),
     "host 'd1', variable 'sglang_nic': is not a Linux interface name"),
    ("NIC with a slash", with_(MIXED, hostvar("mixed", "m0", "sglang_nic", "eth0/1")),
     "host 'm0', variable 'sglang_nic': is not a Linux interface name"),
    ("NIC '..'", with_(MIXED, hostvar("mixed", "m1", "sglang_nic", "..")),
     "host 'm1', variable 'sglang_nic': is not a Linux interface name"),
    ("NIC a list", with_(PD32, hostvar("decode", "d0", "sglang_nic", ["ib0"])),
     "host 'd0', variable 'sglang_nic': must be an interface name (a string), got a list"),
    ("non-ASCII inventory host name", with_(PD32, rename_host("prefill", "p1", "präfill-1")),
     "variable 'inventory_hostname': inventory host name must be ASCII letters"),
    ("inventory name that is no address", with_(PD32, lambda c: c["groups"]["router"].update({"r..1": {}})),
     "host 'r..1', variable 'inventory_hostname': is neither an IPv4 address nor a host name"),
    # Odd values: NUL bytes and absurd lengths.
    ("NUL byte in the model path", with_(PD32, setvar("sglang_model_path", "/data/m\x00x")),
     "variable 'sglang_model_path': contains the control character '\\x00'"),
    ("model path of 100 kB", with_(PD32, setvar("sglang_model_path", "/" + "a" * 100000)),
     "variable 'sglang_model_path': is 100001 characters long (at most 4096)"),
    ("model source is the model path", with_(PD32, setvar("sglang_model_source", "/data/m/")),
     "sglang plan rejected: variable 'sglang_model_source': is '/data/m/', the same directory as sglang_model_path: "
     "the weights would be staged onto themselves"),
    # Computed env values: set through the inventory, like computed flags.
    ("HCCL NIC overridden", with_(PD32, override("decode", "env", {"HCCL_SOCKET_IFNAME": "ib1"})),
     "variable 'sglang_overrides.decode.env.HCCL_SOCKET_IFNAME': HCCL_SOCKET_IFNAME is computed by the planner; "
     "set the host's sglang_nic instead"),
    ("GLOO NIC removed", with_(MIXED, override("mixed", "env", {"GLOO_SOCKET_IFNAME": None})),
     "variable 'sglang_overrides.mixed.env.GLOO_SOCKET_IFNAME': GLOO_SOCKET_IFNAME is computed by the planner"),
    ("MemFabric store URL overridden", with_(PD32, override("prefill", "env", {"ASCEND_MF_STORE_URL": "tcp://x:1"})),
     "variable 'sglang_overrides.prefill.env.ASCEND_MF_STORE_URL': ASCEND_MF_STORE_URL is computed by the planner"),
    # Ports: every computed port within 1..65535, clashes per address.
    ("bootstrap port past 65535 for the second instance",
     with_(PD32, override("prefill", "args", {"--disaggregation-bootstrap-port": 65535})),
     "group 'prefill', host 'p1', variable 'sglang_overrides.prefill.args.--disaggregation-bootstrap-port': "
     "bootstrap port 65535 + instance 1 = 65536 is above 65535"),
    ("port zero", with_(PD32, override("decode", "args", {"--port": 0})),
     "variable 'sglang_overrides.decode.args.--port': --port must be a port number, got 0"),
    ("port above 65535", with_(PD32, override("router", "args", {"--port": 70000})),
     "variable 'sglang_overrides.router.args.--port': --port must be a port number, got 70000"),
    ("router on a server's address under another name",
     with_(PD32, lambda c: (hostvar("router", "r0", "sglang_host_ip", "10.9.1.1")(c),
                            override("router", "args", {"--port": 8000})(c))),
     "variable 'port': port 8000 is used twice on address 10.9.1.1"),
    # Scope: an override nobody would read is an error, not ignored.
    ("override of a role the PD profile lacks", with_(PD32, override("mixed", "args", {"--max-running-requests": 8})),
     "group 'mixed', variable 'sglang_overrides.mixed': overrides a role this deployment does not run: the profile "
     "has no mixed servers"),
    ("override of prefill in a PD-mixed deployment", with_(MIXED, override("prefill", "env", {"A": "1"})),
     "variable 'sglang_overrides.prefill': overrides a role this deployment does not run"),
    ("router override without a router", with_(MIXED, override("router", "args", {"--policy": "round_robin"})),
     "group 'router', variable 'sglang_overrides.router': overrides a role this deployment does not run: there is "
     "no router host"),
    # Secrets: shape checked in the plan, values never shown.
    ("secret for a role the deployment does not run", with_(MIXED, setvar("sglang_secrets", {"router": {"--api-key": "k"}})),
     "variable 'sglang_secrets.router': not a role this deployment runs (mixed)"),
    ("secret value not a string", with_(PD32, setvar("sglang_secrets", {"router": {"--api-key": 12345678}})),
     "group 'router', variable 'sglang_secrets.router.--api-key': must be a string, got an integer (value not shown)"),
    ("secret value with a newline", with_(PD32, setvar("sglang_secrets", {"decode": {"--api-key": "hunter2\nx"}})),
     "variable 'sglang_secrets.decode.--api-key': must be a non-blank string without control characters"),
    ("secret flag unknown to the release", with_(PD32, setvar("sglang_secrets", {"prefill": {"--api-keys": "k"}})),
     "group 'prefill', variable 'sglang_secrets.prefill.--api-keys': sglang 0.5.6.post2 has no option --api-keys; "
     "did you mean --api-key?"),
    ("secret flag also given in the clear",
     with_(PD32, lambda c: (setvar("sglang_secrets", {"decode": {"--api-key": "k"}})(c),
                            override("decode", "args", {"--api-key": "k"})(c))),
     "variable 'sglang_overrides.decode.args.--api-key': --api-key is a secret: give it in sglang_secrets.decode.--api-key"),
]
CASES += CONTRACT_CASES


def groupvar(group: str, name: str, value: Any) -> Callable[[dict], None]:
    return lambda c: c.setdefault("group_vars", {}).setdefault(group, {}).__setitem__(name, value)


# Every variable goes through the settings table (plugins/plugin_utils/plan/_settings.py), class by class.
TABLE_CASES = [
    # Names the table does not hold: refused with the nearest known name, never silently ignored.
    ("misspelled host variable", with_(PD32, hostvar("decode", "d0", "sglang_hostip", "10.9.2.1")),
     "group 'decode', host 'd0', variable 'sglang_hostip': is not a variable of this collection; did you mean "
     "sglang_host_ip?"),
    ("misspelled deployment variable", with_(PD32, setvar("sglang_model_pth", "/data/m")),
     "variable 'sglang_model_pth': is not a variable of this collection; did you mean sglang_model_path?"),
    ("misspelled variable of a group", with_(PD32, groupvar("decode", "sglang_watchdog_intervall", 5)),
     "host 'd0', variable 'sglang_watchdog_intervall': is not a variable of this collection; did you mean "
     "sglang_watchdog_interval?"),
    # Deployment-wide values set for one group or host: the plan reads them once, the group's would be ignored.
    ("runtime set for one group", with_(PD32, groupvar("decode", "sglang_runtime", "container")),
     "group 'decode', host 'd0', variable 'sglang_runtime': is deployment-wide, read once for every host: set it "
     "for all hosts (group_vars/all, the inventory's all: vars or -e), not for one group or host; this host has "
     "'container', the deployment has none"),
    ("container engine set on one host",
     with_(PD32, lambda c: (setvar("sglang_container_engine", "podman")(c),
                            hostvar("prefill", "p1", "sglang_container_engine", "docker")(c))),
     "group 'prefill', host 'p1', variable 'sglang_container_engine': is deployment-wide, read once for every "
     "host: set it for all hosts (group_vars/all, the inventory's all: vars or -e), not for one group or host; "
     "this host has 'docker', the deployment's is 'podman'"),
    ("secrets set for one group", with_(PD32, groupvar("router", "sglang_secrets", {"router": {"--api-key": "hunter2"}})),
     "host 'r0', variable 'sglang_secrets': is deployment-wide, read once for every host: set it for all hosts "
     "(group_vars/all, the inventory's all: vars or -e), not for one group or host; this host has (values not "
     "shown), the deployment has none"),
    # Install and preflight settings of the wrong type or word; pip options in package lists.
    ("package list carrying a pip option",
     with_(PD32, hostvar("prefill", "p0", "sglang_server_packages", ["--index-url=http://mirror/simple", "sglang"])),
     "host 'p0', variable 'sglang_server_packages[0]': '--index-url=http://mirror/simple' is a pip option, not a "
     "requirement"),
    ("package list a string", with_(PD32, setvar("sglang_server_packages", "sglang==0.5.6")),
     "host 'd0', variable 'sglang_server_packages': must be a list of pip requirement specifiers, got a string"),
    ("package with a blank", with_(PD32, hostvar("decode", "d1", "sglang_server_packages", ["sglang ; rm -rf /"])),
     "host 'd1', variable 'sglang_server_packages[0]': is not a pip requirement specifier"),
    ("server install not a boolean", with_(PD32, hostvar("prefill", "p1", "sglang_server_install", "sometimes")),
     "host 'p1', variable 'sglang_server_install': must be true or false"),
    ("virtualenv command with a shell operator",
     with_(PD32, hostvar("decode", "d0", "sglang_server_virtualenv_command", "python3 -m venv && id")),
     "host 'd0', variable 'sglang_server_virtualenv_command': must be a command and plain words"),
    ("router version not a version", with_(PD32, hostvar("router", "r0", "sglang_router_version", "0.3.0; id")),
     "host 'r0', variable 'sglang_router_version': must be a version such as 0.3.1"),
    ("router install without a version", with_(PD32, hostvar("router", "r0", "sglang_router_install", True)),
     "host 'r0', variable 'sglang_router_version': sglang_router_install is true: set the exact sglang-router version"),
    ("preflight fail_on unknown word", with_(PD32, setvar("sglang_preflight_fail_on", "warning")),
     "variable 'sglang_preflight_fail_on': must be one of fail, warn, never, got a string 'warning'"),
    ("preflight skip not a boolean", with_(PD32, setvar("sglang_preflight_skip", "later")),
     "variable 'sglang_preflight_skip': must be true or false"),
    ("preflight probe timeout a word", with_(PD32, setvar("sglang_preflight_probe_timeout", "long")),
     "variable 'sglang_preflight_probe_timeout': must be an integer"),
    ("HBM ratio above 1", with_(PD32, setvar("sglang_preflight_min_hbm_free_ratio", 1.5)),
     "variable 'sglang_preflight_min_hbm_free_ratio': must be a number within 0..1"),
    ("watchdog backoff max below initial", with_(PD32, hostvar("decode", "d0", "sglang_watchdog_backoff_max", 10)),
     "host 'd0', variable 'sglang_watchdog_backoff_max': must be at least sglang_watchdog_backoff_initial (30), got 10"),
    # Secret-like flags only through sglang_secrets; the collection's own env names reserved.
    ("admin API key in the overrides", with_(PD32, override("router", "args", {"--admin-api-key": "hunter2"})),
     "group 'router', variable 'sglang_overrides.router.args.--admin-api-key': --admin-api-key is a secret: give it "
     "in sglang_secrets.router.--admin-api-key"),
    ("env name of the launcher's secrets", with_(PD32, override("decode", "env", {"SGLANG_SECRET_0": "x"})),
     "group 'decode', variable 'sglang_overrides.decode.env.SGLANG_SECRET_0': SGLANG_SECRET_0 is reserved"),
    ("env name of the container's NPUs", with_(MIXED, override("mixed", "env", {"ASCEND_VISIBLE_DEVICES": "0"})),
     "variable 'sglang_overrides.mixed.env.ASCEND_VISIBLE_DEVICES': ASCEND_VISIBLE_DEVICES is reserved"),
    # Paths that reach a systemd unit: nothing systemd would split, unquote, unescape or expand.
    ("etc dir with a quote", with_(PD32, hostvar("decode", "d0", "sglang_etc_dir", "/etc/sglang's")),
     "host 'd0', variable 'sglang_etc_dir': must not contain a quote"),
    ("libexec dir with a backslash", with_(PD32, setvar("sglang_libexec_dir", "/opt/a\\x2db")),
     "variable 'sglang_libexec_dir': must not contain a backslash"),
    ("watchdog state dir with a blank", with_(PD32, hostvar("decode", "d1", "sglang_watchdog_state_dir", "/var/lib/wd x")),
     "host 'd1', variable 'sglang_watchdog_state_dir': must not contain blanks"),
    ("watchdog python with a dollar", with_(PD32, hostvar("router", "r0", "sglang_watchdog_python", "/usr/bin/$PY")),
     "host 'r0', variable 'sglang_watchdog_python': must not contain '$'"),
    ("image archive missing on the controller",
     with_(PD32, lambda c: c["vars"].update(sglang_runtime="container", sglang_container_image="sglang:test",
                                            sglang_container_image_archive="/nonexistent/sglang-image.tar")),
     "variable 'sglang_container_image_archive': '/nonexistent/sglang-image.tar' is not a file on the controller"),
    ("container engine path relative",
     with_(PD32, lambda c: c["vars"].update(sglang_runtime="container", sglang_container_image="sglang:test",
                                            sglang_container_engine_path="bin/podman")),
     "variable 'sglang_container_engine_path': must be an absolute path"),
]
CASES += TABLE_CASES
