"""Plans of documented profiles on generated inventories, for the unit tests (no Ansible)."""

from __future__ import annotations

from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._planner import plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import load_profile
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._topology import build_inventory


def make_plan(profile_id, variables=None, host_vars=None, **groups):
    """``groups``: role -> host count; hosts get consecutive addresses and a NIC; ``variables``: deployment
    variables besides the model paths; ``host_vars``: variables every host sets. Returns (profile, plan dict)."""
    names, hostvars = {}, {}
    for role, count in groups.items():
        names[role] = [f"{role}{i}" for i in range(count)]
        for i, name in enumerate(names[role]):
            hostvars[name] = {"sglang_host_ip": f"10.0.{len(names)}.{i + 1}", "sglang_nic": "ens1", **(host_vars or {})}
    variables = {"sglang_model_path": "/models/m", "sglang_draft_model_path": "/models/draft", **(variables or {})}
    profile = load_profile(profile_id)
    return profile, plan(profile, build_inventory(names, hostvars, variables)).as_dict()


def instances_plan(profile, counts, variables):
    """The host rollout's plan of counts[role] instances of each server role, one host per rank (addresses
    10.<role>.x.y, a NIC), and a router host: the instances a Kubernetes export of the same counts runs. Returns the
    typed plan."""
    groups, hostvars = {}, {}
    for number, role in enumerate(profile.server_roles):
        groups[role] = [f"{role}{i}" for i in range(counts[role] * profile.roles[role].nnodes)]
        for i, host in enumerate(groups[role]):
            hostvars[host] = {"sglang_host_ip": f"10.{number + 1}.{i // 250}.{i % 250 + 1}", "sglang_nic": "ens1"}
    groups["router"] = ["router0"]
    hostvars["router0"] = {"sglang_host_ip": "10.9.0.1"}
    return plan(profile, build_inventory(groups, hostvars, variables))


# A service's fields the tests that build one by hand leave out (the consumer under test does not read them).
_SERVICE_DEFAULTS = {"role": "decode", "instance": 0, "node_rank": 0, "nnodes": 1, "inventory_host": "h",
                     "host": "127.0.0.1", "port": 8000, "bootstrap_port": None, "dist_init_addr": None,
                     "argv": ["python3"], "env": {}, "health_url": None, "ready_url": None, "depends_on": [],
                     "listens": {}}


def service_dict(**fields):
    """A service in the plan's dict form, the fields not given filled in (instance_key: the name)."""
    return {**_SERVICE_DEFAULTS, "instance_key": fields.get("name"), **fields}


def service(**fields):
    """A typed service (the plan's record), the fields not given filled in."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import Service
    return Service.from_dict(service_dict(**fields))


def plan_dict(hosts, **fields):
    """A plan's dict form (sglang_plan, as the playbooks hand it to an action) of hand-made hosts: host -> {services:
    [partial service dicts], cann, host_tuning, settings}; fields: the plan's own (profile, instances, ...)."""
    from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._records import HostPlan, Plan
    typed = {name: HostPlan.from_dict({"host_tuning": entry.get("host_tuning") or {}, "cann": entry.get("cann") or {},
                                       "settings": entry.get("settings") or {},
                                       "services": [service_dict(**svc) for svc in entry.get("services") or []]})
             for name, entry in hosts.items()}
    base = {"profile": "p", "title": "p", "deploy_mode": "pd", "releases": {}, "supported_releases": {},
            "release_changes": [], "router_upstreams": {}, "bench": None, "cards": 1.0}
    return Plan(hosts=typed, **dict(base, **fields)).as_dict()
