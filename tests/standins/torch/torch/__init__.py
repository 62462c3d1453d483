"""Test stand-in of PyTorch (ascend.sglang tests); not PyTorch.  Only what the stand-in torch_npu and the
preflight stack probe touch: ``__version__``, ``torch.version`` and, once torch_npu is imported, ``torch.npu``.

Knob (environment, else a ``KEY=VALUE`` line of ``$ASCEND_STANDIN_DIR/pytorch``, default directory
/etc/ascend-standin): ``STANDIN_TORCH_VERSION`` (default 2.8.0+cpu, the reference image's).
"""
import types

from torch import _standin

__version__ = _standin.knob("STANDIN_TORCH_VERSION", "2.8.0+cpu")
# Like the CPU build: no CUDA; torch_npu sets ``cann`` when it is imported.
version = types.SimpleNamespace(__version__=__version__, cuda=None, cann=None, debug=False)
