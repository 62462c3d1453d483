"""After a failure: the bundle on the controller and the diagnosis of its logs from the table of failure
signatures.  May import core and
module_utils.collect."""
