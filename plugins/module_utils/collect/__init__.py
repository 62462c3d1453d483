"""Evidence from a host: the failure collection, the Prometheus text parser and the host probe.  May import npu,
files, checks and http."""
