# Copyright: ascend.sglang contributors
# Apache License 2.0
"""The server's runtime stack: the script the server's own interpreter runs to report it, the parsing
of that report, and the findings on it.  Pure (no I/O, no Ansible import) except ``PROBE_SCRIPT``,
which is text: ``_host_probe.runtime_stack`` runs it on the host.

What torch_npu exposes about CANN: its ``version.py`` holds only ``__version__`` and ``git_version``;
``torch.version.cann`` and ``torch_npu.npu.utils.get_cann_version()`` read the CANN installed on the
host at run time (``ascend_*_install.info`` under ``ASCEND_HOME_PATH``), not the CANN the wheel was
built for.  So the CANN a torch_npu was built for cannot be read from it; it is judged only through the
reference environment (which torch_npu goes with which CANN).  deep-ep names its CANN in its local
version (``1.0.0+95728843.cann.8.3.rc2.b210``), which is compared with the host's toolkit.
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping

OK, WARN, FAIL = "ok", "warn", "fail"
POLICIES = ("warn", "fail", "off")
MARK = "SGLANG_STACK "
# Import name -> distribution name in the reference environment (None: reported, never compared).
MODULES: dict[str, str | None] = {
    "sglang": "sglang", "torch": "torch", "torch_npu": "torch_npu", "transformers": "transformers",
    "sgl_kernel_npu": "sgl-kernel-npu", "deep_ep": "deep-ep", "mf_adapter": None,
}

# Standard library only; runs under the server's interpreter (Python >= 3.8) with the CANN environment
# sourced.  It prints two marked JSON lines: the versions (importlib.metadata, nothing imported) first,
# so that they survive an import that crashes or hangs the interpreter; then what importing torch and
# torch_npu gave.  Errors are caught and reported as text, never as a traceback.
PROBE_SCRIPT = r'''
import importlib, json, os, platform, sys
MARK = "SGLANG_STACK "
# --distributions first: also every installed distribution, sglang's requirements and the marker environment
# (preflight's look at a stack the roles install: the controller decides from it whether anything is to install).
LOOK = sys.argv[1:2] == ["--distributions"]
MODS = sys.argv[2:] if LOOK else sys.argv[1:]
def emit(kind, data):
    sys.stdout.write(MARK + kind + " " + json.dumps(data) + "\n")
    sys.stdout.flush()
def text(exc):
    return (type(exc).__name__ + ": " + str(exc)).strip()[:600]
try:
    import importlib.metadata as md
except ImportError:
    md = None
dists = {}
try:
    dists = md.packages_distributions() if md is not None else {}
except Exception:
    dists = {}
packages = {}
for mod in MODS:
    entry = {"distribution": None, "version": None}
    for name in list(dists.get(mod) or []) + [mod, mod.replace("_", "-")]:
        try:
            entry = {"distribution": name, "version": md.version(name)}
            break
        except Exception:
            continue
    packages[mod] = entry
versions = {"python": sys.version.split()[0], "packages": packages}
if LOOK and md is not None:
    found = {}
    for dist in md.distributions():
        try:
            name, version = dist.metadata["Name"], dist.version
        except Exception:
            continue
        if name and version:
            found.setdefault(name, version)
    try:
        requires = md.requires("sglang")
    except Exception:
        requires = None
    info = sys.implementation.version
    implementation = "%d.%d.%d" % (info.major, info.minor, info.micro)
    if info.releaselevel != "final":
        implementation += info.releaselevel[0] + str(info.serial)
    versions["look"] = {
        "distributions": found, "requires": requires,
        "prefix": sys.prefix, "venv": os.path.exists(os.path.join(sys.prefix, "bin", "activate")),
        "markers": {"implementation_name": sys.implementation.name, "implementation_version": implementation,
                    "os_name": os.name, "platform_machine": platform.machine(),
                    "platform_release": platform.release(), "platform_system": platform.system(),
                    "platform_version": platform.version(), "python_full_version": platform.python_version(),
                    "platform_python_implementation": platform.python_implementation(),
                    "python_version": ".".join(platform.python_version_tuple()[:2]), "sys_platform": sys.platform},
    }
emit("versions", versions)
runtime = {"imports": {}, "visible_devices": os.environ.get("ASCEND_RT_VISIBLE_DEVICES")}
def load(name):
    try:
        module = importlib.import_module(name)
    except BaseException as exc:
        runtime["imports"][name] = text(exc)
        return None
    runtime["imports"][name] = None
    runtime[name + "_version"] = str(getattr(module, "__version__", "") or "") or None
    return module
torch = load("torch")
npu = load("torch_npu") if torch is not None else None
if npu is not None:
    try:
        runtime["is_available"] = bool(torch.npu.is_available())
        runtime["device_count"] = int(torch.npu.device_count())
    except BaseException as exc:
        runtime["npu_error"] = text(exc)
    runtime["cann_runtime"] = str(getattr(getattr(torch, "version", None), "cann", None) or "") or None
emit("runtime", runtime)
'''


def parse_probe(rc: int, stdout: str, stderr: str, python: str) -> dict[str, Any]:
    """The probe's output -> ``{"version", "error", "stack"}`` (``version``: sglang's, for the release check)."""
    found: dict[str, Any] = {}
    for line in stdout.splitlines():
        if line.startswith(MARK):
            kind, _unused, payload = line[len(MARK):].partition(" ")
            try:
                found[kind] = json.loads(payload)
            except ValueError:
                continue
    text = [line for line in (stderr or "").strip().splitlines() if line.strip()]
    last = text[-1].strip() if text else f"exit {rc}"
    versions = found.get("versions")
    if versions is None:
        return {"version": None, "error": last, "stack": None}
    runtime = found.get("runtime")
    stack = {"python": versions.get("python"), "packages": versions.get("packages") or {}, "runtime": runtime,
             "error": None if runtime is not None else f"{python} ended while importing torch / torch_npu: {last}"}
    if isinstance(versions.get("look"), dict):
        stack["look"] = versions["look"]
    sglang = (stack["packages"].get("sglang") or {}).get("version")
    return {"version": sglang, "error": None if sglang else f"sglang is not installed for {python}", "stack": stack}


def version_of(stack: Mapping[str, Any], module: str) -> str | None:
    """Installed version: the distribution's metadata, else the imported module's ``__version__``."""
    meta = ((stack.get("packages") or {}).get(module) or {}).get("version")
    return meta or ((stack.get("runtime") or {}).get(f"{module}_version"))


def major_minor(version: str | None) -> str | None:
    match = re.match(r"\s*v?(\d+)\.(\d+)", version or "")
    return f"{match.group(1)}.{match.group(2)}" if match else None


def built_for_cann(version: str | None) -> str | None:
    """The CANN release a local version label names (``...+95728843.cann.8.3.rc2.b210`` -> ``8.3.RC2``)."""
    match = re.search(r"[+.]cann[.-]?(\d+)\.(\d+)\.((?:rc|t|alpha)?\d+)", version or "", re.IGNORECASE)
    return f"{match.group(1)}.{match.group(2)}.{match.group(3).upper()}" if match else None


def same_cann(a: str, b: str) -> bool:
    return a.strip().lower() == b.strip().lower()


def _summary(stack: Mapping[str, Any]) -> str:
    parts = []
    for module, dist in MODULES.items():
        version = version_of(stack, module)
        parts.append(f"{dist or module} {version or '-'}")
    runtime = stack.get("runtime") or {}
    if "device_count" in runtime:
        parts.append(f"{runtime['device_count']} NPUs visible to torch")
    return ", ".join(parts)


def check(stack: Mapping[str, Any], python: str, needed: tuple[int, str] | None, toolkit: str | None,
          reference: Mapping[str, Any] | None, policy: str) -> list[tuple[str, str, str, str, str]]:
    """Findings ``(check, severity, found, expected, fix)`` on one interpreter's stack.

    ``needed``: (NPUs the host's services need, counted from --base-gpu-id, which service); ``toolkit``: the
    host's CANN toolkit version; ``reference``: ``ReferenceStack.as_dict()`` of the planned release.
    """
    out: list[tuple[str, str, str, str, str]] = []
    ref_packages = dict((reference or {}).get("packages") or {})
    release = (reference or {}).get("release")
    ref_name = f"reference environment of sglang {release}" if release else "no reference environment"
    out.append(("stack", OK, _summary(stack), f"{python}: {ref_name}", ""))
    runtime = stack.get("runtime")
    out.extend(_imports(stack, runtime, python))
    out.extend(_torch_pair(stack, ref_packages))
    if runtime is not None and "device_count" in runtime:
        out.extend(_npus_visible(runtime, needed))
    out.extend(_deep_ep(stack, toolkit))
    if policy != "off" and reference:
        out.extend(_reference(stack, toolkit, reference, policy))
    return out


def _imports(stack: Mapping[str, Any], runtime: Any, python: str) -> list[tuple[str, str, str, str, str]]:
    """torch and torch_npu import in the interpreter, and torch.npu answers."""
    out: list[tuple[str, str, str, str, str]] = []
    if runtime is None:
        out.append(("stack_import", FAIL, str(stack.get("error")), f"torch and torch_npu import in {python}",
                    "run the interpreter by hand with the CANN environment sourced (`source /etc/sglang/cann_env.sh; "
                    f"{python} -c 'import torch, torch_npu'`): a crash or hang there is a torch / torch_npu / CANN "
                    "mismatch or a driver problem"))
    else:
        for name in ("torch", "torch_npu"):
            error = (runtime.get("imports") or {}).get(name)
            if not error:
                continue
            if error.startswith("ModuleNotFoundError") and f"'{name}'" in error:
                fix = (f"install {name} for {python} (sglang_server_install installs the reference stack), or point "
                       "sglang_python at the interpreter that has it")
            else:
                fix = ("the package is there but does not load: reinstall the torch / torch_npu pair of the reference "
                       "environment, built for this host's CANN (its libraries come from the sourced set_env scripts)")
            out.append(("stack_import", FAIL, f"import {name}: {error}", f"{name} imports in {python}", fix))
        if runtime.get("npu_error"):
            out.append(("stack_npus", FAIL, f"torch.npu: {runtime['npu_error']}", "torch.npu answers",
                        "check the driver (`npu-smi info`) and the CANN environment of the interpreter"))
    return out


def _torch_pair(stack: Mapping[str, Any], ref_packages: Mapping[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """torch_npu is built for the installed torch (same major.minor)."""
    out: list[tuple[str, str, str, str, str]] = []
    torch_v, npu_v = version_of(stack, "torch"), version_of(stack, "torch_npu")
    if torch_v and npu_v and major_minor(torch_v) != major_minor(npu_v):
        ref = f"; the reference pairs torch {ref_packages['torch']} with torch_npu {ref_packages['torch_npu']}" \
            if ref_packages.get("torch") not in (None, "unknown") and ref_packages.get("torch_npu") not in (None, "unknown") \
            else ""
        out.append(("stack_torch_npu", FAIL, f"torch {torch_v}, torch_npu {npu_v}",
                    f"torch_npu built for torch {major_minor(torch_v)} (same major.minor)",
                    f"install the torch_npu release for torch {major_minor(torch_v)}, or the CPU build of torch "
                    f"{major_minor(npu_v)} that torch_npu {npu_v} is built for{ref}"))
    elif torch_v and npu_v:
        out.append(("stack_torch_npu", OK, f"torch {torch_v}, torch_npu {npu_v}", "same major.minor", ""))
    return out


def _npus_visible(runtime: Mapping[str, Any], needed: tuple[int, str] | None) -> list[tuple[str, str, str, str, str]]:
    """torch sees as many NPUs as the host's services need."""
    out: list[tuple[str, str, str, str, str]] = []
    count = int(runtime["device_count"])
    visible = runtime.get("visible_devices")
    found = f"torch.npu.device_count() = {count}" + (f" (ASCEND_RT_VISIBLE_DEVICES={visible})" if visible else "")
    if not runtime.get("is_available"):
        out.append(("stack_npus", FAIL, found + ", torch.npu.is_available() is False", "NPUs available to torch",
                    "check `npu-smi info`, the driver, the /dev/davinci* devices of a container and "
                    "ASCEND_RT_VISIBLE_DEVICES in the server's environment"))
    elif needed and count < needed[0]:
        out.append(("stack_npus", FAIL, found, f">= {needed[0]} NPUs: {needed[1]}",
                    "make the node's NPUs visible to the server's interpreter (unset or widen "
                    "ASCEND_RT_VISIBLE_DEVICES, pass every /dev/davinci* device into a container, check "
                    "`npu-smi info`), or lower --base-gpu-id / --tp-size through sglang_overrides"))
    else:
        out.append(("stack_npus", OK, found, f">= {needed[0]} NPUs" if needed else "NPUs visible", ""))
    return out


def _deep_ep(stack: Mapping[str, Any], toolkit: str | None) -> list[tuple[str, str, str, str, str]]:
    """deep-ep is built for the host's CANN."""
    out: list[tuple[str, str, str, str, str]] = []
    deep_ep = version_of(stack, "deep_ep")
    deep_cann = built_for_cann(deep_ep)
    if deep_cann and toolkit:
        if same_cann(deep_cann, toolkit):
            out.append(("stack_cann", OK, f"deep-ep {deep_ep}", f"built for CANN {toolkit}", ""))
        else:
            out.append(("stack_cann", FAIL, f"deep-ep {deep_ep} (built for CANN {deep_cann})",
                        f"built for this host's CANN {toolkit}",
                        f"install the deep-ep wheel of the sgl-kernel-npu release built for CANN {toolkit} (its file "
                        f"name names the CANN), or CANN {deep_cann} on this host"))
    return out


def _reference(stack: Mapping[str, Any], toolkit: str | None, reference: Mapping[str, Any],
               policy: str) -> list[tuple[str, str, str, str, str]]:
    severity = FAIL if policy == "fail" else WARN
    release = reference.get("release")
    why = f"reference environment of sglang {release}"
    out: list[tuple[str, str, str, str, str]] = []
    differ = []
    packages = reference.get("packages") or {}
    for module, dist in MODULES.items():
        # sglang's own release is the runtime check's; an unknown reference version is not compared.
        if dist is None or module == "sglang" or packages.get(dist) in (None, "unknown"):
            continue
        want, got = str(packages[dist]), version_of(stack, module)
        runtime = stack.get("runtime")
        if got is None and module in ("torch", "torch_npu") and \
                (runtime is None or (runtime.get("imports") or {}).get(module, "not tried")):
            continue  # no metadata and no import that worked: the import finding says what is wrong
        if got is None or got.strip().lower() != want.strip().lower():
            differ.append(dist)
            out.append(("stack_reference", severity, f"{dist} {got or 'not installed'}", f"{dist} {want} ({why})",
                        f"install {dist}=={want} (sglang_server_install installs the reference stack), or set "
                        "sglang_preflight_stack: off to run another stack knowingly"))
    cann = str(reference.get("cann") or "unknown")
    if cann != "unknown" and toolkit and not same_cann(cann, toolkit):
        differ.append("CANN")
        out.append(("stack_reference", severity, f"CANN {toolkit}", f"CANN {cann} ({why})",
                    f"install CANN {cann}, or a torch_npu / sgl-kernel-npu / deep-ep built for CANN {toolkit}"))
    if not differ:
        out.append(("stack_reference", OK, "every pinned package and CANN as documented", why, ""))
    return out
