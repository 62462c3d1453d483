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


def test_preflight_reads_the_kernel_settings_host_tuning_would_read_and_their_file(pd32, tmp_path):
    """deploy.yml's tuning play leaves out a host where they are the plan's (filter sglang_tuning_hosts)."""
    from ansible_collections.ascend.sglang.plugins.module_utils.checks._preflight_inputs import sysctl_look
    from ansible_collections.ascend.sglang.plugins.module_utils.collect._host_probe import observe_sysctl
    _unused, p = pd32
    host = dict(p["hosts"]["prefill0"])
    host["settings"] = dict(host["settings"], sglang_proc_sys_dir=str(tmp_path / "proc"),
                            sglang_sysctl_dir=str(tmp_path / "sysctl.d"))
    look = sysctl_look(host)
    assert look == {"dir": str(tmp_path / "proc"), "names": list(host["host_tuning"]["sysctl"]),
                    "conf": str(tmp_path / "sysctl.d" / "90-sglang.conf")}
    (tmp_path / "proc" / "vm").mkdir(parents=True)
    (tmp_path / "proc" / "vm" / "swappiness").write_text("60\n")
    seen = observe_sysctl(look)
    assert seen["conf"] is None and seen["live"]["vm.swappiness"] == "60"
    assert seen["live"]["kernel.numa_balancing"] is None  # not readable: the tuning play runs and says why
    # Nothing to read: no kernel settings, or host tuning's sysctl step off, or a router.
    assert sysctl_look(dict(host, settings=dict(host["settings"], sglang_host_tuning_sysctl=False))) is None
    assert sysctl_look(p["hosts"]["router0"]) is None
