"""Decision logic of the instance watchdog (roles/sglang_service/files/sglang_watchdog.py), without systemd:
evidence -> action, grace, backoff, give-up, and the router side's out / back in.

The watchdog runs on the managed hosts: scripts/lint.sh's units gate runs this file on the oldest host Python
(3.11) as well as on the controller's; it needs nothing but the standard library and pytest."""
from __future__ import annotations

import importlib.util
import pathlib

import pytest

# tests/unit/roles/sglang_service/files/ mirrors roles/sglang_service/files/ of the collection root.
PATH = pathlib.Path(__file__).resolve().parents[5] / "roles/sglang_service/files/sglang_watchdog.py"
spec = importlib.util.spec_from_file_location("sglang_watchdog", PATH)
wd = importlib.util.module_from_spec(spec)
spec.loader.exec_module(wd)

CFG = {"unit": "sglang-decode-i0-r1.service", "instance_label": "decode instance 0", "node_rank": 1, "nnodes": 2,
       "interval": 1, "timeout": 2, "failures": 3, "startup_grace": 10, "max_restarts": 3, "window": 600,
       "backoff_initial": 5, "backoff_max": 8}
RANK0 = dict(CFG, node_rank=0, unit="sglang-decode-i0-r0.service")


def obs(active="active", inv="A", ok=None, error=None):
    return {"active_state": active, "invocation": inv, "health_ok": ok, "health_error": error}


def run(cfg, state, observations, start=0.0, step=1.0):
    """Feeds observations one interval apart; returns the (time, action, message) of every check."""
    out = []
    now = start
    for o in observations:
        action, state, msg = wd.decide(state, o, cfg, now)
        out.append((now, action, msg))
        now += step
    return out, state


def started(cfg, inv="A", at=0.0):
    """State of a watchdog that saw the unit start at ``at``."""
    _unused, state, _unused = wd.decide(wd.new_state(), obs(inv=inv, ok=True), cfg, at)
    return state


def test_grace_of_rank0_covers_the_other_ranks_reaction():
    assert wd.grace_seconds(CFG) == 10
    assert wd.grace_seconds(RANK0) == 10 + 3 * (1 + 2) + 1
    assert wd.grace_seconds(dict(RANK0, nnodes=1)) == 10


def test_healthy_instance_needs_nothing():
    results, state = run(CFG, started(CFG), [obs(ok=True)] * 5, start=100)
    assert [a for _unused, a, _unused in results] == ["none"] * 5
    assert state["status"] == "healthy" and state["failures"] == 0 and state["restarts"] == []


def test_n_failures_in_a_row_restart_once_the_grace_is_over():
    state = started(CFG, at=0)
    # Inside the grace (10 s after the start) nothing counts.
    results, state = run(CFG, state, [obs(ok=False, error="timed out")] * 5, start=1)
    assert all(a == "none" for _unused, a, _unused in results) and state["failures"] == 0 and state["status"] == "starting"
    results, state = run(CFG, state, [obs(ok=False, error="timed out")] * 3, start=20)
    assert [a for _unused, a, _unused in results] == ["none", "none", "restart"]
    assert "failed 3 times in a row (last: timed out)" in results[-1][2]
    assert state["restarts"] == [22] and state["failures"] == 0 and state["restarts_total"] == 1


def test_a_success_resets_the_count():
    state = started(CFG, at=0)
    seq = [obs(ok=False), obs(ok=False), obs(ok=True), obs(ok=False), obs(ok=False)]
    results, state = run(CFG, state, seq, start=20)
    assert all(a == "none" for _unused, a, _unused in results) and state["failures"] == 2


def test_failed_unit_is_evidence_at_once_inactive_and_activating_are_not():
    state = started(CFG, at=0)
    action, state2, msg = wd.decide(state, obs(active="failed"), CFG, 1)  # even inside the grace
    assert action == "restart" and "unit sglang-decode-i0-r1.service failed" in msg
    for active in ("inactive", "activating", "deactivating"):
        action, st, _unused = wd.decide(state, obs(active=active), CFG, 50)
        assert action == "none" and st["failures"] == 0


def test_new_invocation_restarts_the_grace():
    state = started(CFG, at=0)
    _unused, state = run(CFG, state, [obs(ok=False)] * 2, start=20)
    assert state["failures"] == 2
    action, state, _unused = wd.decide(state, obs(inv="B", ok=False), CFG, 22)  # restarted by systemd meanwhile
    assert action == "none" and state["failures"] == 0 and state["started_at"] == 22 and state["status"] == "starting"


def test_backoff_doubles_up_to_its_maximum():
    assert [wd.backoff_seconds(CFG, k) for k in range(5)] == [0, 5, 8, 8, 8]
    assert [wd.backoff_seconds(dict(CFG, backoff_max=600), k) for k in range(4)] == [0, 5, 10, 20]


def test_restarts_wait_for_the_backoff_then_give_up_and_say_so():
    cfg = dict(CFG, startup_grace=1)
    state = started(cfg, at=0)
    actions = []
    now = 10.0
    for _unused in range(60):
        action, state, msg = wd.decide(state, obs(active="failed"), cfg, now)
        actions.append((now, action, msg))
        now += 1
    restarts = [t for t, a, _unused in actions if a == "restart"]
    assert restarts == [10, 15, 23]  # backoff 5 then 8 (max)
    gave_up = [(t, m) for t, a, m in actions if a == "give_up"]
    assert len(gave_up) == 1 and gave_up[0][0] == 24
    assert "giving up on decode instance 0" in gave_up[0][1] and "3 restarts within 600 s" in gave_up[0][1]
    assert state["given_up"] and state["status"] == "gave up" and "unit sglang-decode-i0-r1.service failed" in state["reason"]
    assert all(a == "none" for t, a, _unused in actions if t > 24)


def test_restarts_age_out_of_the_window():
    cfg = dict(CFG, startup_grace=1, window=100)
    state = started(cfg, at=0)
    state["restarts"] = [5, 20, 30]
    action, state, _unused = wd.decide(state, obs(active="failed"), cfg, 50)
    assert action == "give_up"
    state = dict(state, given_up=False, restarts=[5, 20, 30])
    action, state, _unused = wd.decide(state, obs(active="failed"), cfg, 125)  # 5 and 20 aged out
    assert action == "restart" and state["restarts"] == [30, 125]


def test_given_up_clears_once_healthy_again():
    state = dict(started(CFG, at=0), given_up=True, reason="x", status="gave up")
    action, state, msg = wd.decide(state, obs(ok=True), CFG, 100)
    assert action == "none" and not state["given_up"] and state["reason"] is None and "healthy again" in msg


@pytest.mark.parametrize("failures", [1, 3])
def test_router_side_takes_out_after_n_failures_and_back_at_first_success(failures):
    cfg = {"failures": failures}
    ws = {"failures": 0, "removed": False}
    actions = []
    for _unused in range(failures + 2):
        action, ws = wd.decide_worker(ws, False, "timed out", cfg)
        actions.append(action)
        if action == "remove":
            ws["removed"] = True
    assert actions == ["none"] * (failures - 1) + ["remove", "none", "none"]
    action, ws = wd.decide_worker(ws, True, None, cfg)
    assert action == "add" and ws["failures"] == 0
    ws["removed"] = False
    assert wd.decide_worker(ws, True, None, cfg)[0] == "none"  # never adds what it did not take out


def test_a_new_watchdog_counts_the_grace_from_the_units_start():
    action, state, _unused = wd.decide(wd.new_state(), dict(obs(ok=False), active_since=100.0), CFG, 500)
    assert state["started_at"] == 100.0 and state["failures"] == 1  # long past the grace: counts at once


# ---- third evidence: rank 0 restarted underneath this rank (ranks > 0) -----------------------------------

def r0(inv="R0-A", active="active"):
    return {"invocation": inv, "active_state": active}


def obs0(rank0, ok=False, active="active", inv="A"):
    return dict(obs(active=active, inv=inv, ok=ok, error=None if ok else "timed out"), rank0=rank0)


GRACE_LONG = dict(CFG, startup_grace=600)


def test_rank0_under_a_new_invocation_restarts_at_once_inside_the_grace():
    state = started(GRACE_LONG, at=0)
    results, state = run(GRACE_LONG, state, [obs0(r0("R0-A"))] * 3, start=1)  # hung, but inside the grace
    assert [a for _unused, a, _unused in results] == ["none"] * 3 and state["rank0_invocation"] == "R0-A"
    assert "goes with rank 0 invocation R0-A" in results[0][2]
    action, state, msg = wd.decide(state, obs0(r0("R0-B")), GRACE_LONG, 10)
    assert action == "restart" and "rank 0 restarted underneath this rank (invocation R0-A -> R0-B)" in msg
    assert state["restarts"] == [10] and state["rank0_invocation"] is None
    # The restarted rank goes with the rank 0 it sees next, and no further restart follows from it.
    results, state = run(GRACE_LONG, state, [obs0(r0("R0-B"), inv="A2")] * 5, start=11)
    assert [a for _unused, a, _unused in results] == ["none"] * 5 and state["rank0_invocation"] == "R0-B"


def test_an_unchanged_rank0_invocation_never_restarts():
    state = started(GRACE_LONG, at=0)
    results, state = run(GRACE_LONG, state, [obs0(r0("R0-A"))] * 300, start=1)  # hung inside the 600 s grace
    assert all(a == "none" for _unused, a, _unused in results) and state["restarts"] == []


@pytest.mark.parametrize("answer", [None, r0("R0-B", "inactive"), r0("R0-B", "failed"), r0("R0-B", "activating"),
                                    r0("", "active")])
def test_no_answer_or_a_rank0_not_active_is_no_evidence(answer):
    """Unreachable endpoint (rank 0's watchdog restarting, its host down), rank 0 stopped on purpose (stop.yml),
    failed or starting: never a restart of this rank, the baseline is kept."""
    state = started(GRACE_LONG, at=0)
    _unused, state = run(GRACE_LONG, state, [obs0(r0("R0-A"))], start=1)
    results, state = run(GRACE_LONG, state, [obs0(answer)] * 100, start=2)
    assert all(a == "none" for _unused, a, _unused in results) and state["rank0_invocation"] == "R0-A"
    # The health evidence still applies once the grace is over.
    results, _unused = run(GRACE_LONG, state, [obs0(answer)] * 3, start=700)
    assert [a for _unused, a, _unused in results] == ["none", "none", "restart"]
    assert "/health_generate failed 3 times" in results[-1][2]


def test_rank1_started_before_rank0s_watchdog_answers_goes_with_the_first_answer():
    state = started(GRACE_LONG, at=0)
    results, state = run(GRACE_LONG, state, [obs0(None)] * 5 + [obs0(r0("R0-B"))] * 5, start=1)
    assert all(a == "none" for _unused, a, _unused in results) and state["rank0_invocation"] == "R0-B"


def test_a_healthy_instance_follows_rank0_without_restarting():
    state = started(GRACE_LONG, at=0)
    _unused, state = run(GRACE_LONG, state, [obs0(r0("R0-A"), ok=True)], start=1)
    action, state, _unused = wd.decide(state, obs0(r0("R0-B"), ok=True), GRACE_LONG, 2)
    assert action == "none" and state["rank0_invocation"] == "R0-B"


def test_own_restart_by_systemd_takes_the_next_rank0_seen():
    state = started(GRACE_LONG, at=0)
    _unused, state = run(GRACE_LONG, state, [obs0(r0("R0-A"))], start=1)
    action, state, _unused = wd.decide(state, obs0(r0("R0-A"), inv="B"), GRACE_LONG, 5)  # own rank restarted
    assert action == "none" and state["rank0_invocation"] == "R0-A"
    action, state, msg = wd.decide(state, obs0(r0("R0-C"), inv="B"), GRACE_LONG, 20)  # then rank 0 restarted
    assert action == "restart" and "R0-A -> R0-C" in msg


def test_rank0_evidence_respects_backoff_and_the_restart_budget():
    cfg = dict(GRACE_LONG, max_restarts=2, backoff_initial=5, backoff_max=8)
    state = started(cfg, at=0)
    actions = []
    now = 1.0
    for k in range(40):
        rank0 = r0(f"R0-{k // 4}")  # rank 0 restarts every 4 s (a crash loop)
        action, state, _unused = wd.decide(state, obs0(rank0, inv=f"own-{len(state['restarts'])}"), cfg, now)
        actions.append((now, action))
        now += 1
    assert [t for t, a in actions if a == "restart"] == [5, 10]  # the second waits for the 5 s backoff
    assert [a for _unused, a in actions].count("give_up") == 1
    assert state["given_up"] and "rank 0 restarted underneath" in state["reason"]


def test_rank0_itself_ignores_rank0_evidence():
    cfg = dict(RANK0, startup_grace=600)
    state = started(cfg, at=0)
    results, state = run(cfg, state, [obs0(r0("X"))] * 3 + [obs0(r0("Y"))] * 3, start=1)
    assert all(a == "none" for _unused, a, _unused in results) and state["rank0_invocation"] is None
