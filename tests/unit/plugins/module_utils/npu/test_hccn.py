"""hccn_tool parsers on published output (tests/fixtures/hccn_tool/README.md) and the stand-in hccn_tool run as a
subprocess against a temporary state directory.  Only loopback is pinged; every wait is bounded."""

from __future__ import annotations

import fcntl
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from ansible_collections.ascend.sglang.plugins.module_utils.npu._hccn import (
    device_query, is_busy, parse_hccn_conf, parse_ip, parse_link, parse_net_health, parse_ping, parse_tls,
)

TESTS = Path(__file__).resolve().parents[4]
FIXTURES = TESTS / "fixtures" / "hccn_tool"
HCCN_TOOL = TESTS / "standins" / "ascend" / "usr" / "local" / "Ascend" / "driver" / "tools" / "hccn_tool"
NO_IP = "Get ipconf failed, because no ip was preset there!"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


# --- parsers on published output -----------------------------------------------------------------------------

def test_link():
    assert parse_link(fixture("link_up.txt")) == "UP"
    assert parse_link(fixture("link_down.txt")) == "DOWN"
    assert parse_link("") is None
    # The -vnic query prints "vnic link status: UP": not the RoCE port.
    assert parse_link("vnic link status: UP\nvnic ipaddr: 192.168.1.199\n") is None


def test_net_health():
    assert parse_net_health(fixture("net_health_success.txt")) == "Success"
    assert parse_net_health(fixture("net_health_fault.txt")) == "Fault"
    assert parse_net_health(fixture("net_health_init.txt")) == "Init"
    assert parse_net_health("net health status: Receive timeout\n") == "Receive timeout"
    assert parse_net_health("net health status:Fault\n") == "Fault"  # as some older pages print it
    assert parse_net_health(fixture("busy.txt")) is None


def test_ip_set_and_unset():
    assert parse_ip(fixture("ip_set.txt")) == {"address": "29.1.112.213", "netmask": "255.255.0.0", "error": None}
    assert parse_ip(fixture("ip_unset_stderr.txt")) == {"address": None, "netmask": None, "error": NO_IP}
    assert parse_ip("")["error"] == "no ipaddr line"
    assert parse_ip("vnic ipaddr: 192.168.1.199\nvnic netmask: 255.255.255.0\n")["address"] is None


def test_tls():
    assert parse_tls(fixture("tls.txt")) == {"switch": 0, "preconfigured": 1, "alarm_days": 60}
    # Older drivers: no "tls preconfigured" field, certificate blocks after the switch line.
    assert parse_tls(fixture("tls_certs_no_preset_field.txt")) == {"switch": 0, "preconfigured": None,
                                                                   "alarm_days": 60}
    assert parse_tls("") == {"switch": None, "preconfigured": None, "alarm_days": None}


def test_ping_success():
    assert parse_ping(fixture("ping_success.txt")) == {"transmitted": 3, "received": 3, "loss_pct": 0.0,
                                                       "timeouts": []}


def test_ping_partial_loss_as_published_and_derived():
    # Published with a letter O for the lost seq: the summary still counts it, the seq is unknown.
    assert parse_ping(fixture("ping_partial_loss.txt")) == {"transmitted": 3, "received": 2, "loss_pct": 33.33,
                                                            "timeouts": []}
    assert parse_ping(fixture("ping_partial_loss_derived.txt"))["timeouts"] == [0]


def test_ping_total_loss_and_no_summary():
    assert parse_ping(fixture("ping_total_loss_derived.txt")) == {"transmitted": 3, "received": 0,
                                                                  "loss_pct": 100.0, "timeouts": [0, 1, 2]}
    assert parse_ping("recv time out seq:1\n1 packets transmitted, 0 received, 100.00% packet loss")["timeouts"] \
        == [1]
    assert parse_ping(fixture("busy.txt")) is None
    assert parse_ping("The ip address you configured is invalid!\n") is None


def test_busy():
    assert is_busy(fixture("busy.txt"))
    assert is_busy("hccn_tool is busy, please try again")  # the docs quote it without the full stop
    assert not is_busy(fixture("link_up.txt")) and not is_busy("")


def test_hccn_conf_as_published():
    conf = parse_hccn_conf(fixture("hccn.conf"))  # the "..." line of the page is skipped
    assert sorted(conf) == [0, 7]
    assert conf[0] == {"address": "29.1.137.205", "netmask": "255.255.0.0", "netdetect": "29.1.0.1",
                       "gateway": "29.1.0.1", "send_arp_status": "1"}
    assert conf[7]["address"] == "29.1.170.143"


def test_hccn_conf_ignores_comments_blank_and_garbage():
    text = ("# written by the operator\n\naddress_3=10.0.0.4\n  netmask_3 = 255.255.255.0  \n#address_4=1.2.3.4\n"
            "garbage line\naddress=10.0.0.9\n=1\naddress_x=1\naddress_3=10.0.0.5\n")
    assert parse_hccn_conf(text) == {3: {"address": "10.0.0.5", "netmask": "255.255.255.0"}}
    assert parse_hccn_conf("") == {}


# --- device_query: bounded retry while busy ------------------------------------------------------------------

class Script:
    """A run() that answers from a list (the last answer repeats) and records its calls."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.calls = []

    def __call__(self, argv):
        self.calls.append(list(argv))
        return self.answers[min(len(self.calls), len(self.answers)) - 1]


BUSY_ANSWER = (11, "hccn_tool is busy, please try again.\n", "")


def test_device_query_retries_while_busy():
    run, slept = Script(BUSY_ANSWER, BUSY_ANSWER, (0, "link status: UP\n", "")), []
    assert device_query(run, "hccn_tool", 3, ["-link", "-g"], sleep=slept.append) == (0, "link status: UP\n", "")
    assert run.calls == [["hccn_tool", "-i", "3", "-link", "-g"]] * 3
    assert slept == [0.2, 0.4]


def test_device_query_gives_up_after_the_bound():
    run, slept = Script(BUSY_ANSWER), []
    assert device_query(run, "hccn_tool", 0, ["-ip", "-g"], retries=3, pause=0.5, sleep=slept.append) == BUSY_ANSWER
    assert len(run.calls) == 4 and slept == [0.5, 1.0, 2.0]


def test_device_query_busy_on_stderr_and_no_retry_when_not_busy():
    run, slept = Script((1, "", "hccn_tool is busy, please try again."), (13, "", NO_IP)), []
    assert device_query(run, "t", 1, ["-ip", "-g"], sleep=slept.append) == (13, "", NO_IP)
    assert len(run.calls) == 2 and slept == [0.2]
    run, slept = Script((0, "net health status: Success\n", "")), []
    device_query(run, "t", 1, ["-net_health", "-g"], retries=0, sleep=slept.append)
    assert len(run.calls) == 1 and slept == []


# --- the stand-in hccn_tool --------------------------------------------------------------------------------

STATE = {
    "devices": {
        "0": {"ip": "10.90.0.1", "netmask": "255.255.0.0", "link": "UP", "net_health": "Success", "tls": 0},
        "1": {"ip": None, "link": "UP", "net_health": "Success", "tls": 0},
        "2": {"ip": "10.90.0.3", "netmask": "255.255.0.0", "link": "DOWN", "net_health": "Fault", "tls": 1,
              "tls_preconfigured": 0, "tls_alarm_days": 30},
    },
    "busy": {"3": 2},
}


@pytest.fixture
def standin(tmp_path):
    (tmp_path / "shape").write_text("a3\n")
    (tmp_path / "hccn.json").write_text(json.dumps(STATE))
    (tmp_path / "fabric.json").write_text(json.dumps({"10.90.0.1": "127.0.0.1", "10.90.0.3": "127.0.0.1"}))
    return tmp_path


def hccn(state_dir, *args):
    env = dict(os.environ, ASCEND_STANDIN_DIR=str(state_dir))
    done = subprocess.run([str(HCCN_TOOL), *args], env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    return done.returncode, done.stdout, done.stderr


def runner(state_dir):
    """device_query's run(): the stand-in as the preflight would call it (argv[0] is the tool)."""
    return lambda argv: hccn(state_dir, *argv[1:])


def icmp_socket_reason() -> str | None:
    """Why no ICMP socket can be opened here (None when one can): decides the loopback ping case."""
    reasons = []
    for kind in (socket.SOCK_DGRAM, socket.SOCK_RAW):
        try:
            socket.socket(socket.AF_INET, kind, socket.IPPROTO_ICMP).close()
            return None
        except OSError as exc:
            reasons.append(str(exc))
    return "; ".join(reasons)


def test_standin_is_an_executable_bash_script_in_front_of_its_python_implementation():
    assert os.access(HCCN_TOOL, os.X_OK)
    assert HCCN_TOOL.read_text().startswith("#!/bin/bash\n")
    assert (HCCN_TOOL.parent / "hccn_tool.py").is_file()


@pytest.mark.parametrize("health", ["Success", "Receive timeout", "Detect ip set"])
def test_the_fast_path_prints_what_the_implementation_prints(standin, health):
    """./hccn_tool answers the common queries from the flattened state; hccn_tool.py holds the behaviour: the
    same bytes and exit code for every query of every device, and again after the state is rewritten."""
    env = dict(os.environ, ASCEND_STANDIN_DIR=str(standin))

    def both(*args):
        fast = subprocess.run([str(HCCN_TOOL), *args], env=env, capture_output=True, text=True, timeout=600,
                              check=False)
        slow = subprocess.run([sys.executable, str(HCCN_TOOL.parent / "hccn_tool.py"), *args], env=env,
                              capture_output=True, text=True, timeout=600, check=False)
        return (fast.returncode, fast.stdout, fast.stderr), (slow.returncode, slow.stdout, slow.stderr)

    state = json.loads((standin / "hccn.json").read_text())
    state["devices"]["0"]["net_health"] = health
    (standin / "hccn.json").write_text(json.dumps(state))
    # Every device once; the other health answers on the device that carries them (each query is two processes,
    # and this file runs three times in CI).
    for device in ("0", "1", "2", "4", "16", "x") if health == "Success" else ("0",):
        for query in ("-link", "-net_health", "-ip", "-tls"):
            fast, slow = both("-i", device, query, "-g")
            assert fast == slow, (device, query)
    assert (standin / "hccn.flat").is_file()
    # The state changes (as a fault injection rewrites it): the fast path answers the new state.
    state["devices"]["0"].update(link="DOWN", tls=1)
    (standin / "hccn.json").write_text(json.dumps(state))
    for query in ("-link", "-tls"):
        fast, slow = both("-i", "0", query, "-g")
        assert fast == slow and ("DOWN" in fast[1] or "switch[1]" in fast[1])


def test_standin_queries_print_the_state(standin):
    rc, out, _unused = hccn(standin, "-i", "0", "-link", "-g")
    assert rc == 0 and parse_link(out) == "UP" and out == fixture("link_up.txt")
    rc, out, _unused = hccn(standin, "-i", "0", "-net_health", "-g")
    assert rc == 0 and parse_net_health(out) == "Success"
    rc, out, _unused = hccn(standin, "-i", "0", "-ip", "-g")
    assert rc == 0 and parse_ip(out) == {"address": "10.90.0.1", "netmask": "255.255.0.0", "error": None}
    rc, out, _unused = hccn(standin, "-i", "0", "-tls", "-g")
    assert rc == 0 and parse_tls(out) == {"switch": 0, "preconfigured": 1, "alarm_days": 60}
    assert out == fixture("tls.txt")
    rc, out, _unused = hccn(standin, "-i", "2", "-link", "-g")
    assert out == fixture("link_down.txt")
    assert parse_net_health(hccn(standin, "-i", "2", "-net_health", "-g")[1]) == "Fault"
    assert parse_tls(hccn(standin, "-i", "2", "-tls", "-g")[1]) == {"switch": 1, "preconfigured": 0,
                                                                    "alarm_days": 30}


def test_standin_no_ip_as_the_real_tool(standin):
    for device in ("1", "9"):  # ip null, and a device missing from the state
        rc, out, err = hccn(standin, "-i", device, "-ip", "-g")
        assert (rc, out, err) == (13, "", fixture("ip_unset_stderr.txt"))
        assert parse_ip(out + err)["error"] == NO_IP
    # A device missing from the state takes the unfavourable values.
    assert parse_link(hccn(standin, "-i", "9", "-link", "-g")[1]) == "DOWN"
    assert parse_net_health(hccn(standin, "-i", "9", "-net_health", "-g")[1]) == "Init"


def test_standin_device_ids_follow_the_shape(standin):
    assert hccn(standin, "-i", "16", "-link", "-g") == (4, "", fixture("invalid_device_stderr.txt"))
    assert hccn(standin, "-i", "x", "-link", "-g")[0] == 4
    assert hccn(standin, "-i", "15", "-link", "-g")[0] == 0
    (standin / "shape").write_text("a2\n")
    assert hccn(standin, "-i", "8", "-link", "-g")[0] == 4
    assert hccn(standin, "-i", "7", "-link", "-g")[0] == 0


def test_standin_busy_count_goes_down(standin):
    for left in (1, 0):
        rc, out, _unused = hccn(standin, "-i", "3", "-link", "-g")
        assert (rc, out) == (11, fixture("busy.txt")) and is_busy(out)
        assert json.loads((standin / "hccn.json").read_text())["busy"]["3"] == left
    assert hccn(standin, "-i", "3", "-link", "-g")[0] == 0
    assert hccn(standin, "-i", "0", "-link", "-g")[0] == 0  # other devices never were busy


def test_device_query_against_the_standin(standin):
    slept = []
    rc, out, _unused = device_query(runner(standin), str(HCCN_TOOL), 3, ["-net_health", "-g"], sleep=slept.append)
    assert rc == 0 and parse_net_health(out) == "Init" and slept == [0.2, 0.4]
    state = json.loads((standin / "hccn.json").read_text())
    state["busy"]["3"] = 10
    (standin / "hccn.json").write_text(json.dumps(state))
    rc, out, _unused = device_query(runner(standin), str(HCCN_TOOL), 3, ["-link", "-g"], retries=2, sleep=slept.append)
    assert rc == 11 and is_busy(out)
    assert json.loads((standin / "hccn.json").read_text())["busy"]["3"] == 7


def test_standin_busy_while_another_query_runs_on_the_device(standin):
    with open(standin / "hccn-dev0.lock", "a", encoding="utf-8") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # as a query in progress on device 0 holds it
        assert hccn(standin, "-i", "0", "-link", "-g") == (11, fixture("busy.txt"), "")
        assert hccn(standin, "-i", "1", "-link", "-g")[0] == 0  # another device answers
    assert hccn(standin, "-i", "0", "-link", "-g")[0] == 0


def test_standin_other_commands_are_refused(standin):
    for args in (["-i", "0", "-mac", "-g"], ["-i", "0", "-link", "-s", "down"], ["-a", "-cfg", "recovery"], [],
                 ["-i", "0", "-ping", "-g", "address"], ["-i", "0", "-ip", "-g", "extra"]):
        rc, out, err = hccn(standin, *args)
        assert rc == 1 and out == "" and "-ping -g address" in err and "-net_health -g" in err


def test_standin_ping_of_an_unknown_ip_is_total_loss(standin):
    rc, out, err = hccn(standin, "-i", "0", "-ping", "-g", "address", "10.90.0.99")
    assert out == fixture("ping_total_loss_derived.txt").replace("10.10.100.10", "10.90.0.99")
    assert parse_ping(out) == {"transmitted": 3, "received": 0, "loss_pct": 100.0, "timeouts": [0, 1, 2]}
    assert (rc, err) == (1, fixture("ping_loss_stderr.txt"))


def test_standin_ping_from_a_link_down_device_is_total_loss(standin):
    rc, out, _unused = hccn(standin, "-i", "2", "-ping", "-g", "address", "10.90.0.1")
    assert rc == 1 and out.startswith("device 2 PING 10.90.0.1\n")
    assert parse_ping(out)["loss_pct"] == 100.0


def test_standin_ping_of_an_invalid_address(standin):
    assert hccn(standin, "-i", "0", "-ping", "-g", "address", "10.90.0") == (
        6, "", "The ip address you configured is invalid!\n")


def test_standin_ping_over_loopback(standin):
    reason = icmp_socket_reason()
    if reason is not None:
        pytest.skip(f"no ICMP socket can be opened on this machine ({reason}): the stand-in would exit 2")
    rc, out, err = hccn(standin, "-i", "0", "-ping", "-g", "address", "10.90.0.3")
    assert (rc, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "device 0 PING 10.90.0.3" and len(lines) == 5
    assert all(line.startswith(f"recv seq={seq},time=") and line.endswith("ms") for seq, line in enumerate(lines[1:4]))
    assert parse_ping(out) == {"transmitted": 3, "received": 3, "loss_pct": 0.0, "timeouts": []}


def test_standin_broken_state_is_a_test_environment_error(standin):
    (standin / "hccn.json").write_text("{not json")
    rc, out, err = hccn(standin, "-i", "0", "-link", "-g")
    assert rc == 2 and out == "" and "hccn.json" in err
