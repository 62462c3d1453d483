"""Import stub for torchvision (no CPU wheel exists here): the SGLang argument parser never uses it.

Any ``torchvision.x.y`` submodule imports, and any attribute is a harmless placeholder class, so
module-level ``from torchvision.transforms.functional import InterpolationMode`` succeeds.
"""

import importlib.abc
import importlib.machinery
import sys
import types

__version__ = "0.0.0"


class _PlaceholderType(type):
    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return cls


class _Placeholder(metaclass=_PlaceholderType):
    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        return _Placeholder


def _module_getattr(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _Placeholder


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):
        if fullname.startswith("torchvision."):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.__path__ = []
        module.__getattr__ = _module_getattr
        return module

    def exec_module(self, module):
        pass


__getattr__ = _module_getattr
sys.meta_path.insert(0, _Finder())
