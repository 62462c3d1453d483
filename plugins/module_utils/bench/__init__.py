"""The benchmark run on a host and its parsed results.  Imports nothing else of the collection."""
