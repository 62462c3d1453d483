"""Monitoring from the plan: the metrics flags, the Prometheus files, and the real promtool on them.

The promtool tests run the real Prometheus rule engine (``promtool test rules``) on the generated rules: each alert
fires on a series that should raise it and stays silent on a healthy one.  They skip when promtool is absent
(tests/validation/setup_promtool.sh installs it), unless SGLANG_PROMTOOL_REQUIRED=1 (CI).
"""

from __future__ import annotations

import dataclasses

import json
import re
import subprocess

import pytest
import yaml
from local import BUCKETS, promtool

from ansible_collections.ascend.sglang.plugins.plugin_utils.targets import _monitoring
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan import _metrics
from ansible_collections.ascend.sglang.plugins.plugin_utils.core._errors import PlanError
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._planner import plan
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._profile import load_profile
from ansible_collections.ascend.sglang.plugins.plugin_utils.plan._topology import build_inventory

PD_RUST = "deepseek_r1_a3_32c_pd_6k_1k6_20ms"  # 2 x 1-node prefill, 1 x 2-node decode; TPOT 20 ms
# The documented PD routers run the Python --mini-lb (no exporter); without it, the Rust router.
RUST = {"router": {"args": {"--mini-lb": None}}}
PD32 = "deepseek_r1_pd32"
MIXED_2NODE = "qwen3_480b_a3_16c_mixed_3k5_1k5_50ms"
MIXED_1NODE = "qwen3_32b_a3_2c_mixed_3k5_1k5_50ms"
QWEN35 = "qwen3_5_397b_a3_8c_mixed_16k_1k_50ms"  # publishes no TTFT


def inventory(prefill=0, decode=0, mixed=0, router=0, router_ip=True, **variables):
    groups, hostvars = {}, {}
    for role, count, net in (("prefill", prefill, 1), ("decode", decode, 2), ("mixed", mixed, 3), ("router", router, 9)):
        groups[role] = [f"{role}{i}" for i in range(count)]
        for i, name in enumerate(groups[role]):
            address = f"10.{net}.{i // 250}.{i % 250 + 1}" if router_ip or role != "router" else f"{name}.example"
            hostvars[name] = {"sglang_host_ip": address, "sglang_nic": "ens1"}
    variables.setdefault("sglang_model_path", "/models/m")
    variables.setdefault("sglang_draft_model_path", "/models/draft")
    variables.setdefault("sglang_init_expert_location", "/models/experts.pt")
    return build_inventory(groups, hostvars, variables)


def pd(**variables):
    variables.setdefault("sglang_overrides", RUST)
    return plan(load_profile(PD_RUST), inventory(prefill=2, decode=2, router=1, **variables))


def services(p, role=None):
    return [s for h in p.hosts.values() for s in h.services if role in (None, s.role)]


def after(argv, name):
    return argv[argv.index(name) + 1]


# ---- the plan -------------------------------------------------------------------------------------------------

def test_metrics_on_by_default_servers_and_rust_router():
    p = pd()
    for svc in services(p):
        if svc.role == "router":
            assert after(svc.argv, "--prometheus-host") == "10.9.0.1"
            assert after(svc.argv, "--prometheus-port") == "29000"
            assert svc.listens["metrics"] == 29000
            assert svc.metrics_url == "http://10.9.0.1:29000/metrics"
        else:
            assert svc.argv.count("--enable-metrics") == 1
            assert svc.metrics_url == f"http://{svc.host}:{svc.port}/metrics"
    assert p.monitoring["metrics"] is True and p.monitoring["tpot_target_seconds"] == 0.02


def test_metrics_off_leaves_the_documented_launches():
    on, off = pd(), pd(sglang_metrics=False)
    for a, b in zip(services(on), services(off)):
        extra = ["--enable-metrics"] if a.role != "router" else [
            "--prometheus-host", "10.9.0.1", "--prometheus-port", "29000"]
        assert b.argv + extra == a.argv
        assert b.metrics_url is None
    # The Rust router still listens on its own default exporter port: the clash checks keep counting it.
    assert services(off, "router")[0].listens["metrics"] == _metrics.ROUTER_DEFAULT_METRICS_PORT
    with pytest.raises(ValueError, match="sglang_metrics is false"):
        _monitoring.files(off, "/srv/prometheus")


def test_mini_lb_router_has_no_exporter_and_no_target():
    p = plan(load_profile(PD32), inventory(prefill=2, decode=2, router=1))
    router = services(p, "router")[0]
    assert "--prometheus-port" not in router.argv and "metrics" not in router.listens
    assert router.metrics_url is None
    assert _monitoring.targets(p)["router"] == []


def test_router_named_by_host_name_binds_every_address():
    """sglang-router 0.3.x binds 0.0.0.0 when --prometheus-host is not an IP: the plan says so."""
    p = plan(load_profile(MIXED_1NODE), inventory(mixed=2, router=1, router_ip=False))
    router = services(p, "router")[0]
    assert after(router.argv, "--prometheus-host") == "0.0.0.0"
    assert router.metrics_url == "http://router0.example:29000/metrics"


def test_router_metrics_port_clash_names_the_variable():
    groups = {"mixed": ["m0"], "router": ["m0"]}
    hostvars = {"m0": {"sglang_host_ip": "10.3.0.1", "sglang_nic": "ens1"}}
    port = load_profile(MIXED_1NODE).roles["mixed"].port
    with pytest.raises(PlanError) as exc:
        plan(load_profile(MIXED_1NODE), build_inventory(groups, hostvars, {
            "sglang_model_path": "/m", "sglang_draft_model_path": "/d", "sglang_router_metrics_port": port}))
    assert ("router", "m0", "sglang_router_metrics_port") in [(f.group, f.host, f.variable) for f in exc.value.findings]
    assert f"port {port} is used twice" in str(exc.value)


@pytest.mark.parametrize("role, flag", [("router", "--prometheus-port"), ("router", "--prometheus-host"),
                                        ("decode", "--enable-metrics")])
def test_metrics_flags_are_not_overridable(role, flag):
    with pytest.raises(PlanError) as exc:
        pd(sglang_overrides={**RUST, role: {"args": {flag: 1}}})
    assert (role, None, f"sglang_overrides.{role}.args.{flag}") in [
        (f.group, f.host, f.variable) for f in exc.value.findings]


@pytest.mark.parametrize("name, value", [("sglang_metrics", "maybe"), ("sglang_router_metrics_port", 70000),
                                         ("sglang_alert_down_for", "1 minute"), ("sglang_alert_down_for", "0s"),
                                         ("sglang_metrics_scrape_interval", 15),
                                         ("sglang_alert_ttft_p90_seconds", -1)])
def test_bad_monitoring_values_are_refused(name, value):
    with pytest.raises(PlanError) as exc:
        plan(load_profile(MIXED_1NODE), inventory(mixed=1, **{name: value}))
    assert name in [f.variable for f in exc.value.findings]


def test_ttft_threshold_from_the_variable_the_published_mean_or_the_fallback():
    published = load_profile(MIXED_2NODE).published["figures"]["mean_ttft_ms"]
    p = plan(load_profile(MIXED_2NODE), inventory(mixed=2))
    assert p.monitoring["ttft_p90_seconds"] == pytest.approx(3 * published / 1000, abs=0.1)
    assert plan(load_profile(MIXED_2NODE), inventory(mixed=2, sglang_alert_ttft_p90_seconds=4)
                ).monitoring["ttft_p90_seconds"] == 4.0
    fallback = plan(load_profile(QWEN35), inventory(mixed=1)).monitoring
    assert fallback["ttft_p90_seconds"] == _metrics.TTFT_FALLBACK_S
    assert "sglang_alert_ttft_p90_seconds" in fallback["ttft_source"]


def test_a_profile_held_to_ttft_alerts_on_its_ttft_target_not_on_tpot():
    """A TTFT-only profile (MiMo's 'TTFT 5s' configurations): the TTFT alert's threshold is its target, and no
    TPOT alert is written (it has no TPOT target); the inventory's threshold still wins."""
    profile = dataclasses.replace(load_profile(MIXED_2NODE), tpot_target_ms=0.0, ttft_target_ms=5000.0)
    p = plan(profile, inventory(mixed=2))
    assert p.monitoring["ttft_p90_seconds"] == 5.0 and p.monitoring["tpot_target_seconds"] is None
    assert p.monitoring["ttft_source"] == "the profile's TTFT target (5000 ms)"
    alerts = {r["alert"]: r for g in yaml.safe_load(_monitoring.rules(p))["groups"] for r in g["rules"] if "alert" in r}
    assert "SGLangTPOTAboveTarget" not in alerts
    assert alerts["SGLangTTFTHigh"]["expr"].endswith("> 5")
    assert "the profile's TTFT target" in alerts["SGLangTTFTHigh"]["annotations"]["description"]
    assert plan(profile, inventory(mixed=2, sglang_alert_ttft_p90_seconds=4)).monitoring["ttft_p90_seconds"] == 4.0


# ---- the files ------------------------------------------------------------------------------------------------

def test_pd_targets_and_labels():
    p = pd()
    files = _monitoring.files(p, "/srv/prom")
    decode = json.loads(files[f"targets/{PD_RUST}.decode.json"])
    assert decode == [
        {"targets": ["10.2.0.1:8001"], "labels": {
            "deployment": PD_RUST, "profile": PD_RUST, "role": "decode", "sglang_instance": "decode-i0",
            "node_rank": "0", "nnodes": "2",
            "host": "decode0", "service": "sglang-decode-i0-r0"}},
        {"targets": ["10.2.0.2:8001"], "labels": {
            "deployment": PD_RUST, "profile": PD_RUST, "role": "decode", "sglang_instance": "decode-i0",
            "node_rank": "1", "nnodes": "2",
            "host": "decode1", "service": "sglang-decode-i0-r1"}}]
    prefill = json.loads(files[f"targets/{PD_RUST}.prefill.json"])
    assert [(e["targets"], e["labels"]["sglang_instance"]) for e in prefill] == [
        (["10.1.0.1:8000"], "prefill-i0"), (["10.1.0.2:8000"], "prefill-i1")]
    assert json.loads(files[f"targets/{PD_RUST}.router.json"])[0]["targets"] == ["10.9.0.1:29000"]
    assert json.loads(files[f"targets/{PD_RUST}.mixed.json"]) == []  # a role of no plan: emptied, never stale
    config = yaml.safe_load(files["prometheus.yml"])
    assert [j["job_name"] for j in config["scrape_configs"]] == [
        "sglang-prefill", "sglang-decode", "sglang-mixed", "sglang-router"]
    assert config["scrape_configs"][1]["file_sd_configs"] == [{"files": ["/srv/prom/targets/*.decode.json"]}]
    assert config["rule_files"] == ["/srv/prom/rules/*.yml"]
    alerts = {r["alert"]: r for g in yaml.safe_load(files[f"rules/{PD_RUST}.yml"])["groups"] for r in g["rules"]
              if "alert" in r}
    assert alerts["SGLangTPOTAboveTarget"]["expr"].endswith("> 0.02")
    missing = [r["expr"] for g in yaml.safe_load(files[f"rules/{PD_RUST}.yml"])["groups"] for r in g["rules"]
               if r.get("alert") == "SGLangRouterWorkersMissing"]
    assert [re.search(r'worker_type="(\w+)"\}\) < (\d+)', e).groups() for e in missing] == [
        ("prefill", "2"), ("decode", "1")]


def test_sixty_four_host_fleet_targets():
    p = plan(load_profile(MIXED_1NODE), inventory(mixed=64, router=1))
    found = _monitoring.targets(p)
    assert len(found["mixed"]) == 64 and len(found["router"]) == 1
    addresses = [e["targets"][0] for e in found["mixed"]]
    assert len(set(addresses)) == 64 and addresses[63] == "10.3.0.64:" + str(load_profile(MIXED_1NODE).roles["mixed"].port)
    assert [e["labels"]["sglang_instance"] for e in found["mixed"]] == sorted(
        {f"mixed-i{i}" for i in range(64)}, key=lambda k: int(k.split("i")[-1]))
    rules = yaml.safe_load(_monitoring.rules(p))
    missing = [r for g in rules["groups"] for r in g["rules"] if r.get("alert") == "SGLangRouterWorkersMissing"]
    assert len(missing) == 1 and missing[0]["expr"].endswith("< 64")


def test_files_do_not_depend_on_the_order_of_hosts():
    a = pd()
    b = dataclasses.replace(a, hosts=dict(reversed(list(a.hosts.items()))))
    assert _monitoring.files(a, "/d") == _monitoring.files(b, "/d")


# ---- the real promtool ----------------------------------------------------------------------------------------


def write(files, base):
    for rel, text in files.items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@pytest.mark.parametrize("pid, layout", [(PD_RUST, {"prefill": 2, "decode": 2, "router": 1, "sglang_overrides": RUST}),
                                         (PD32, {"prefill": 2, "decode": 2, "router": 1}),
                                         (MIXED_2NODE, {"mixed": 2, "router": 1}),
                                         (QWEN35, {"mixed": 1})])
def test_promtool_checks_config_and_rules(tmp_path, pid, layout):
    tool = promtool()
    write(_monitoring.files(plan(load_profile(pid), inventory(**layout)), str(tmp_path)), tmp_path)
    config = subprocess.run([tool, "check", "config", str(tmp_path / "prometheus.yml")], capture_output=True, text=True,
                            check=False)
    assert config.returncode == 0, config.stdout + config.stderr
    assert "1 rule files found" in config.stdout + config.stderr
    rules = subprocess.run([tool, "check", "rules", str(tmp_path / "rules" / f"{load_profile(pid).id}.yml")],
                           capture_output=True, text=True, check=False)
    assert rules.returncode == 0, rules.stdout + rules.stderr


def humanize_duration(v):
    """Prometheus' humanizeDuration template function (template/template.go), for the values used here."""
    if v >= 1:
        s, m, h = int(v) % 60, int(v) // 60 % 60, int(v) // 3600 % 24
        if h:
            return f"{h}h {m}m {s}s"
        return f"{m}m {s}s" if m else f"{v:.4g}s"
    return f"{v * 1000:.4g}ms"


def expand(text, labels, value):
    """An annotation as Prometheus renders it for an alert with these labels and this value."""
    text = re.sub(r"\{\{ \$value \| humanizeDuration \}\}", lambda _: humanize_duration(value), text)
    text = text.replace("{{ $value }}", f"{value:g}")
    return re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels.get(m.group(1), ""), text)


def series(name, labels, values):
    shown = ", ".join(f'{k}="{v}"' for k, v in labels.items())
    return {"series": f"{name}{{{shown}}}", "values": values}


def target_labels(entry, job):
    return dict(entry["labels"], job=job, instance=entry["targets"][0])


BUCKETS_ITL = BUCKETS["sglang:inter_token_latency_seconds"]
BUCKETS_TTFT = BUCKETS["sglang:time_to_first_token_seconds"]


def histogram(name, labels, buckets, above):
    """A histogram whose every observation (10 a step) falls in the bucket ending just above ``above``."""
    out = []
    for le in buckets + ["+Inf"]:
        counting = le == "+Inf" or le > above
        out.append(series(f"{name}_bucket", dict(labels, le=str(le) if le == "+Inf" else f"{le:g}"),
                          "0+10x120" if counting else "0x120"))
    return out


class Case:
    """One promtool test of the generated rules of one plan."""

    def __init__(self, p):
        self.plan = p
        self.found = _monitoring.targets(p)
        doc = yaml.safe_load(_monitoring.rules(p))
        self.alerts = {r["alert"]: r for g in doc["groups"] for r in g["rules"] if "alert" in r}

    def expected(self, alert, labels, value):
        rule = self.alerts[alert]
        out = {"exp_labels": dict(labels, severity=rule["labels"]["severity"])}
        out["exp_annotations"] = {k: expand(v, labels, value) for k, v in rule["annotations"].items()}
        return out


def run_promtool(tmp_path, p, tests):
    tool = promtool()
    write(_monitoring.files(p, str(tmp_path)), tmp_path)
    spec = {"rule_files": [str(tmp_path / "rules" / f"{p.profile}.yml")], "evaluation_interval": "15s",
            "tests": tests}
    (tmp_path / "tests.yml").write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    done = subprocess.run([tool, "test", "rules", str(tmp_path / "tests.yml")], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def mixed_case():
    return Case(plan(load_profile(MIXED_2NODE), inventory(mixed=2, router=1, sglang_alert_down_for="1m")))


def test_promtool_server_down_and_ranks_disagree(tmp_path):
    case = mixed_case()
    rank0, rank1 = (target_labels(e, "sglang-mixed") for e in case.found["mixed"])
    router = target_labels(case.found["router"][0], "sglang-router")
    instance = {k: rank0[k] for k in ("deployment", "profile", "role", "sglang_instance")}
    one_down = [series("up", rank0, "1x40"), series("up", rank1, "1x4 0x36"), series("up", router, "1x40")]
    all_down = [series("up", rank0, "1x4 0x36"), series("up", rank1, "1x4 0x36"), series("up", router, "1x40")]
    tests = [
        {"interval": "15s", "input_series": one_down, "alert_rule_test": [
            # 1m after the rank went down the alert is still pending; 2m after it fires.
            {"eval_time": "1m30s", "alertname": "SGLangServerDown", "exp_alerts": []},
            {"eval_time": "4m", "alertname": "SGLangServerDown",
             "exp_alerts": [case.expected("SGLangServerDown", dict(rank1, alertname="SGLangServerDown"), 0)]},
            {"eval_time": "4m", "alertname": "SGLangInstanceRanksDisagree",
             "exp_alerts": [case.expected("SGLangInstanceRanksDisagree", instance, 1)]},
            {"eval_time": "4m", "alertname": "SGLangRouterDown", "exp_alerts": []}]},
        {"interval": "15s", "input_series": all_down, "alert_rule_test": [
            {"eval_time": "4m", "alertname": "SGLangServerDown", "exp_alerts": [
                case.expected("SGLangServerDown", dict(r, alertname="SGLangServerDown"), 0) for r in (rank0, rank1)]},
            # The whole instance is down: no rank disagrees.
            {"eval_time": "4m", "alertname": "SGLangInstanceRanksDisagree", "exp_alerts": []}]},
        {"interval": "15s", "input_series": [series("up", r, "1x40") for r in (rank0, rank1, router)],
         "alert_rule_test": [{"eval_time": "9m", "alertname": a, "exp_alerts": []} for a in case.alerts]},
    ]
    run_promtool(tmp_path, case.plan, tests)


def test_promtool_router_down_unhealthy_worker_and_missing_workers(tmp_path):
    case = mixed_case()
    router = target_labels(case.found["router"][0], "sglang-router")
    worker = dict(router, worker="http://10.3.0.1:7439")
    pool = dict(router, worker_type="regular", connection_mode="http", model="unknown")
    down = {k: router[k] for k in ("deployment", "profile", "host", "service")}
    tests = [
        {"interval": "15s", "input_series": [series("up", router, "1x4 0x36")], "alert_rule_test": [
            {"eval_time": "4m", "alertname": "SGLangRouterDown",
             "exp_alerts": [case.expected("SGLangRouterDown", dict(router, alertname="SGLangRouterDown"), 0)]}]},
        {"interval": "15s", "input_series": [series("up", router, "1x40"), series("smg_worker_health", worker, "1x4 0x36"),
                                             series("smg_worker_pool_size", pool, "1x4 0x36")],
         "alert_rule_test": [
             {"eval_time": "4m", "alertname": "SGLangRouterWorkerUnhealthy", "exp_alerts": [
                 case.expected("SGLangRouterWorkerUnhealthy", dict(worker, alertname="SGLangRouterWorkerUnhealthy"), 0)]},
             {"eval_time": "4m", "alertname": "SGLangRouterWorkersMissing",
              "exp_alerts": [case.expected("SGLangRouterWorkersMissing", down, 0)]}]},
        {"interval": "15s", "input_series": [series("up", router, "1x40"), series("smg_worker_health", worker, "1x40"),
                                             series("smg_worker_pool_size", pool, "1x40")],
         "alert_rule_test": [{"eval_time": "9m", "alertname": a, "exp_alerts": []}
                             for a in ("SGLangRouterDown", "SGLangRouterWorkerUnhealthy", "SGLangRouterWorkersMissing")]},
    ]
    run_promtool(tmp_path, case.plan, tests)


def test_promtool_queueing_tpot_and_ttft(tmp_path):
    case = mixed_case()
    rank0 = target_labels(case.found["mixed"][0], "sglang-mixed")
    metric = dict(rank0, model_name="/models/m", engine_type="unified", tp_rank="0", pp_rank="0")
    instance = {k: rank0[k] for k in ("deployment", "profile", "role", "sglang_instance")}
    tpot = case.plan.monitoring["tpot_target_seconds"]
    ttft = case.plan.monitoring["ttft_p90_seconds"]
    slow_itl = min(b for b in BUCKETS_ITL if b > tpot)  # every token slower than the target
    slow_ttft = min(b for b in BUCKETS_TTFT if b > ttft)
    ok_itl = max(b for b in BUCKETS_ITL if b < tpot / 2)
    ok_ttft = max(b for b in BUCKETS_TTFT if b < ttft / 2)

    def p90(buckets, above):
        low = max(b for b in buckets if b <= above)
        high = min(b for b in buckets if b > above)
        return low + (high - low) * 0.9

    slow = (histogram("sglang:inter_token_latency_seconds", metric, BUCKETS_ITL, slow_itl - 1e-9)
            + histogram("sglang:time_to_first_token_seconds", metric, BUCKETS_TTFT, slow_ttft - 1e-9))
    healthy = (histogram("sglang:inter_token_latency_seconds", metric, BUCKETS_ITL, ok_itl - 1e-9)
               + histogram("sglang:time_to_first_token_seconds", metric, BUCKETS_TTFT, ok_ttft - 1e-9))
    tests = [
        # The queue grows by one request a step (15 s) from the start: pending for 5m, then firing.
        {"interval": "15s", "input_series": [series("sglang:num_queue_reqs", metric, "0+1x60")], "alert_rule_test": [
            {"eval_time": "4m", "alertname": "SGLangRequestsQueueing", "exp_alerts": []},
            {"eval_time": "12m", "alertname": "SGLangRequestsQueueing",
             "exp_alerts": [case.expected("SGLangRequestsQueueing", instance, 48)]}]},
        # A long but steady queue is no alert.
        {"interval": "15s", "input_series": [series("sglang:num_queue_reqs", metric, "7x60")], "alert_rule_test": [
            {"eval_time": "12m", "alertname": "SGLangRequestsQueueing", "exp_alerts": []}]},
        {"interval": "15s", "input_series": slow, "alert_rule_test": [
            {"eval_time": "9m", "alertname": "SGLangTPOTAboveTarget", "exp_alerts": []},
            {"eval_time": "20m", "alertname": "SGLangTPOTAboveTarget",
             "exp_alerts": [case.expected("SGLangTPOTAboveTarget", instance, p90(BUCKETS_ITL, slow_itl - 1e-9))]},
            {"eval_time": "20m", "alertname": "SGLangTTFTHigh",
             "exp_alerts": [case.expected("SGLangTTFTHigh", instance, p90(BUCKETS_TTFT, slow_ttft - 1e-9))]}]},
        {"interval": "15s", "input_series": healthy, "alert_rule_test": [
            {"eval_time": "20m", "alertname": a, "exp_alerts": []} for a in ("SGLangTPOTAboveTarget", "SGLangTTFTHigh")]},
    ]
    run_promtool(tmp_path, case.plan, tests)


def test_a_file_the_collection_did_not_write_is_foreign():
    p = pd()
    files = _monitoring.files(p, "/srv/prom")
    name = _monitoring.deployment(p)
    for rel, text in files.items():  # its own files may be replaced
        assert _monitoring.foreign(rel, text, name) is None, rel
    assert "header" in _monitoring.foreign("prometheus.yml", "global: {}\n", name)
    assert _monitoring.foreign(f"targets/{name}.mixed.json", "[]", name) is None
    assert "not JSON" in _monitoring.foreign(f"targets/{name}.mixed.json", "{", name)
    other = files[f"targets/{name}.decode.json"].replace(f'"deployment": "{name}"', '"deployment": "other"')
    assert "deployment other" in _monitoring.foreign(f"targets/{name}.decode.json", other, name)
    hand = '[{"targets": ["h:9100"], "labels": {"job": "node"}}]'
    assert "without its labels" in _monitoring.foreign(f"targets/{name}.decode.json", hand, name)


def test_two_deployments_of_one_profile_are_told_apart():
    a, b = pd(sglang_deployment="cluster-a"), pd(sglang_deployment="cluster-b")
    fa, fb = _monitoring.files(a, "/srv/prom"), _monitoring.files(b, "/srv/prom")
    assert set(fa) & set(fb) == {"prometheus.yml"} and fa["prometheus.yml"] == fb["prometheus.yml"]
    rules = yaml.safe_load(fa["rules/cluster-a.yml"])
    exprs = [r["expr"] for g in rules["groups"] for r in g["rules"]]
    assert all('deployment="cluster-a"' in e for e in exprs) and not any("cluster-b" in e for e in exprs)
