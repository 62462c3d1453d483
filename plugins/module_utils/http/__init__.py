"""HTTP to servers and the router from a host: the one GET, the health wait, the router's worker API and its
convergence.  Imports nothing else of the collection but its own modules."""
