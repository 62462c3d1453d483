"""Preflight and doctor checks on a host: the checks table, findings, CPU, NPU, fabric, network, file, weights and
software checks and the server stack probe.  May import npu and files."""
