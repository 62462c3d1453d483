#!/usr/bin/env bash
# README command 2: set up, then run every test suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
# The real SGLang / sglang-router argument parsers of every supported release (cached in .cache/).
./tests/validation/setup_parsers.sh
# The real promtool the monitoring tests check the generated Prometheus files with (Debian's prometheus package).
./tests/validation/setup_promtool.sh
export ANSIBLE_COLLECTIONS_PATH="$PWD/.collections"
export SGLANG_PARSERS_REQUIRED=1
.venv/bin/python scripts/profiles.py check
.venv/bin/python scripts/settings.py check
.venv/bin/python -m pytest "$@"
