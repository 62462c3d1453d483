#!/usr/bin/env bash
# README command 2: set up, then run every test suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "test: 1/4 the venv (.venv: ansible-core and the test tools, about 70 MB from PyPI on a first run)"
./scripts/setup.sh
echo "test: 2/4 the real SGLang and sglang-router argument parsers (.cache/parsers)"
# The real SGLang / sglang-router argument parsers of every supported release (cached in .cache/).
./tests/validation/setup_parsers.sh
echo "test: 3/4 promtool and rsync"
# The real promtool the monitoring tests check the generated Prometheus files with (Debian's prometheus package),
# and rsync, which the weights staging runs.
./tests/validation/setup_promtool.sh
./tests/validation/setup_rsync.sh
export ANSIBLE_COLLECTIONS_PATH="$PWD/.collections"
export SGLANG_PARSERS_REQUIRED=1
.venv/bin/python scripts/profiles.py check
.venv/bin/python scripts/settings.py check
.venv/bin/python scripts/variables.py check
echo "test: 4/4 the tests (about 2200; a dot per test passed, s skipped)"
.venv/bin/python -m pytest "$@"
