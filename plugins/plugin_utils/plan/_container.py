# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The container runtime (sglang_runtime: container): what each service's container gets, computed once.

Pure; no Ansible import.  The deployment's container settings are checked here (each refusal names its
variable); ``service_container`` then gives one service's engine command: ``<engine> run --rm ... <image>``
followed by a fixed entry script that sources the CANN scripts of the profile inside the container and
execs the service's argv, which stays exactly the argv of the host runtime.

The environment reaches the container by name only (``--env NAME``: the engine copies the value from the
launcher's environment, which sourced the service's env file), so no value (and no secret) is ever an
argument of the engine command.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Mapping, Sequence

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _contract as contract
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import Collector
# The inventory paths a server reads (model weights, EAGLE3 draft, expert placement): mounted read-only at the
# same path, so the argv is unchanged.
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import FROM_INVENTORY

RUNTIMES = ("host", "container")
ENGINES = ("docker", "podman")
DEFAULT_SHM_SIZE = "16g"

# An image reference as the engines parse it: [domain[:port]/]path[:tag][@sha256:digest], lower-case path
# components.  Anchored and strict: it starts with a letter or digit (never an option of the engine) and
# holds no blank, quote or shell character.
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
# A registry is a first component with a '.' or a ':port', or localhost (else it is a repository path).
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_DOMAIN = rf"(?:(?:{_LABEL}(?:\.{_LABEL})+|localhost)(?::[0-9]{{1,5}})?/|{_LABEL}:[0-9]{{1,5}}/)"
IMAGE_RE = re.compile(
    rf"{_DOMAIN}?{_COMPONENT}(?:/{_COMPONENT})*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{{0,127}})?(?:@sha256:[a-f0-9]{{64}})?")
# --shm-size: a positive number with a unit (b, k, m, g), as both engines accept it.
SHM_RE = re.compile(r"[1-9][0-9]{0,6}[bkmg]")

# Device nodes every NPU container needs besides its /dev/davinci<N> (the driver's management, shared
# virtual memory and host-device channel).
NPU_CONTROL_DEVICES = ("/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc")
# Host files of the NPU driver the image does not carry (it must match the kernel module): mounted read-only.
DRIVER_MOUNTS = ("/usr/local/Ascend/driver", "/usr/local/dcmi", "/usr/local/bin/npu-smi", "/etc/ascend_install.info")
# The NPU NICs' addresses, read by HCCL and the KV transfer in the container.
HCCN_CONF = "/etc/hccn.conf"

# Entry script run by bash inside the container: $1 = number of CANN scripts, the scripts, the number of
# secret flags, the flags (values in SGLANG_SECRET_<i>, passed by name), then the service's argv.  A missing
# CANN script stops the service with its name (as cann_env.sh does on the host); a script's non-zero status
# is reported, not fatal (vendor scripts return one for harmless reasons).
ENTRY_SCRIPT = (
    'n=$1; shift; '
    'while [ "$n" -gt 0 ]; do '
    'if [ ! -r "$1" ]; then echo "sglang container: CANN environment script $1 is missing or unreadable" >&2; exit 1; fi; '
    '. "$1" || echo "sglang container: warning: $1 returned status $?" >&2; '
    'shift; n=$((n - 1)); done; '
    'n=$1; shift; secrets=(); i=0; '
    'while [ "$i" -lt "$n" ]; do v="SGLANG_SECRET_$i"; '
    'if [ -z "${!v:-}" ]; then echo "sglang container: $v is missing" >&2; exit 1; fi; '
    'secrets+=("$1" "${!v}"); unset -v "$v"; shift; i=$((i + 1)); done; '
    'exec "$@" "${secrets[@]}"'
)
ENTRY_NAME = "sglang-entry"


@dataclasses.dataclass(frozen=True)
class Settings:
    """The deployment's container settings (one image and engine for every host: the ranks of an instance
    must run the same SGLang)."""

    engine: str
    image: str
    shm_size: str
    ascend_runtime: bool
    image_archive: str | None
    # The engine's absolute path: the launchers and the image tasks never look it up on PATH, which the
    # services' environment may set (sglang_overrides env PATH).
    engine_path: str = "/usr/bin/podman"

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class ServiceContainer:
    """One service's container (Service.container): what the launcher runs around its argv, and what preflight
    checks on the host (the engine, the image, the device nodes and the mounted paths)."""

    engine: str
    image: str
    name: str
    npus: tuple[int, ...]  # davinci indexes; none for the router
    devices: tuple[str, ...]  # device nodes passed with --device (none with the Ascend runtime)
    mounts: tuple[str, ...]  # --volume SRC:DST:ro
    visible_devices: str | None  # ASCEND_VISIBLE_DEVICES with the Ascend runtime
    env_names: tuple[str, ...]  # copied by name from the launcher's environment
    engine_path: str
    run: tuple[str, ...]  # the engine command before the service's argv
    # Run by the unit after a stop (ExecStopPost, under TimeoutStopSec) and before a start: the graceful stop
    # (SIGTERM through the engine's client) is over by then, so kill at once (podman's rm would otherwise
    # wait 10 s first, and systemd kill it with the container still running; docker's rm --force kills).
    remove: tuple[str, ...]
    # Preflight: an absent image is loaded from the controller's tarball, not pulled.
    from_archive: bool

    def as_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(self).items()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ServiceContainer:
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in data.items()})


def runtime(variables: Mapping[str, Any], errors: Collector) -> str:
    value = variables.get("sglang_runtime")
    if value is None:
        return "host"
    if value not in RUNTIMES:
        contract.Where("sglang_runtime").add(errors, f"must be one of {', '.join(RUNTIMES)}, got {value!r}")
        return "host"
    return str(value)


def image_reference(value: Any, errors: Collector, where: contract.Where) -> str | None:
    image = contract.text(value, errors, where, what="an image reference (a string)")
    if image is None:
        return None
    if len(image) > 255 or not IMAGE_RE.fullmatch(image):
        where.add(errors, f"is not an image reference like lmsysorg/sglang:TAG (lower-case repository, optional "
                          f"registry, :tag and/or @sha256:digest; no blanks or shell characters), got {image[:80]!r}")
        return None
    # The plan checks every flag against one SGLang release: an image must pin one.  Without a tag (or digest) the
    # engine pulls :latest, which moves; :latest itself too.
    name = image.split("@", 1)[0].rsplit("/", 1)[-1]
    if "@" not in image and (":" not in name or name.endswith(":latest")):
        where.add(errors, f"{image!r} pins no release ({'no tag: ' if ':' not in name else ''}:latest moves while "
                          "the plan checked every flag against one SGLang release): give the image's tag of that "
                          "release (lmsysorg/sglang:TAG) or a digest (@sha256:...)")
        return None
    return image


def check_settings(variables: Mapping[str, Any], default_image: str | None, default_why: str,
                   errors: Collector) -> Settings | None:
    """The container settings of a deployment whose sglang_runtime is container; None after a finding.
    ``default_image``: the documented image of the profile's release and hardware (None: none documented,
    ``default_why`` says why and what to set)."""
    ok = True
    engine = variables.get("sglang_container_engine", "podman")
    if engine not in ENGINES:
        contract.Where("sglang_container_engine").add(
            errors, f"must be one of {', '.join(ENGINES)}, got {repr(engine)[:80]}")
        ok = False
    if variables.get("sglang_container_image") is not None:
        image = image_reference(variables["sglang_container_image"], errors, contract.Where("sglang_container_image"))
    elif default_image is None:
        contract.Where("sglang_container_image").add(errors, default_why)
        image = None
    else:
        image = default_image
    shm = variables.get("sglang_container_shm_size", DEFAULT_SHM_SIZE)
    if not isinstance(shm, str) or not SHM_RE.fullmatch(shm):
        contract.Where("sglang_container_shm_size").add(
            errors, f"must be a size with a unit like 16g or 512m, got {repr(shm)[:80]}")
        ok = False
    ascend_runtime = contract.boolean(variables.get("sglang_container_ascend_runtime", False), errors,
                                      contract.Where("sglang_container_ascend_runtime"))
    archive = variables.get("sglang_container_image_archive")
    if archive is not None:
        archive = contract.text(archive, errors, contract.Where("sglang_container_image_archive"),
                                what="a controller path of an image tarball (a string)")
        ok = ok and archive is not None
    if not ok or image is None or ascend_runtime is None:
        return None
    # Checked with the other deployment values (plugin_utils/plan/_settings.py): a refused one stops the plan.
    engine_path = str(variables.get("sglang_container_engine_path") or f"/usr/bin/{engine}")
    return Settings(engine=str(engine), image=image, shm_size=shm, ascend_runtime=ascend_runtime,
                    image_archive=archive, engine_path=engine_path)


def check_mount_paths(values: Mapping[str, Any], errors: Collector) -> None:
    """A path bind-mounted with --volume SRC:DST:ro cannot hold ':' or ','."""
    for key, variable in FROM_INVENTORY.items():
        path = values.get(key)
        if isinstance(path, str) and (set(path) & {":", ","} or re.search(r"\s", path)):
            contract.Where(variable).add(errors, f"cannot be mounted into the containers ({path[:80]!r}): "
                                                 "':', ',' and blanks are separators of --volume")


def npu_ids(node_devices: int, base_gpu_id: int, devices_per_node: int | None) -> list[int]:
    """The NPUs (davinci indexes) one server rank uses: its slice of the node, else the whole node."""
    count = devices_per_node or node_devices
    return list(range(base_gpu_id, base_gpu_id + count))


def service_container(settings: Settings, name: str, npus: Sequence[int] | None, model_paths: Sequence[str],
                      env_names: Sequence[str], cann_sources: Sequence[str],
                      secret_flags: Sequence[str], *, fabric: bool = False, cpus: str | None = None) -> ServiceContainer:
    """One service's container: devices, mounts and the engine command that precedes its argv.
    ``npus`` is None for the router (no NPU, no driver). ``fabric``: its NPUs talk to other hosts (a rank of a
    multi-node instance, a PD server): the host's /etc/hccn.conf is mounted read-only, as Ascend's images expect
    (without it the service starts and its KV transfer or HCCL links fail). ``cpus``: the CPU list the rank is
    pinned to (sglang_npu_cpus), given to the container as its cpuset."""
    devices: list[str] = []
    mounts: list[str] = []
    visible: str | None = None
    if npus is not None:
        if settings.ascend_runtime:
            # The Ascend Docker Runtime adds the device nodes and the driver files itself.
            visible = ",".join(str(n) for n in npus)
        else:
            devices = [f"/dev/davinci{n}" for n in npus] + list(NPU_CONTROL_DEVICES)
            mounts = [f"{path}:{path}:ro" for path in DRIVER_MOUNTS]
        mounts += [f"{path}:{path}:ro" for path in dict.fromkeys(model_paths)]
        if fabric:
            mounts.append(f"{HCCN_CONF}:{HCCN_CONF}:ro")
    run = [settings.engine_path, "run", "--rm", "--pull", "never", "--name", name, "--network", "host", "--ipc", "host"]
    if settings.engine == "docker":
        # With --ipc host the container shares the host's /dev/shm; podman refuses --shm-size with it.
        run += ["--shm-size", settings.shm_size]
    else:
        # The unit's journal gets the output from the attached client; podman's default journald log driver wrote
        # a second copy of every line (and "passthrough" would file the output under the container's cgroup,
        # where journalctl -u does not look).
        run += ["--log-driver", "none"]
    if cpus:
        run += ["--cpuset-cpus", cpus]
    for device in devices:
        run += ["--device", device]
    for mount in mounts:
        run += ["--volume", mount]
    if visible is not None:
        run += ["--env", f"ASCEND_VISIBLE_DEVICES={visible}"]
    secret_names = [f"SGLANG_SECRET_{i}" for i in range(len(secret_flags))]
    for env in list(env_names) + secret_names:
        run += ["--env", env]
    run += ["--entrypoint", "/bin/bash", settings.image, "-c", ENTRY_SCRIPT, ENTRY_NAME,
            str(len(cann_sources)), *cann_sources, str(len(secret_flags)), *secret_flags]
    remove = [settings.engine_path, "rm", "--force"] + (["--time", "0"] if settings.engine == "podman" else []) + [name]
    return ServiceContainer(
        engine=settings.engine, image=settings.image, name=name, npus=tuple(npus or ()), devices=tuple(devices),
        mounts=tuple(mounts), visible_devices=visible, env_names=tuple(env_names), engine_path=settings.engine_path,
        run=tuple(run), remove=tuple(remove), from_archive=settings.image_archive is not None)


def bench_prefix(settings: Settings, model_paths: Sequence[str]) -> list[str]:
    """The engine command that runs the documented benchmark in the image (the host has no SGLang): host
    network, the model (tokenizer) read-only, the image's own interpreter; ``env`` runs the plan's argv as is."""
    run = [settings.engine_path, "run", "--rm", "--pull", "never", "--network", "host"]
    for path in dict.fromkeys(model_paths):
        run += ["--volume", f"{path}:{path}:ro"]
    return run + ["--entrypoint", "/usr/bin/env", settings.image]
