#!/usr/bin/env bash
# Prepares this checkout on a fresh machine: a Python venv at .venv with ansible-core and
# the test tools, and the link that makes the checkout the ascend.sglang collection.
# Safe to run again: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

pick_python() {
  # ansible-core 2.21 needs Python >= 3.12; fall back to the newest python3 present.
  local c
  if command -v pyenv >/dev/null 2>&1; then
    for c in "$(pyenv root)"/versions/3.1[2-9]*/bin/python3; do
      [ -x "$c" ] && { echo "$c"; return; }
    done
  fi
  for c in python3.13 python3.12 python3; do
    command -v "$c" >/dev/null 2>&1 && { command -v "$c"; return; }
  done
  echo "no python3 found" >&2; exit 1
}

if [ ! -x .venv/bin/python ]; then
  py=$(pick_python)
  echo "setup: creating .venv with $py"
  "$py" -m venv .venv
fi
# prometheus_client: the real Prometheus text parser the stand-in's /metrics is checked with (tests/unit/standins).
if ! .venv/bin/python -c 'import ansible, pytest, yaml, prometheus_client' 2>/dev/null; then
  if .venv/bin/python -c 'import sys; sys.exit(sys.version_info < (3, 12))'; then
    core="ansible-core==2.21.5"
  else
    core="ansible-core>=2.17,<2.20"
  fi
  echo "setup: installing $core and test tools"
  .venv/bin/pip install --quiet --disable-pip-version-check "$core" pytest pyyaml prometheus_client
fi

mkdir -p .collections/ansible_collections/ascend
# Only when missing or elsewhere: .ci/run runs the tests and the lint gates side by side, and both call this
# script (ln -sfn removes the link before it makes it again: the other run could find none).
link=.collections/ansible_collections/ascend/sglang
[ "$(readlink "$link" 2>/dev/null)" = "$ROOT" ] || ln -sfn "$ROOT" "$link"
echo "setup: ok ($(.venv/bin/ansible --version | sed -n 1p))"
