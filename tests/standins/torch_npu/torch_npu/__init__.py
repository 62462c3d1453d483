"""Test stand-in of torch_npu (ascend.sglang tests); not torch_npu.  Needs the stand-in torch
(tests/standins/torch) on the path as well.

Like the real package, importing it registers ``torch.npu`` and sets ``torch.version.cann`` to the CANN of
the host (read from the toolkit's install info, as torch_npu reads it under ASCEND_HOME_PATH).  Devices:
``torch.npu.device_count()`` is the node of the stand-in npu-smi's shape (``$ASCEND_STANDIN_DIR/shape``:
a3 = 16 dies, a2 = 8 NPUs; default /etc/ascend-standin), narrowed by ASCEND_RT_VISIBLE_DEVICES as the
real runtime narrows it.

Knobs (environment, else ``KEY=VALUE`` lines of ``$ASCEND_STANDIN_DIR/pytorch``):
  STANDIN_TORCH_NPU_VERSION       __version__ (default 2.8.0.post2, the reference's release)
  STANDIN_TORCH_NPU_IMPORT_ERROR  when set, importing fails with ImportError(<this text>)
  STANDIN_TORCH_NPU_IMPORT_HANG   when set (to anything), importing never returns (a wedged device or driver)
"""
import time

import torch
from torch import _standin

while _standin.knob("STANDIN_TORCH_NPU_IMPORT_HANG"):
    time.sleep(60)
_error = _standin.knob("STANDIN_TORCH_NPU_IMPORT_ERROR")
if _error:
    raise ImportError(_error)

__version__ = _standin.knob("STANDIN_TORCH_NPU_VERSION", "2.8.0.post2")

from torch_npu import npu  # noqa: E402  (after the import-failure knob, as the real import order)

torch.npu = npu
torch.version.cann = npu.utils.get_cann_version()
