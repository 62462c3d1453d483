# shellcheck shell=bash
# Test stand-in of a CANN set_env script (ascend.sglang Molecule tests; not CANN).
# Sourced by /etc/sglang/cann_env.sh; exports a marker the tests look for in the servers' environment.
export STANDIN_CANN_ATB_SET_ENV=1
export ATB_HOME_PATH=/usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_1
