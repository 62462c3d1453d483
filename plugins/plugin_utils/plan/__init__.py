"""Profile + inventory -> the typed plan.  The settings table and input contract, profiles and releases, the
topology, packing and placement, launch rules, the containers, watchdogs and metrics a service gets, the
planner, and the plan's frozen records (_records.py: what every consumer reads).  Pure; no Ansible import.
May import core and the host-side module_utils (npu, checks, files); nothing else of plugin_utils."""
