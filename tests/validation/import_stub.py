"""Import stub for a package the SGLang argument parser never uses, installed as that package's __init__.py:
torchvision (no CPU wheel exists here) and xgrammar (SGLang 0.5.16's server_args imports the function-call
parsers, one of which imports ``xgrammar.StructuralTag`` at module level; the package is not installed: releases
are unpacked with --no-deps).

Any ``<package>.x.y`` submodule imports, and any attribute is a harmless placeholder class, so
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

    @classmethod
    def __get_pydantic_core_schema__(cls, _source, _handler):
        # A placeholder used as a field type of a pydantic model (0.5.16's OpenAI protocol types a field
        # xgrammar.StructuralTag) accepts anything: no request is ever validated by the parser.
        from pydantic_core import core_schema  # pylint: disable=import-outside-toplevel

        return core_schema.any_schema()

    def __getattr__(self, name):
        return _Placeholder


def _module_getattr(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _Placeholder


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):
        if fullname.startswith(__name__ + "."):
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
