#!/usr/bin/env bash
# Runs playbooks/doctor.yml and exits with the report's exit code: 0 ok, 1 warnings, 2 failures
# (2 also when no report could be written, e.g. the plan was rejected or the controller failed).
#   playbooks/doctor.sh -i INVENTORY -e sglang_profile=PROFILE_ID [other ansible-playbook options]
# The JSON report stays at $SGLANG_DOCTOR_JSON (default ./sglang-doctor.json).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "${here}")"
playbook_bin="${ANSIBLE_PLAYBOOK:-}"
if [ -z "${playbook_bin}" ]; then
  if [ -x "${root}/.venv/bin/ansible-playbook" ]; then playbook_bin="${root}/.venv/bin/ansible-playbook"
  else playbook_bin="ansible-playbook"; fi
fi
report="${SGLANG_DOCTOR_JSON:-${PWD}/sglang-doctor.json}"
rm -f -- "${report}"
"${playbook_bin}" "${here}/doctor.yml" -e "sglang_doctor_json=${report}" -e sglang_doctor_fail_on=never "$@"
rc=$?
if [ ! -s "${report}" ]; then
  echo "doctor: no report written (ansible-playbook exit ${rc}); counting as failures" >&2
  exit 2
fi
code="$(python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))["exit_code"]))' "${report}" 2>/dev/null)" || code=2
echo "doctor: report ${report}, exit ${code} (0 ok, 1 warnings, 2 failures)" >&2
if [ "${rc}" -ne 0 ] && [ "${code}" -lt 2 ]; then
  code=2  # a host failed in a way the report could not see
fi
exit "${code}"
