# Test stand-in of a CANN set_env script (ascend.sglang Molecule tests; not CANN).
# Sourced by /etc/sglang/cann_env.sh; exports a marker the tests look for in the servers' environment.
export STANDIN_CANN_CUSTOM_OPS_SET_ENV=1
export ASCEND_CUSTOM_OPP_PATH=/usr/local/Ascend/ascend-toolkit/latest/opp/vendors/customize${ASCEND_CUSTOM_OPP_PATH:+:${ASCEND_CUSTOM_OPP_PATH}}
