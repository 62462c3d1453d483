"""The ground of the controller code: planner errors that name the group, host and variable, the one YAML
writer, the one text table, and output directories.  Imports nothing of the collection."""
