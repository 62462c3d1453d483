"""Offline stand-in for the get-pip.py bootstrap script ansible-test downloads from its own file server.

ansible-test creates each sanity virtualenv without pip, then runs this file with the pip options and
pinned packages (``pip==X``) it wants; scripts/lint.sh places it where ansible-test caches that script.
The pip wheel bundled with Python (ensurepip) starts the environment, then the pinned packages come from the
configured package index like every other requirement.
"""

from __future__ import annotations

import subprocess
import sys

# get-pip.py options that the pip command line does not know.
GET_PIP_ONLY = {"--no-setuptools", "--no-wheel"}

subprocess.run([sys.executable, "-m", "ensurepip", "--default-pip"], check=True, stdout=subprocess.DEVNULL)
subprocess.run([sys.executable, "-m", "pip", "install"] + [a for a in sys.argv[1:] if a not in GET_PIP_ONLY],
               check=True)
