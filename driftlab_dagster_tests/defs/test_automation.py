"""The nightly full run and the repair job: cron, run keys stable within a night, and, on an empty
warehouse, every partition materialised in the order its page history needs."""

from __future__ import annotations

import datetime as dt

import dagster as dg
import duckdb
import pytest

from driftlab_dagster.core.reports import results_csv
from driftlab_dagster.core.study import run_study
from driftlab_dagster.defs import build_definitions
from driftlab_dagster.headless import execute_job
from driftlab_dagster_tests.conftest import config_for

pytestmark = pytest.mark.dagster

NIGHT = dt.datetime(2026, 12, 1, 2, tzinfo=dt.UTC)
W = "tessaly_freight"


def _requests(definitions: dg.Definitions, name: str, when: dt.datetime = NIGHT) -> list[dg.RunRequest]:
    schedule = definitions.resolve_schedule_def(f"{W}__{name}")
    return list(schedule(dg.build_schedule_context(scheduled_execution_time=when)))


def test_the_nightly_runs_start_at_two_utc_and_cover_every_partition_in_one_run_each(tmp_path):
    definitions = build_definitions(config_for(tmp_path))
    for name in ("nightly_study", "nightly_maintenance"):
        schedule = definitions.resolve_schedule_def(f"{W}__{name}")
        assert schedule.cron_schedule == "0 2 * * *" and schedule.execution_timezone == "UTC"
        assert schedule.default_status == dg.DefaultScheduleStatus.RUNNING
    [study] = _requests(definitions, "nightly_study")
    assert study.tags["dagster/asset_partition_range_start"] == "2026-09-01|Fresh"
    assert study.tags["dagster/asset_partition_range_end"] == "2026-09-29|PartialPages"
    [maintenance] = _requests(definitions, "nightly_maintenance")
    assert (maintenance.tags["dagster/asset_partition_range_start"],
            maintenance.tags["dagster/asset_partition_range_end"]) == ("2026-09-08", "2026-09-29")


def test_the_cron_comes_from_the_settings(tmp_path):
    definitions = build_definitions(config_for(tmp_path).override(nightly_cron="30 3 * * 1"))
    assert definitions.resolve_schedule_def(f"{W}__nightly_study").cron_schedule == "30 3 * * 1"


def test_run_keys_are_stable_within_a_night_and_new_the_next_night(tmp_path):
    definitions = build_definitions(config_for(tmp_path))
    keys = lambda when: {r.run_key for r in _requests(definitions, "nightly_study", when)}  # noqa: E731
    assert keys(NIGHT) == keys(NIGHT + dt.timedelta(minutes=3))
    assert keys(NIGHT).isdisjoint(keys(NIGHT + dt.timedelta(days=1)))


def test_the_nightly_run_on_an_empty_warehouse_materialises_every_partition(tmp_path, world):
    config = config_for(tmp_path)
    definitions = build_definitions(config)
    instance = dg.DagsterInstance.ephemeral()
    for name, job in (("nightly_study", f"{W}__study"), ("nightly_maintenance", f"{W}__maintenance")):
        for request in _requests(definitions, name):
            result = execute_job(definitions.resolve_job_def(job), instance, tags=request.tags)
            assert result.success
    ctx_keys = definitions.resolve_asset_graph().get(dg.AssetKey([W, "answers"])).partitions_def.get_partition_keys()
    for asset in ("pages", "fact_graph", "answers"):
        materialized = {r.partition_key
                        for r in instance.fetch_materializations(dg.AssetKey([W, asset]), limit=100).records}
        assert materialized == set(ctx_keys), asset
    with duckdb.connect(str(config.database), read_only=True) as conn:
        assert conn.execute("SELECT count(*) FROM maintenance_costs").fetchone()[0] == 12
    assert (tmp_path / W / "results.csv").read_text() == results_csv(run_study(world).results)


def test_the_reports_follow_their_inputs_through_a_running_automation_sensor(tmp_path):
    definitions = build_definitions(config_for(tmp_path))
    sensor = definitions.resolve_sensor_def(f"{W}__reports_follow_inputs")
    assert sensor.default_status == dg.DefaultSensorStatus.RUNNING
    graph = definitions.resolve_asset_graph()
    conditioned = {k.path[-1] for k in graph.get_all_asset_keys() if graph.get(k).automation_condition is not None}
    assert conditioned == {"accuracy_report", "cost_report"}
