#!/usr/bin/env bash
# README command 2: set up, then run every test suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
export ANSIBLE_COLLECTIONS_PATH="$PWD/.collections"
.venv/bin/python scripts/profiles.py check
.venv/bin/python -m pytest "$@"
