"""The container runtime's pure helper and its place in the plan (no Ansible)."""

from __future__ import annotations

import shlex
import subprocess

import pytest

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _container as container
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import Collector, PlanError
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._planner import plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import load_profile
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._releases import load_release_tables
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._topology import build_inventory

A3_IMAGE = "lmsysorg/sglang:cann8.3.rc2-a3-release20260106"


def make(profile_id, variables, **groups):
    names, hostvars = {}, {}
    for role, count in groups.items():
        names[role] = [f"{role}{i}" for i in range(count)]
        for i, name in enumerate(names[role]):
            hostvars[name] = {"sglang_host_ip": f"10.0.{len(names)}.{i + 1}", "sglang_nic": "ens1"}
    base = {"sglang_model_path": "/models/m", "sglang_draft_model_path": "/models/draft"}
    return plan(load_profile(profile_id), build_inventory(names, hostvars, dict(base, **variables))).as_dict()


def services(p):
    return {s["name"]: s for h in p["hosts"].values() for s in h["services"]}


def findings(profile_id, variables, **groups):
    with pytest.raises(PlanError) as exc:
        make(profile_id, variables, **groups)
    return {(f.variable, f.message) for f in exc.value.findings}


def settings(**kw):
    values = dict(engine="podman", image=A3_IMAGE, shm_size="16g", ascend_runtime=False, image_archive=None)
    values.update(kw)
    values.setdefault("engine_path", f"/usr/bin/{values['engine']}")
    return container.Settings(**values)


def test_npu_ids_whole_node_or_slice() -> None:
    assert container.npu_ids(16, 0, None) == list(range(16))
    assert container.npu_ids(8, 4, 4) == [4, 5, 6, 7]
    assert container.npu_ids(16, 4, 8) == list(range(4, 12))


def test_server_devices_mounts_and_engine_prefix() -> None:
    got = container.service_container(settings(), "sglang-mixed-i0-r0", [4, 5], ["/models/m", "/models/m"],
                                      ["HCCL_BUFFSIZE"], ["/usr/local/Ascend/ascend-toolkit/set_env.sh"], []).as_dict()
    assert got["devices"] == ["/dev/davinci4", "/dev/davinci5", "/dev/davinci_manager", "/dev/devmm_svm",
                              "/dev/hisi_hdc"]
    assert got["mounts"] == ["/usr/local/Ascend/driver:/usr/local/Ascend/driver:ro", "/usr/local/dcmi:/usr/local/dcmi:ro",
                             "/usr/local/bin/npu-smi:/usr/local/bin/npu-smi:ro",
                             "/etc/ascend_install.info:/etc/ascend_install.info:ro", "/models/m:/models/m:ro"]
    run = got["run"]
    # podman refuses --shm-size with --ipc host (the host's /dev/shm is shared): only docker gets it; podman keeps
    # no log of its own (its client relays the output to the unit's journal), docker's log driver is the daemon's
    assert run[:14] == ["/usr/bin/podman", "run", "--rm", "--pull", "never", "--name", "sglang-mixed-i0-r0", "--network",
                        "host", "--ipc", "host", "--log-driver", "none", "--device"]
    docker = list(container.service_container(settings(engine="docker"), "sglang-mixed-i0-r0", [4], [], [], [], []).run)
    assert docker[:14] == ["/usr/bin/docker", "run", "--rm", "--pull", "never", "--name", "sglang-mixed-i0-r0", "--network",
                           "host", "--ipc", "host", "--shm-size", "16g", "--device"]
    assert "--log-driver" not in docker
    assert ["--env", "HCCL_BUFFSIZE"] == run[run.index("HCCL_BUFFSIZE") - 1:run.index("HCCL_BUFFSIZE") + 1]
    image_at = run.index(A3_IMAGE)
    assert run[image_at - 2:image_at] == ["--entrypoint", "/bin/bash"]
    assert run[image_at + 1:] == ["-c", container.ENTRY_SCRIPT, container.ENTRY_NAME, "1",
                                  "/usr/local/Ascend/ascend-toolkit/set_env.sh", "0"]
    assert got["remove"] == ["/usr/bin/podman", "rm", "--force", "--time", "0", "sglang-mixed-i0-r0"]
    assert container.service_container(settings(engine="docker"), "sglang-mixed-i0-r0", [4], [], [], [], []).remove == (
        "/usr/bin/docker", "rm", "--force", "sglang-mixed-i0-r0")


def test_ascend_runtime_passes_visible_devices_instead_of_nodes() -> None:
    got = container.service_container(settings(ascend_runtime=True, engine="docker"), "s", [0, 1, 2], ["/m"], [], [],
                                      []).as_dict()
    assert got["devices"] == [] and "--device" not in got["run"]
    assert got["mounts"] == ["/m:/m:ro"]
    assert got["run"][0] == "/usr/bin/docker" and ["--env", "ASCEND_VISIBLE_DEVICES=0,1,2"] == got["run"][15:17]


def test_router_gets_no_npu_nothing_mounted() -> None:
    got = container.service_container(settings(), "sglang-router-i0", None, (), ["RUST_LOG"], (), []).as_dict()
    assert got["devices"] == [] and got["mounts"] == [] and got["npus"] == []
    assert "--device" not in got["run"] and "--volume" not in got["run"]


def test_entry_script_sources_cann_and_appends_secrets(tmp_path) -> None:
    """The fixed entry script, run by bash as the container runs it."""
    script = tmp_path / "set_env.sh"
    script.write_text("export FROM_CANN=yes\n")
    argv = ["bash", "-c", container.ENTRY_SCRIPT, container.ENTRY_NAME, "1", str(script), "1", "--api-key",
            "sh", "-c", 'printf "%s|" "$FROM_CANN" "$@" "${SGLANG_SECRET_0:-gone}"', "x", "a b"]
    out = subprocess.run(argv, env={"PATH": "/usr/bin:/bin", "SGLANG_SECRET_0": "s3cr et"}, capture_output=True,
                         text=True, check=True, timeout=30).stdout
    assert out == "yes|a b|--api-key|s3cr et|gone|"
    missing = subprocess.run(argv[:5] + [str(tmp_path / "nope.sh"), "0", "true"], capture_output=True, text=True,
                             check=False, timeout=30)
    assert missing.returncode == 1 and "nope.sh is missing" in missing.stderr
    no_secret = subprocess.run(argv, env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True, check=False,
                               timeout=30)
    assert no_secret.returncode == 1 and "SGLANG_SECRET_0 is missing" in no_secret.stderr


@pytest.mark.parametrize("image", [
    "lmsysorg/sglang:cann8.3.rc2-a3-release20260106", "sglang:v1", "localhost:5000/team/sglang:v1",
    "lmsysorg/sglang@sha256:" + "a" * 64, "lmsysorg/sglang:v1@sha256:" + "0" * 64,
])
def test_image_reference_accepted(image: str) -> None:
    errors = Collector()
    assert container.image_reference(image, errors, container.contract.Where("sglang_container_image")) == image
    assert not errors.findings


@pytest.mark.parametrize("image", [
    "--privileged", "LmsysOrg/sglang:x", "sglang:tag with blank", "sglang;reboot", "sglang:$(id)", "sglang:'x'",
    "sglang:" + "x" * 200, "", "sglang:-x", "/sglang", "sglang@sha256:abc", 42,
    # No release pinned: the engine pulls :latest, which moves.
    "sglang", "lmsysorg/sglang", "localhost:5000/team/sglang", "lmsysorg/sglang:latest",
])
def test_image_reference_refused(image) -> None:
    errors = Collector()
    assert container.image_reference(image, errors, container.contract.Where("sglang_container_image")) is None
    assert [f.variable for f in errors.findings] == ["sglang_container_image"]


def test_documented_images_per_hardware() -> None:
    stack = load_release_tables()["sglang"].stack("0.5.6.post2")
    assert stack.images["A3"] == A3_IMAGE
    assert stack.images["A2"].startswith("lmsysorg/sglang:cann8.3.rc2-") and stack.images["A2"] != A3_IMAGE
    for image in stack.images.values():
        assert container.IMAGE_RE.fullmatch(image) and image.startswith("lmsysorg/")


def test_host_runtime_is_the_default_and_unchanged() -> None:
    p = make("deepseek_r1_pd32", {}, prefill=4, decode=4, router=1)
    assert p["runtime"] == "host" and p["container"] is None
    assert all(s["container"] is None for s in services(p).values())


def test_container_plan_keeps_argv_and_env_and_uses_documented_image() -> None:
    two_node = "qwen3_480b_a3_16c_mixed_3k5_1k5_50ms"
    host = make(two_node, {}, mixed=2, router=1)
    cont = make(two_node, {"sglang_runtime": "container", "sglang_container_engine": "docker"}, mixed=2, router=1)
    assert cont["runtime"] == "container"
    assert cont["container"] == {"engine": "docker", "image": A3_IMAGE, "shm_size": "16g", "ascend_runtime": False,
                                 "image_archive": None, "engine_path": "/usr/bin/docker"}
    for name, svc in services(cont).items():
        before = services(host)[name]
        assert (svc["argv"], svc["env"]) == (before["argv"], before["env"])
        assert svc["container"]["env_names"] == list(svc["env"])
        assert not any(value in svc["container"]["run"] for value in svc["env"].values() if len(value) > 3)
    prefill = services(cont)["sglang-mixed-i0-r1"]["container"]
    assert prefill["npus"] == list(range(16))  # a whole A3 node per rank of the 2-node instance
    assert "/models/m:/models/m:ro" in prefill["mounts"]
    assert services(cont)["sglang-router-i0"]["container"]["devices"] == []


def test_a2_profile_needs_an_image_of_its_release() -> None:
    problems = findings("qwen3_32b_a2_8c_mixed_2k_2k_50ms", {"sglang_runtime": "container"}, mixed=1, router=1)
    assert any(v == "sglang_container_image" and "no container image is documented for SGLang 0.5.7 on A2" in m
               for v, m in problems)
    p = make("qwen3_32b_a2_8c_mixed_2k_2k_50ms",
             {"sglang_runtime": "container", "sglang_container_image": "localhost:5000/sglang:0.5.7-910b"},
             mixed=1, router=1)
    svc = services(p)["sglang-mixed-i0-r0"]["container"]
    assert svc["npus"] == [4, 5, 6, 7] and svc["image"] == "localhost:5000/sglang:0.5.7-910b"
    assert "/models/draft:/models/draft:ro" in svc["mounts"]


def test_bad_container_settings_are_named() -> None:
    problems = findings("deepseek_r1_pd32", {
        "sglang_runtime": "container", "sglang_container_engine": "lxc", "sglang_container_shm_size": "16 GB",
        "sglang_container_ascend_runtime": "maybe", "sglang_container_image": "x; rm -rf /"},
        prefill=4, decode=4, router=1)
    assert {v for v, _m in problems} == {"sglang_container_engine", "sglang_container_shm_size",
                                         "sglang_container_ascend_runtime", "sglang_container_image"}
    assert {v for v, _m in findings("deepseek_r1_pd32", {"sglang_runtime": "vm"}, prefill=4, decode=4,
                                    router=1)} == {"sglang_runtime"}
    bad_path = {"sglang_runtime": "container", "sglang_model_path": "/models/a:b"}
    assert {v for v, _m in findings("deepseek_r1_pd32", bad_path, prefill=4, decode=4, router=1)} == {"sglang_model_path"}


def test_launcher_words_survive_the_shell() -> None:
    """What the launcher template writes (shlex-quoted tokens) reads back as the planned command."""
    p = make("deepseek_r1_pd32", {"sglang_runtime": "container"}, prefill=4, decode=4, router=1)
    svc = services(p)["sglang-decode-i0-r0"]
    words = svc["container"]["run"] + svc["argv"]
    assert shlex.split(" ".join(shlex.quote(w) for w in words)) == words


def test_servers_that_talk_to_other_hosts_get_the_hosts_hccn_conf():
    """HCCL and the KV transfer read the NPU NICs' addresses from /etc/hccn.conf: a PD server or a rank of a
    multi-node instance gets it read-only; a single-node mixed server and the router do not need it."""
    pd = container.service_container(settings(), "sglang-decode-i0-r0", [0], [], [], [], [], fabric=True).as_dict()
    assert "/etc/hccn.conf:/etc/hccn.conf:ro" in pd["mounts"]
    assert pd["run"][pd["run"].index("/etc/hccn.conf:/etc/hccn.conf:ro") - 1] == "--volume"
    alone = container.service_container(settings(), "sglang-mixed-i0-r0", [0], [], [], [], []).as_dict()
    assert "/etc/hccn.conf:/etc/hccn.conf:ro" not in alone["mounts"]
    # The driver's tools (hccn_tool) come with the driver directory.
    assert "/usr/local/Ascend/driver:/usr/local/Ascend/driver:ro" in pd["mounts"]


def test_every_recorded_image_is_a_pinned_reference_of_its_release() -> None:
    """The stacks' images (0.5.16's as its installation page names them, in another repository than the
    others') pass the check an operator's sglang_container_image gets, and each names its release and CANN."""
    table = load_release_tables()["sglang"]
    for release in table.releases:
        stack = table.stack(release)
        for hardware, image in stack.images.items():
            errors = Collector()
            assert container.image_reference(image, errors, container.contract.Where("sglang_container_image")) == image
            assert not errors.findings, image
            assert ("a3" if hardware == "A3" else "910b") in image and stack.cann.lower() in image
    assert table.stack("0.5.16").images == {"A3": "quay.io/ascend/sglang:cann9.0.0-a3-v0.5.16",
                                            "A2": "quay.io/ascend/sglang:cann9.0.0-910b-v0.5.16"}
