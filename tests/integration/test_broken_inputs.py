"""Broken inventories, profiles and overrides: each stops the deployment playbook on the controller,
before any host task runs, with a message naming the group, host and variable at fault.

The hosts of these inventories do not exist: had any play after the plan started, it would have
tried to reach them; the tests assert no later play began.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
pytestmark = pytest.mark.ansible

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
     "variable 'sglang_overrides.decode.args.-max-running-requests': profile 'inventory': '-max-running-requests' "
     "is not a full --flag name"),
    ("typo'd flag in an override", with_(PD32, override("decode", "args", {"--max-runing-requests": 8})),
     "group 'decode', variable 'sglang_overrides.decode.args.--max-runing-requests': sglang 0.5.6.post2 has no "
     "option --max-runing-requests"),
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
]


def inventory_file(case: dict, path: Path) -> Path:
    children = {group: {"hosts": hosts} for group, hosts in case["groups"].items()}
    path.write_text(yaml.safe_dump({"all": {"vars": case["vars"], "children": children}}))
    return path


@pytest.mark.parametrize("name, case, expected", CASES, ids=[c[0] for c in CASES])
def test_broken_input_stops_before_any_host_task(name: str, case: dict, expected: str, tmp_path: Path) -> None:
    inv = inventory_file(case, tmp_path / "inventory.yml")
    env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_DEPRECATION_WARNINGS="0")
    proc = subprocess.run(
        [str(BIN / "ansible-playbook"), "-i", str(inv), "playbooks/deploy.yml", "-e", f"sglang_profile={case['profile']}"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    assert expected in out, out[-3000:]
    # Only the plan play ran: no play over inventory hosts started.
    plays = [line for line in out.splitlines() if line.startswith("PLAY [")]
    assert plays == ["PLAY [Plan the SGLang deployment] " + "*" * (len(plays[0]) - 34)] if plays else False, plays


def test_there_are_at_least_25_cases() -> None:
    assert len(CASES) >= 25
