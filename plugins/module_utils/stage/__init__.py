"""Weights staging on a host (module sglang_stage): what a model directory and its source hold, the rsync
transfer of what a host lacks into a staging directory beside it, its verification and its move into place, and
the temporary rsync daemon a host that holds a verified copy serves it to the others with.  Imports nothing else of
the collection but module_utils/checks/_weights.py (the weights checks' digest cache) and files/_atomic_files.py."""
