"""``torch.npu`` of the stand-in: device count from the stand-in npu-smi's shape."""
import glob
import os
import types

from torch import _standin

NODE_DEVICES = {"a3": 16, "a2": 8}


def _node_devices() -> int:
    try:
        with open(os.path.join(_standin.standin_dir(), "shape"), encoding="utf-8") as handle:
            shape = handle.read().strip().lower()
    except OSError:
        return 0  # no stand-in driver: no device, as on a host without the NPU driver
    return NODE_DEVICES.get(shape, 0)


def device_count() -> int:
    total = _node_devices()
    visible = os.environ.get("ASCEND_RT_VISIBLE_DEVICES")
    if visible is None:
        return total
    # The runtime keeps the listed ids up to the first one that does not exist.
    count = 0
    for item in visible.split(","):
        item = item.strip()
        if not item.isdigit() or int(item) >= total:
            break
        count += 1
    return count


def is_available() -> bool:
    return device_count() > 0


def _get_cann_version(module: str = "CANN") -> str:
    """The installed toolkit's version (empty when unknown), like torch_npu.npu.utils.get_cann_version."""
    home = os.environ.get("ASCEND_HOME_PATH", "")
    for path in sorted(glob.glob(os.path.join(home, "*", "ascend_toolkit_install.info"))) if home else []:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("version="):
                    return line.split("=", 1)[1].strip()
    return ""


utils = types.SimpleNamespace(get_cann_version=_get_cann_version)
