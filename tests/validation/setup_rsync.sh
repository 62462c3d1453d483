#!/usr/bin/env bash
# Installs rsync, which the weights staging runs on the hosts (module sglang_stage) and its tests run on this
# machine, when missing: as root on Debian only; elsewhere it says what to install and the tests that need rsync skip
# with that reason (CI requires them: SGLANG_RSYNC_REQUIRED=1).
set -euo pipefail
if command -v rsync >/dev/null; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "rsync: not installed; the weights staging tests will skip (Debian: apt-get install rsync)"
  exit 0
fi
echo "rsync: installing Debian's rsync package"
install() { DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -q --no-install-recommends rsync >/dev/null; }
install 2>/dev/null || { apt-get update -q >/dev/null && install; } || { echo "rsync: installing it failed" >&2; exit 1; }
