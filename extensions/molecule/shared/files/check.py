"""Controller-side checks of the Molecule scenarios (standard library only). Prints one line per check,
"ok ..." or "FAIL ...", and exits 1 when one failed.

  check.py plan RENDER_DIR COLLECTED.json
      every planned service (render mode JSON) runs with exactly the planned argv and at least the planned
      environment (stand-in record for servers, /proc for the router), sources the CANN scripts of its
      host; ranks of a multi-node instance share one --dist-init-addr and have node ranks 0..n-1.
  check.py route RENDER_DIR PROBE.json COLLECTED.json ROLE
      the completion and the streamed chat completion sent through the router were answered by a ROLE
      stand-in; for PD (ROLE=decode) the bootstrap_host/bootstrap_port it received are a planned prefill
      instance's address and bootstrap port, and that prefill stand-in got the same bootstrap_room.
  check.py restarts BEFORE.json AFTER.json ROLE[,ROLE]   (a role such as decode, or an instance key such as mixed-i0)
      exactly the units of the given roles got a new systemd InvocationID.
  check.py containers COLLECTED.json IMAGE
      container runtime: every service runs in a running container of its unit's name from IMAGE; no watchdog does.
  check.py order COLLECTED.json
      health-gated start order: each router's container started after every server rank 0 could first answer
      /health 200 (its stand-in's recorded start plus its startup delay, SGLANG_STANDIN_STARTUP_DELAY, default
      1 s, before which it answers 503).
"""
from __future__ import annotations

import json
import pathlib
import sys

failures = 0


def report(ok: bool, text: str) -> None:
    global failures
    print(("ok   " if ok else "FAIL ") + text)
    if not ok:
        failures += 1


def load_plan(render_dir: str) -> dict[str, dict[str, dict]]:
    plan: dict[str, dict[str, dict]] = {}
    for path in sorted(pathlib.Path(render_dir).glob("*/*.json")):
        if not path.name.endswith(".watchdog.json"):  # a watchdog's configuration, not a service
            plan.setdefault(path.parent.name, {})[path.stem] = json.loads(path.read_text())
    return plan


def flag(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


def check_plan(render_dir: str, collected_path: str) -> None:
    plan = load_plan(render_dir)
    collected = json.loads(pathlib.Path(collected_path).read_text())
    report(bool(plan), f"render mode planned {sum(len(v) for v in plan.values())} services on {len(plan)} hosts")
    instances: dict[tuple[str, int], list[tuple[str, dict]]] = {}
    for host, services in plan.items():
        cann_path = pathlib.Path(render_dir) / host / "cann_env.sh"
        cann = cann_path.read_text() if cann_path.exists() else ""
        for name, svc in services.items():
            got = collected.get(host, {}).get(name)
            if not got:
                report(False, f"{host}/{name}: no such unit on the host")
                continue
            report(got["systemd"].get("ActiveState") == "active", f"{host}/{name}: active")
            rdir = pathlib.Path(render_dir) / host
            for kind, rendered in (("env", rdir / f"{name}.env"), ("sh", rdir / f"{name}.sh"),
                                   ("service", rdir / f"{name}.service"), ("cann_env.sh", rdir / "cann_env.sh")):
                # A router-only host gets no cann_env.sh: none rendered, none installed.
                want = rendered.read_text() if rendered.exists() else None
                report(got["files"].get(kind) == want,
                       f"{host}/{name}: installed {kind} file equals the rendered one"
                       + ("" if want is not None else " (neither exists)"))
            if svc["role"] == "router":
                # sglang-router rewrites its process title and environment block (setproctitle): /proc
                # cannot show them; the launcher and env file above are what systemd runs.
                report(bool(got["proc"]) and got["proc"]["argv"][:1] == ["sglang::router"],
                       f"{host}/{name}: the real sglang-router runs ({(got['proc'] or {}).get('argv', [''])[0]})")
                continue
            run = got["record"]
            what = "stand-in record"
            if not run:
                report(False, f"{host}/{name}: no {what}")
                continue
            report(run["argv"] == svc["argv"], f"{host}/{name}: argv equals the plan ({len(svc['argv'])} tokens, {what})"
                   + ("" if run["argv"] == svc["argv"] else f"\n     plan: {svc['argv']}\n     ran:  {run['argv']}"))
            missing = {k: v for k, v in svc["env"].items() if run["env"].get(k) != v}
            report(not missing, f"{host}/{name}: all {len(svc['env'])} planned env values present"
                   + ("" if not missing else "; wrong or missing: "
                      + ", ".join(f"{k}={v!r} (got {run['env'].get(k)!r})" for k, v in missing.items())))
            if svc["role"] != "router":
                markers = {"ascend-toolkit/set_env.sh": "STANDIN_CANN_TOOLKIT_SET_ENV",
                           "nnal/atb/set_env.sh": "STANDIN_CANN_ATB_SET_ENV",
                           "customize/bin/set_env.bash": "STANDIN_CANN_CUSTOM_OPS_SET_ENV"}
                for script, marker in markers.items():
                    if script in cann:
                        report(run["env"].get(marker) == "1", f"{host}/{name}: sourced {script} ({marker}=1)")
                if "bishengir/bin" in cann and not got.get("container"):
                    report(run["env"].get("PATH", "").startswith("/usr/local/Ascend/8.5.0/compiler/bishengir/bin:"),
                           f"{host}/{name}: PATH starts with the CANN prefix")
                elif "bishengir/bin" in cann:
                    # Container runtime: the host's path_prepend is skipped (docs/docsite/rst/container_runtime.rst).
                    report(not run["env"].get("PATH", "").startswith("/usr/local/Ascend/8.5.0/compiler/bishengir/bin:"),
                           f"{host}/{name}: PATH is the image's (the host's CANN path prefix is not applied)")
                instances.setdefault((svc["role"], svc["instance"]), []).append((name, run))
    for unit_path in sorted(pathlib.Path(render_dir).glob("*/sglang-watchdog-*.service")):
        host, unit = unit_path.parent.name, unit_path.name[: -len(".service")]
        name = unit[len("sglang-watchdog-"):]
        got = collected.get(host, {})
        report((got.get(unit) or {}).get("files", {}).get("service") == unit_path.read_text(),
               f"{host}/{unit}: installed watchdog unit equals the rendered one")
        report((got.get(name) or {}).get("files", {}).get("watchdog.json")
               == (unit_path.parent / f"{name}.watchdog.json").read_text(),
               f"{host}/{name}: installed watchdog configuration equals the rendered one")
    for (role, index), ranks in sorted(instances.items()):
        if len(ranks) < 2:
            continue
        addrs = {flag(r["argv"], "--dist-init-addr") for _unused, r in ranks}
        report(len(addrs) == 1 and None not in addrs,
               f"{role} instance {index}: {len(ranks)} ranks share --dist-init-addr {sorted(map(str, addrs))}")
        node_ranks = sorted(int(flag(r["argv"], "--node-rank") or -1) for _unused, r in ranks)
        report(node_ranks == list(range(len(ranks))), f"{role} instance {index}: node ranks {node_ranks}")
        nnodes = {flag(r["argv"], "--nnodes") for _unused, r in ranks}
        report(nnodes == {str(len(ranks))}, f"{role} instance {index}: --nnodes {sorted(map(str, nnodes))}")


def check_route(render_dir: str, probe_path: str, requests_path: str, role: str) -> None:
    plan = load_plan(render_dir)
    probe = json.loads(pathlib.Path(probe_path).read_text())
    collected = json.loads(pathlib.Path(requests_path).read_text())
    # Requests received by the prefill stand-ins, per host.
    requests = {host: [r for unit, item in units.items() if unit.startswith("sglang-prefill-")
                       for r in item.get("requests", [])]
                for host, units in collected.items()}
    report(probe.get("ready_status") == 200,
           f"router readiness answered {probe.get('ready_status')} (after {probe.get('ready_after_s')} s)")
    prefills = {}
    for host, services in plan.items():
        for svc in services.values():
            if svc["role"] == "prefill" and svc["node_rank"] == 0:
                prefills[flag(svc["argv"], "--host")] = (host, int(flag(svc["argv"], "--disaggregation-bootstrap-port")))
    stream = probe.get("stream") or {}
    answers = [("completion", (probe.get("completion") or {}).get("standin")),
               ("streamed chat completion", (stream.get("first") or {}).get("standin"))]
    report(stream.get("last") == "[DONE]" and stream.get("events", 0) >= 2,
           f"stream: {stream.get('events')} SSE events ending with data: {stream.get('last')}")
    for what, standin in answers:
        if not standin:
            report(False, f"{what}: no stand-in answer: {probe}")
            continue
        report(standin.get("role") == role, f"{what}: answered by {standin.get('role')} {standin.get('unit')} "
                                            f"on {standin.get('hostname')}")
        if role != "decode":
            continue
        bhost, bport, room = standin.get("bootstrap_host"), standin.get("bootstrap_port"), standin.get("bootstrap_room")
        planned = prefills.get(bhost)
        report(planned is not None and planned[1] == bport,
               f"{what}: bootstrap_host {bhost} bootstrap_port {bport} = planned prefill {planned}")
        if planned is None:
            continue
        seen = [r for r in requests.get(planned[0], []) if r.get("request", {}).get("bootstrap_room") == room]
        others = [h for h, reqs in requests.items() if h != planned[0]
                  and any(r.get("request", {}).get("bootstrap_room") == room for r in reqs)]
        report(len(seen) == 1 and not others,
               f"{what}: prefill {planned[0]} got the request with bootstrap_room {room} (other prefills: {others})")


def check_restarts(before_path: str, after_path: str, roles: str) -> None:
    """``roles``: comma-separated roles (decode) or instance keys (mixed-i0) whose units must have restarted; every
    other unit must not have."""
    before = json.loads(pathlib.Path(before_path).read_text())
    after = json.loads(pathlib.Path(after_path).read_text())
    wanted = set(roles.split(","))
    for host, units in sorted(before.items()):
        for unit, item in sorted(units.items()):
            # A watchdog (sglang-watchdog-<service>) counts with its service: deployment restarts both.
            key = unit.removeprefix("sglang-watchdog-").removeprefix("sglang-")  # mixed-i0-r0, router-i0
            old = item["systemd"].get("InvocationID")
            new = after.get(host, {}).get(unit, {}).get("systemd", {}).get("InvocationID")
            restarted = old != new
            report(restarted == any(key == w or key.startswith(w + "-") for w in wanted),
                   f"{host}/{unit}: {'restarted' if restarted else 'not restarted'}"
                   f" (ActiveEnterTimestamp {item['systemd'].get('ActiveEnterTimestamp')} -> "
                   f"{after.get(host, {}).get(unit, {}).get('systemd', {}).get('ActiveEnterTimestamp')})")


def check_containers(collected_path: str, image: str) -> None:
    collected = json.loads(pathlib.Path(collected_path).read_text())
    report(bool(collected), f"collected {len(collected)} hosts")
    for host, units in sorted(collected.items()):
        for unit, item in sorted(units.items()):
            got = item.get("container")
            if unit.startswith("sglang-watchdog-"):
                report(got is None, f"{host}/{unit}: runs on the host (no container)")
                continue
            report(bool(got) and got["running"] and got["name"] == unit and got["image"] == image,
                   f"{host}/{unit}: runs in container {(got or {}).get('name')} of {(got or {}).get('image')}")


def check_order(collected_path: str) -> None:
    collected = json.loads(pathlib.Path(collected_path).read_text())
    healthy_from: dict[str, float] = {}
    routers: dict[str, float] = {}
    for host, units in sorted(collected.items()):
        for unit, item in sorted(units.items()):
            if unit.startswith("sglang-router-") and item.get("container"):
                routers[f"{host}/{unit}"] = item["container"]["started"]
            elif unit.endswith("-r0") and not unit.startswith("sglang-watchdog-") and item.get("record"):
                rec = item["record"]
                healthy_from[f"{host}/{unit}"] = (rec["started"]
                                                  + float(rec["env"].get("SGLANG_STANDIN_STARTUP_DELAY", "1")))
    report(bool(routers) and bool(healthy_from), f"{len(routers)} router(s), {len(healthy_from)} server rank(s) 0")
    for router, started in sorted(routers.items()):
        for server, ready in sorted(healthy_from.items()):
            report(started >= ready, f"{router} started {started - ready:+.1f} s after {server} could first be healthy")


def main() -> None:
    mode, args = sys.argv[1], sys.argv[2:]
    {"plan": check_plan, "route": check_route, "restarts": check_restarts, "containers": check_containers,
     "order": check_order}[mode](*args)
    print(f"{mode}: {'all checks passed' if failures == 0 else f'{failures} check(s) failed'}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
