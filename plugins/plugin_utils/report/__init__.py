"""What operators read: the plan table, the preflight / doctor / stack reports and when they stop a run, the
benchmark verdict and its chart.  May import core, plan and
module_utils (bench, checks, npu)."""
