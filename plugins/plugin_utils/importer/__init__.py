"""Best-practice documents -> profiles: reading a document, running its scripts with recorders, mapping them to
profiles, validating them with the real parsers, and writing an operator's profiles directory.  May import core,
plan, report and module_utils.bench."""
