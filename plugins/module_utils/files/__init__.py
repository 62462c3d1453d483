"""Files and services on a host: atomic writes, systemd units and their state, the start and deploy records,
the wheelhouse.  Imports nothing else of the collection but its own modules."""
