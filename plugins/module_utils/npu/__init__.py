"""The NPUs and their tools on a host: npu-smi and hccn_tool output parsed, the NPU/CPU topology and the fabric
read from them.  Imports nothing else of the collection."""
