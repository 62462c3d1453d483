"""Whether and how a deployment proceeds: the fleet-wide preflight verdict, which services restart and in what
batches, the planned instances and routers, and the status of a running deployment.  May import core, plan,
targets and module_utils (checks, files, http)."""
