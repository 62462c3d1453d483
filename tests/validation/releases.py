"""Prints the releases of a package listed in profiles/_releases.yml (used by setup_parsers.sh)."""

import sys
from pathlib import Path

import yaml

data = yaml.safe_load((Path(__file__).resolve().parents[2] / "profiles" / "_releases.yml").read_text())
print(" ".join(data[sys.argv[1]]["releases"]))
