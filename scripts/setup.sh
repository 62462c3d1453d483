#!/usr/bin/env bash
# Prepares this checkout on a fresh machine: a Python venv at .venv with ansible-core and
# the test tools, and the link that makes the checkout the ascend.sglang collection.
# Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

# The collection supports ansible-core 2.19 and newer (meta/runtime.yml). ansible-core 2.21 needs Python >= 3.12 on
# the controller, 2.19 runs on 3.11 (Debian 12's python3): each Python gets the newest release tested on it.
NEWEST_CORE="ansible-core==2.21.5"    # Python >= 3.12: every test, lint and sanity
OLDEST_CORE="ansible-core==2.19.14"   # Python 3.11: sanity, units and the test command (scripts/lint.sh)

# SGLANG_PYTHON=/path/to/python3 chooses the interpreter; else the newest python3 >= 3.12 found, else python3.
pick_python() {
  local c
  if [ -n "${SGLANG_PYTHON:-}" ]; then echo "$SGLANG_PYTHON"; return; fi
  if command -v pyenv >/dev/null 2>&1; then
    for c in "$(pyenv root)"/versions/3.1[2-9]*/bin/python3; do
      [ -x "$c" ] && { echo "$c"; return; }
    done
  fi
  for c in python3.14 python3.13 python3.12 python3; do
    command -v "$c" >/dev/null 2>&1 && { command -v "$c"; return; }
  done
  echo "setup: no python3 found: install Python 3.11 or newer (Debian 12: apt-get install python3 python3-venv)" >&2
  exit 1
}

# require_311 PY: stops unless PY is Python 3.11 or newer, saying what to install.
require_311() {
  local version
  version=$("$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])') || { echo "setup: $1 does not run" >&2; exit 1; }
  "$1" -c 'import sys; sys.exit(sys.version_info < (3, 11))' && return
  echo "setup: $1 is Python $version; ascend.sglang needs ansible-core 2.19 or newer, which needs Python 3.11 or newer on" \
       "the controller. Install one (Debian 12: apt-get install python3 python3-venv; RHEL 9: dnf install python3.11;" \
       "Ubuntu 22.04: apt-get install python3.11-venv), then rerun with SGLANG_PYTHON=/path/to/python3.11" \
       "(remove .venv first if it was made with the old Python)." >&2
  exit 1
}

if [ ! -x .venv/bin/python ]; then
  py=$(pick_python)
  require_311 "$py"   # before a venv is made from it
  echo "setup: creating .venv with $py ($("$py" --version))"
  "$py" -m venv .venv || { echo "setup: $py -m venv failed (Debian: apt-get install python3-venv)" >&2; exit 1; }
fi
require_311 .venv/bin/python   # a .venv an older setup.sh made
if .venv/bin/python -c 'import sys; sys.exit(sys.version_info < (3, 12))'; then core=$NEWEST_CORE; else core=$OLDEST_CORE; fi
# prometheus_client: the real Prometheus text parser the stand-in's /metrics is checked with (tests/unit/standins).
# kubernetes-validate: the Kubernetes JSON schemas (and jsonschema) the export's manifests are validated with.
# A venv whose ansible-core predates 2.19 (made by an older setup.sh) is brought to the tested release.
if ! .venv/bin/python -c '
import ansible.release, pytest, yaml, prometheus_client, kubernetes_validate, sys
sys.exit(tuple(int(x) for x in ansible.release.__version__.split(".")[:2]) < (2, 19))' 2>/dev/null; then
  echo "setup: installing $core and the test tools into .venv (about 100 MB from PyPI)"
  .venv/bin/pip install --quiet --disable-pip-version-check "$core" pytest pyyaml prometheus_client \
    kubernetes-validate==1.37.0
fi

mkdir -p .collections/ansible_collections/ascend
# Only when missing or elsewhere: .ci/run runs the tests and the lint gates side by side, and both call this
# script (ln -sfn removes the link before it makes it again: the other run could find none).
link=.collections/ansible_collections/ascend/sglang
[ "$(readlink "$link" 2>/dev/null)" = "$ROOT" ] || ln -sfn "$ROOT" "$link"
echo "setup: ok ($(.venv/bin/ansible --version | sed -n 1p))"
