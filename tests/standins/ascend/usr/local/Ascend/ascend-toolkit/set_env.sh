# shellcheck shell=bash
# Test stand-in of a CANN set_env script (ascend.sglang Molecule tests; not CANN).
# Sourced by /etc/sglang/cann_env.sh; exports a marker the tests look for in the servers' environment.
export STANDIN_CANN_TOOLKIT_SET_ENV=1
export ASCEND_TOOLKIT_HOME=/usr/local/Ascend/ascend-toolkit/latest
export ASCEND_HOME_PATH=/usr/local/Ascend/ascend-toolkit/latest
export ASCEND_OPP_PATH=/usr/local/Ascend/ascend-toolkit/latest/opp
