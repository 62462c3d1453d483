"""Render mode in the container runtime: the engine command around the unchanged argv, for every profile shape."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from test_playbooks import ROOT, render  # pylint: disable=import-error

pytestmark = pytest.mark.ansible

A3_IMAGE = "lmsysorg/sglang:cann8.3.rc2-a3-release20260106"
OWN_IMAGE = "localhost:5000/sglang:0.5.7-ascend"

# inventory, extra vars, {service: expected davinci indexes (None: the router)}
SHAPES = {
    # a whole A3 node per rank, 2-node instances of a PD deployment, the documented image by default
    "pd_2node": ("example", [], {"sglang-prefill-i1-r0": list(range(16)), "sglang-decode-i0-r1": list(range(16)),
                                 "sglang-router-i0": None}),
    # A2: four of a node's eight NPUs from --base-gpu-id 4
    "a2": ("mixed_a2", ["-e", "sglang_profile=qwen3_32b_a2_8c_mixed_2k_2k_50ms", "-e",
                        f"sglang_container_image={OWN_IMAGE}"], {"sglang-mixed-i0-r0": [4, 5, 6, 7]}),
    # part of an A3 node: --base-gpu-id 4 with 8 devices per node, Docker
    "a3_part": ("mixed_fleet", ["-e", "sglang_profile=qwen3_32b_a3_4c_mixed_4k_1k5_11ms", "-e",
                                "sglang_container_engine=docker"],
                {"sglang-mixed-i0-r0": list(range(4, 12)), "sglang-router-i0": None}),
}
_DONE: dict[str, tuple[Path, Path]] = {}


@pytest.fixture(scope="module")
def rendered_pair(tmp_path_factory):
    """(host-runtime render, container-runtime render) of one shape, each rendered once."""

    def get(shape: str) -> tuple[Path, Path]:
        if shape not in _DONE:
            inventory, extra, _unused = SHAPES[shape]
            host = tmp_path_factory.mktemp(f"host-{shape}")
            cont = tmp_path_factory.mktemp(f"container-{shape}")
            render(ROOT / "inventories" / inventory, host, *extra)
            render(ROOT / "inventories" / inventory, cont, "-e", "sglang_runtime=container", *extra)
            _DONE[shape] = (host, cont)
        return _DONE[shape]

    return get


def exec_words(launcher: Path) -> list[str]:
    """The words of the launcher's exec line, as bash reads them (continuation lines joined); a router's workers
    at start are the lines of its <name>.workers beside the launcher (render mode), where the launcher reads them."""
    text = launcher.read_text().replace("\\\n", " ")
    line = next(line for line in text.splitlines() if line.startswith("exec "))
    words = shlex.split(line)[1:]
    if "${SGLANG_ROUTER_WORKERS[@]}" in words:
        at = words.index("${SGLANG_ROUTER_WORKERS[@]}")
        listed = launcher.with_suffix(".workers").read_text().splitlines()
        words = words[:at] + listed + words[at + 1:]
    return words


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_container_render_keeps_argv_env_and_wraps_them(shape: str, rendered_pair) -> None:
    host, cont = rendered_pair(shape)
    _inventory, extra, expected = SHAPES[shape]
    host_files = sorted(p.relative_to(host) for p in host.rglob("*") if p.is_file())
    assert host_files == sorted(p.relative_to(cont) for p in cont.rglob("*") if p.is_file())  # no new file
    # The hosts' summaries (the Prometheus files under monitoring/ are the plan's, the same in both runtimes).
    summaries = sorted(p for p in cont.rglob("*.json") if p.relative_to(cont).parts[0] != "monitoring")
    for path in sorted((cont / "monitoring").rglob("*")):
        if path.is_file():
            mine = path.read_text().replace(str(cont), str(host))
            assert mine == (host / path.relative_to(cont)).read_text(), path
    checked = set()
    for summary in summaries:
        if summary.name.endswith(".watchdog.json"):
            assert summary.read_text() == (host / summary.relative_to(cont)).read_text()
            continue
        name = summary.stem
        # argv and env exactly those of the host runtime, and so are the env file and the CANN file
        assert summary.read_text() == (host / summary.relative_to(cont)).read_text()
        for same in (f"{name}.env", "cann_env.sh"):
            mine, theirs = summary.parent / same, (host / summary.relative_to(cont)).parent / same
            # Only a router-only host has no CANN file, in either runtime.
            assert mine.exists() == theirs.exists() and (mine.exists() or same == "cann_env.sh"), same
            if mine.exists():
                assert mine.read_text() == theirs.read_text()
        data = json.loads(summary.read_text())
        words = exec_words(summary.parent / f"{name}.sh")
        argv_at = len(words) - len(data["argv"])
        assert words[argv_at:] == data["argv"]
        run = words[:argv_at]
        engine = "docker" if "sglang_container_engine=docker" in extra else "podman"
        # The engine by absolute path: a PATH in the service's environment cannot hide or replace it.
        assert run[:11] == [f"/usr/bin/{engine}", "run", "--rm", "--pull", "never", "--name", name, "--network", "host", "--ipc",
                            "host"]
        # podman refuses --shm-size next to --ipc host; docker gets it. podman's output goes straight to the
        # unit's journal (its default journald log driver wrote every line twice there)
        assert run[11:13] == (["--shm-size", "16g"] if engine == "docker" else ["--log-driver", "none"])
        assert ("--shm-size" in run) == (engine == "docker") and ("--log-driver" in run) == (engine == "podman")
        image = OWN_IMAGE if any(OWN_IMAGE in e for e in extra) else A3_IMAGE
        assert run[run.index("--entrypoint") + 1:run.index("--entrypoint") + 4] == ["/bin/bash", image, "-c"]
        # the environment by name only: no value of it is a word of the command (short numbers aside: the entry
        # script's counts are words too)
        passed = [run[i + 1] for i, w in enumerate(run) if w == "--env"]
        assert passed == list(data["env"])
        assert not {v for v in data["env"].values() if len(v) > 3} & set(run)
        devices = [run[i + 1] for i, w in enumerate(run) if w == "--device"]
        volumes = [run[i + 1] for i, w in enumerate(run) if w == "--volume"]
        if data["role"] == "router":
            assert devices == [] and volumes == []
        else:
            npus = [int(d[len("/dev/davinci"):]) for d in devices if re.fullmatch(r"/dev/davinci[0-9]+", d)]
            assert devices[len(npus):] == ["/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"]
            if name in expected:
                assert npus == expected[name]
            assert "/usr/local/Ascend/driver:/usr/local/Ascend/driver:ro" in volumes
            model = data["argv"][data["argv"].index("--model-path") + 1]
            assert f"{model}:{model}:ro" in volumes
        unit = (summary.parent / f"{name}.service").read_text()
        remove = f"/usr/bin/{engine} rm --force {'--time 0 ' if engine == 'podman' else ''}{name}"
        assert f"ExecStartPre=-{remove}\n" in unit
        assert f"ExecStopPost=-{remove}\n" in unit
        assert ("docker.service" in unit) == (engine == "docker")
        # the host's cann_env.sh is not sourced: the image brings CANN
        assert "cann_env.sh" not in (summary.parent / f"{name}.sh").read_text()
        checked.add(name)
    assert set(expected) <= checked


def test_container_render_shows_the_engine_command(rendered_pair) -> None:
    _host, cont = rendered_pair("a2")
    launcher = next(cont.rglob("sglang-mixed-i0-r0.sh")).read_text()
    assert "# Container runtime: podman runs localhost:5000/sglang:0.5.7-ascend around the argv below." in launcher
    assert "exec /usr/bin/podman run \\\n  --rm \\\n" in launcher
    assert "\\\n  python3 -m sglang.launch_server \\\n  --model-path" in launcher
