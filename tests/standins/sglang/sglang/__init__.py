"""Test stand-in of the SGLang package (ascend.sglang Molecule scenarios); not SGLang."""
__version__ = "0.0.0+standin"
