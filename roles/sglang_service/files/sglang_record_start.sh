#!/bin/sh
# Managed by Ansible (ascend.sglang); do not edit: changes are overwritten.
# Start record of a unit, run by its ExecStartPre before the service itself:
#   sglang_record_start.sh RECORD FILE...
# RECORD gets "invocation <this start's INVOCATION_ID>", then "<sha256>  <path>" per FILE ("-  <path>" when it
# is missing), written whole (a temporary file renamed over it), readable by root only: it holds digests of
# secret files. The deployment, status and doctor compare it with the files on disk
# (plugins/module_utils/files/_started.py): a unit whose files changed after its start has a restart pending.
# POSIX sh and coreutils only: it runs on every host before anything else of the service.
set -u
record=$1
shift
umask 077
mkdir -p -- "${record%/*}" || exit 1
tmp=$(mktemp -- "$record.XXXXXX") || exit 1
(
  printf 'invocation %s\n' "${INVOCATION_ID:-}"
  for path in "$@"; do
    if [ -f "$path" ]; then
      sha256sum -- "$path" || exit 1
    else
      printf -- '-  %s\n' "$path"
    fi
  done
) >"$tmp" && mv -f -- "$tmp" "$record" && exit 0
rm -f -- "$tmp"
exit 1
