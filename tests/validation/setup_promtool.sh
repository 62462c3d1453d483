#!/usr/bin/env bash
# Installs the real Prometheus and promtool (Debian's prometheus package) that the monitoring tests and the
# pd_mixed Molecule scenario run, when missing: as root on Debian only; elsewhere it says what to install and the
# tests that need promtool skip with that reason (CI requires them: SGLANG_PROMTOOL_REQUIRED=1).
# The package's own service is not started by the install (policy-rc.d), nor enabled: the tests start their own.
set -euo pipefail
if command -v promtool >/dev/null && command -v prometheus >/dev/null; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "promtool: not installed; the Prometheus tests will skip (Debian: apt-get install prometheus, about 100 MB)"
  exit 0
fi
echo "promtool: installing Debian's prometheus package (prometheus, promtool; about 100 MB)"
policy=/usr/sbin/policy-rc.d
own_policy=0
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' > "$policy"; chmod 0755 "$policy"; own_policy=1
fi
install() { DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -q --no-install-recommends prometheus >/dev/null; }
rc=0
install 2>/dev/null || { apt-get update -q >/dev/null && install; } || rc=$?
[ "$own_policy" = 1 ] && rm -f "$policy"
[ "$rc" = 0 ] || { echo "promtool: installing prometheus failed" >&2; exit "$rc"; }
if [ -d /run/systemd/system ]; then
  systemctl disable --now prometheus >/dev/null 2>&1 || true
fi
