#!/usr/bin/python
# Copyright: ascend.sglang contributors
# Apache License 2.0
# The work happens in the action plugin of the same name, on the controller; this file
# carries the documentation (ansible-doc ascend.sglang.sglang_plan).

from __future__ import annotations

DOCUMENTATION = r"""
module: sglang_plan
short_description: Compute an SGLang deployment plan from a profile and the inventory
description:
  - Runs on the controller only, once, and contacts no host.
  - Reads the inventory groups C(prefill), C(decode), C(mixed) and C(router) (hosts in inventory order),
    each host's C(sglang_host_ip) (else C(ansible_host)) and C(sglang_nic), and the deployment variables
    C(sglang_model_path), C(sglang_draft_model_path), C(sglang_init_expert_location), C(sglang_overrides),
    C(sglang_release), C(sglang_router_release), C(sglang_python), C(sglang_router_python), C(sglang_secrets)
    (flag names only; the values never enter the plan), C(sglang_runtime) and the C(sglang_container_*) settings,
    C(sglang_preflight_checks), and each planned host's role variables (C(sglang_etc_dir), C(sglang_watchdog_port),
    C(sglang_restart_sec), ...).
  - An unknown launch flag (in C(sglang_overrides), C(sglang_secrets) or the profile) is refused naming the chosen
    release's nearest option.
  - Every value is checked against the input contract (types, syntax, ranges, scope) before anything else;
    user values are taken literally, never searched for planner placeholders.
  - Computes ranks, node counts, dist-init addresses, ports, bootstrap ports, the MemFabric store URL,
    the HCCL/GLOO NIC variables and the router's upstreams, and every service's full argv and environment.
  - Fails, listing every problem with the group, host and variable at fault, when the inventory does not
    fit the profile. Nothing is returned (so nothing can be written) unless the plan is complete.
version_added: 0.1.0
extends_documentation_fragment:
  - ascend.sglang.attributes.controller
  - ascend.sglang.profile
author:
  - ascend.sglang maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: Plan the deployment
  ascend.sglang.sglang_plan:
    profile: deepseek_r1_pd32
  delegate_to: localhost
  run_once: true
  register: planned

- name: Show the decode rank 1 command
  ansible.builtin.debug:
    msg: "{{ planned.plan.hosts['decode1'].services[0].argv | join(' ') }}"
"""

RETURN = r"""
table:
  description: What will run where - a summary line, one table row per service (host, role, instance, node rank of
    nnodes, address, ports, NPUs, runtime, release), one line per router with its upstreams.
  returned: success
  type: list
  elements: str
plan_table:
  description: The same as data - C(summary), C(services) (one dict per row, ports by name) and C(routers) (each with
    its upstreams); C(playbooks/plan.yml) writes it, with the plan, to C(sglang_plan_file).
  returned: success
  type: dict
plan:
  description:
    - The plan, in the dict form of the planner's typed C(Plan) (C(plugins/plugin_utils/_planner.py)); playbooks keep it
      as the fact C(sglang_plan). Every consumer reads these fields; none parses an argv back.
  returned: success
  type: dict
  contains:
    plan_version:
      description: Version of this form; raised whenever a field changes. A consumer refuses a plan of another version.
      type: int
      sample: 3
    profile:
      description: The profile id.
      type: str
    title:
      description: The profile's title.
      type: str
    deploy_mode:
      description: C(pd_separation) or C(pd_mixed).
      type: str
    hardware:
      description: The profile's hardware, C(A2) or C(A3); preflight checks the hosts against it.
      type: str
    releases:
      description: The SGLang and sglang-router releases the argv are rendered and validated for (C(sglang), C(sglang_router)).
      type: dict
      sample: {"sglang": "0.5.6.post2", "sglang_router": "0.3.0"}
    supported_releases:
      description: Per package, the releases that accept every flag of the deployment.
      type: dict
    release_changes:
      description: Documented flags rewritten for the chosen release, each with C(role), C(release), C(flag), C(rendered)
        (the new spelling, or C((dropped))) and C(reason).
      type: list
      elements: dict
    reference_stack:
      description: The reference environment of the planned SGLang release (C(release), C(cann), C(source), C(packages),
        C(wheelhouse)); null when none is recorded.
      type: dict
    cards:
      description: The cards the servers of this deployment occupy (output tokens per second per card divides by it).
      type: float
    runtime:
      description: C(host) (the host's Python) or C(container) (every service in the image).
      type: str
    container:
      description: The deployment's container settings, null in the host runtime.
      type: dict
      contains:
        engine:
          description: C(podman) or C(docker).
          type: str
        engine_path:
          description: The engine's absolute path the launchers run.
          type: str
        image:
          description: The image of every service.
          type: str
        shm_size:
          description: C(--shm-size) of docker containers.
          type: str
        ascend_runtime:
          description: Whether the Ascend container runtime adds the devices and driver files.
          type: bool
        image_archive:
          description: Controller tarball loaded instead of a pull; null when none.
          type: str
    preflight:
      description: Preflight's settings, C(checks) (check name -> C(fail), C(warn) or C(off)) and C(weights)
        (C(quick) or C(full)).
      type: dict
    monitoring:
      description:
        - The monitoring settings (C(plugins/plugin_utils/_monitoring.py)) - C(metrics) (C(sglang_metrics)),
          C(router_metrics_port), C(scrape_interval), C(down_for), C(ttft_p90_seconds) and where it comes from
          (C(ttft_source)), C(tpot_target_seconds) (the profile's); each service's C(metrics_url) is where
          Prometheus scrapes it (null with metrics off and for a C(--mini-lb) router).
      type: dict
    router_upstreams:
      description: Per server role, the instances the router fronts, each with C(instance), C(host), C(url) and, for
        prefill, C(bootstrap_port).
      type: dict
    instances:
      description: Every server instance in rollout order within its role, then every router.
      type: list
      elements: dict
      contains:
        key:
          description: The instance key (C(decode-i0), C(router-i0)); the services' C(instance_key).
          type: str
        role:
          description: C(prefill), C(decode), C(mixed) or C(router).
          type: str
        instance:
          description: Index of the instance within its role.
          type: int
        ranks:
          description: Its service names by node rank.
          type: list
          elements: str
        hosts:
          description: Its inventory hosts by node rank.
          type: list
          elements: str
        worker_url:
          description: A server instance's URL at rank 0 (the router's upstream); null for a router.
          type: str
        worker:
          description: A server instance's registration at a router (as the service's C(worker)).
          type: dict
        mini_lb:
          description: A router started with C(--mini-lb) (no worker API).
          type: bool
        router_url:
          description: A router's URL as its host reaches it; null for a server instance.
          type: str
    bench:
      description:
        - The documented benchmark aimed at the deployment's entry point; null when the profile documents none.
        - C(argv) is built from C(python), C(module) and C(flags); overrides apply to C(flags).
      type: dict
      contains:
        host:
          description: The inventory host the benchmark runs on (the router's, else the first server's).
          type: str
        address:
          description: The address it sends requests to.
          type: str
        port:
          description: The port it sends requests to.
          type: int
        python:
          description: Its interpreter (C(sglang_python)).
          type: str
        module:
          description: C(sglang.bench_serving).
          type: str
        flags:
          description: The flags in order, each C([flag, [values...]]); a flag without a value has an empty list.
          type: list
          elements: list
          sample: [["--dataset-name", ["random"]], ["--port", ["6688"]]]
        argv:
          description: The command, C(python -m module) and the flags.
          type: list
          elements: str
        container:
          description: The container runtime's engine command before C(argv); null in the host runtime.
          type: list
          elements: str
    hosts:
      description: Inventory hostname -> that host's part of the plan.
      type: dict
      contains:
        host_tuning:
          description: The profile's kernel settings (C(sysctl)) and CPU governor (C(cpu_governor)); empty on a router host.
          type: dict
        cann:
          description: The CANN environment of the host's servers, C(sources), C(unset), C(path_prepend) and
            C(ld_library_path_prepend); empty on a router host.
          type: dict
        settings:
          description: The host's role settings (C(sglang_etc_dir), C(sglang_watchdog_interval), ...), checked, defaults
            filled in; the host's files are written from them.
          type: dict
        services:
          description: The services the host runs.
          type: list
          elements: dict
          contains:
            name:
              description: The unit name without C(.service) (C(sglang-decode-i0-r1), C(sglang-router-i0)).
              type: str
            role:
              description: C(prefill), C(decode), C(mixed) or C(router).
              type: str
            instance:
              description: Index of its instance within the role.
              type: int
            node_rank:
              description: Its rank in the instance (0 for a router).
              type: int
            nnodes:
              description: Nodes of its instance.
              type: int
            instance_key:
              description: Its instance (C(decode-i0)); every rank of one restarts together.
              type: str
            inventory_host:
              description: The inventory host.
              type: str
            host:
              description: The address it serves on (a router's as its host probes it).
              type: str
            port:
              description: Its HTTP port.
              type: int
            bootstrap_port:
              description: A prefill server's bootstrap port; null otherwise.
              type: int
            dist_init_addr:
              description: Rank 0's C(address:port) of a multi-node instance; null otherwise.
              type: str
            argv:
              description: The full command line.
              type: list
              elements: str
            python:
              description: The host interpreter C(argv) starts with (C(sglang_python), a router's C(sglang_router_python));
                null in the container runtime, where the image's interpreter runs it.
              type: str
            env:
              description: Its environment (written to a root-readable file, never logged).
              type: dict
            secret_flags:
              description: Flags whose values the launcher reads from the host's root-only secret file (C(sglang_secrets)).
              type: list
              elements: str
            health_url:
              description: Its C(/health) URL (rank 0 and routers); null for other ranks.
              type: str
            ready_url:
              description: The Rust router's C(/readiness) URL; null otherwise.
              type: str
            depends_on:
              description: Services started before it (a router's rank 0s).
              type: list
              elements: str
            listens:
              description: What it listens on, name -> port (C(http), C(bootstrap), C(dist_init), C(watchdog), ...).
              type: dict
            devices:
              description: The NPUs (npu-smi order) a server rank uses; empty for a router.
              type: list
              elements: int
            model_paths:
              description: What a server reads from disk, each with C(flag), C(path), C(kind) (C(dir) or C(file)) and C(what).
              type: list
              elements: dict
            peers:
              description: Endpoints of other hosts it dials at start, each with C(address), C(port) and C(purpose).
              type: list
              elements: dict
            mem_fraction_static:
              description: Its C(--mem-fraction-static); null when not set.
              type: float
            worker:
              description: Rank 0 of a server instance, its registration at a router, C(url), C(worker_type) and, for
                prefill, C(bootstrap_port); null otherwise.
              type: dict
            mini_lb:
              description: A router started with C(--mini-lb) (no worker API, no readiness endpoint).
              type: bool
            watchdog:
              description:
                - The instance watchdog's facts. A server rank has C(instance_label), C(health_url) (rank 0's
                  C(/health_generate)), C(members) (each C(host), C(service), C(node_rank)) and C(evidence) (C(address),
                  C(port), C(url) where rank 0's watchdog serves its unit's InvocationID; null for a single-node instance).
                - A router has C(router_url) (null with C(--mini-lb)) and C(workers), each with C(instance_label), C(nnodes),
                  C(url), C(worker_type), C(health_url) and, for prefill, C(bootstrap_port).
              type: dict
            container:
              description: The container runtime's settings of the service, C(engine), C(engine_path), C(image), C(name),
                C(npus), C(devices), C(mounts), C(visible_devices), C(env_names), C(run) (the engine command before
                C(argv)), C(remove) and C(from_archive); null in the host runtime.
              type: dict
findings:
  description: Every problem found, each with message, group, host and variable.
  returned: failure
  type: list
  elements: dict
"""
