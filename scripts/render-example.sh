#!/usr/bin/env bash
# README command 1: set up, then render the DeepSeek-R1 32-card PD deployment of the example
# inventory into ./render (or $1). Contacts no host.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
out=${1:-render}
.venv/bin/ansible-playbook -i inventories/example playbooks/render.yml \
  -e sglang_profile=deepseek_r1_pd32 -e "sglang_render_dir=$(realpath -m "$out")"
echo "rendered into $out/:"
find "$out" -type f | sort
