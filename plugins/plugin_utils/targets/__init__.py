"""The plan as the files of a target: every host's file list, what the server install takes, the Kubernetes
export, the Prometheus files, the wheelhouse.  Pure; no Ansible import.  May import core, plan and
module_utils.files."""
