"""Profile + inventory -> the typed plan.  The settings table and input contract, profiles and releases, the
topology, packing and placement, launch rules, the containers, watchdogs and metrics a service gets, and the
planner itself.  Pure; no Ansible import.  May import core and the host-side module_utils (npu, checks, files);
nothing else of plugin_utils."""
