"""What the checks read of a host plan: the devices each server service uses (the plan's, never an argv).  Pure
Python, no host, no Ansible."""

from __future__ import annotations

from ansible_collections.ascend.sglang.plugins.module_utils.checks._preflight_inputs import server_devices


def test_the_planned_devices_are_the_ones_checked(pd32, a2mixed):
    _unused, p = pd32
    assert server_devices(p["hosts"]["decode1"]) == {d: ["sglang-decode-i0-r1"] for d in range(16)}  # tp 32 / 2 nodes
    assert sorted(server_devices(p["hosts"]["prefill0"])) == list(range(16))    # --tp-size 16, one node
    assert server_devices(p["hosts"]["router0"]) == {}
    _unused, q = a2mixed
    assert sorted(server_devices(q["hosts"]["mixed0"])) == [4, 5, 6, 7]  # --base-gpu-id 4, --tp-size 4
    # Only the plan's devices count, whatever the argv says.
    svc = {"name": "s", "role": "mixed", "nnodes": 1, "argv": ["python3", "--tp-size", "8"], "devices": [6, 7]}
    assert server_devices({"services": [svc]}) == {6: ["s"], 7: ["s"]}
