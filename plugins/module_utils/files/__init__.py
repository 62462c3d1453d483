"""Files and services on a host: atomic writes, systemd units and their state, the start and deploy records,
the wheelhouse, the generations of a service's files an upgrade keeps and puts back (_generations).  Imports
nothing else of the collection but its own modules."""
