# Copyright: ascend.sglang contributors
# Apache License 2.0
# Generated from the settings table (plugins/plugin_utils/plan/_settings.py) by scripts/settings.py write:
# edit the table, not this file.
"""The plan's deployment and run settings as one frozen, typed record: a field per row of the settings table the
plan holds (``sglang_plan.settings``: checked, defaults filled in, the run settings resolved against the plan by
plan/_run_settings.py). Controller code reads the attributes (``Plan.typed_settings``), never a name with a default
of its own. A row without a default is None when unset. Private to the collection; pure, no Ansible import."""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping


@dataclasses.dataclass(frozen=True)
class PlanSettings:
    sglang_profile: str | None
    sglang_deployment: str | None
    sglang_router_listen: str
    sglang_model_path: str | None
    sglang_draft_model_path: str | None
    sglang_model_source: dict[str, str]
    sglang_model_owner: str | None
    sglang_model_mode: str
    sglang_init_expert_location: str | None
    sglang_release: str | None
    sglang_router_release: str | None
    sglang_python: str
    sglang_router_python: str
    sglang_container_engine_path: str | None
    sglang_metrics: bool
    sglang_router_metrics_port: int
    sglang_metrics_scrape_interval: str
    sglang_alert_down_for: str
    sglang_alert_ttft_p90_seconds: float | None
    sglang_monitoring_dir: str | None
    sglang_import_source: str | None
    sglang_import_parser_python: str | None
    sglang_import_router_python: str | None
    sglang_profiles_dir: str | None
    sglang_plan_file: str | None
    sglang_render_dir: str | None
    sglang_k8s_dir: str | None
    sglang_k8s_kind: str
    sglang_k8s_name: str
    sglang_k8s_namespace: str
    sglang_k8s_instances: dict[str, Any] | None
    sglang_k8s_npu_resource: str
    sglang_k8s_model_pvc: str | None
    sglang_k8s_secret_name: str
    sglang_k8s_secret_flags: dict[str, Any] | None
    sglang_k8s_router_discovery: bool
    sglang_k8s_prometheus_operator: bool
    sglang_k8s_rollout_partition: dict[str, Any] | None
    sglang_k8s_startup_seconds: int
    sglang_preflight_fail_on: str
    sglang_preflight_skip: bool
    sglang_preflight_stack: str
    sglang_preflight_json: str | None
    sglang_preflight_probe_timeout: int
    sglang_preflight_runtime_timeout: int
    sglang_preflight_min_hbm_free_ratio: float | None
    sglang_min_driver_version: str | None
    sglang_min_cann_version: str | None
    sglang_npu_smi: str
    sglang_hccn_tool: str
    sglang_npu_driver_info: str
    sglang_npu_toolkit_info: list[str]
    sglang_doctor_fail_on: str
    sglang_doctor_include_ok: bool
    sglang_doctor_json: str
    sglang_status_json: str
    sglang_status_fail_unhealthy: bool
    sglang_status_timeout: int
    sglang_stop_disable: bool
    sglang_stop_purge: bool
    sglang_stop_retries: int
    sglang_stop_port_timeout: int
    sglang_restart_only: list[str] | str
    sglang_restart_batch: int
    sglang_restart_router_timeout: int
    sglang_retire: list[str]
    sglang_retire_force: bool
    sglang_retire_drain_timeout: int
    sglang_upgrade_all_at_once: bool
    sglang_upgrade_bench: bool
    sglang_upgrade_bench_prompts: int
    sglang_upgrade_tpot_factor: float
    sglang_stage_parallel: int
    sglang_stage_tree: bool
    sglang_stage_fanout: int
    sglang_stage_verify: str
    sglang_stage_bwlimit: int
    sglang_stage_timeout: int
    sglang_stage_progress_interval: int
    sglang_state_dir: str
    sglang_bench_dir: str
    sglang_bench_environment: dict[str, Any]
    sglang_bench_fail: bool
    sglang_bench_model: str | None
    sglang_bench_overrides: dict[str, Any]
    sglang_bench_python: str
    sglang_bench_timeout: int
    sglang_bench_tokenizer: str | None
    sglang_bench_tpot_target_ms: float | None
    sglang_bench_tpot_tolerance: float
    sglang_bench_ttft_target_ms: float | None
    sglang_collect: bool
    sglang_collect_dir: str
    sglang_collect_since: str | None
    sglang_collect_max_lines: int
    sglang_collect_max_bytes: int
    sglang_collect_dmesg_lines: int

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PlanSettings:
        """The record of ``sglang_plan.settings`` (a missing row: None)."""
        return cls(**{field.name: data.get(field.name) for field in dataclasses.fields(cls)})
