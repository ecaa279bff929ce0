"""The nightly full run: cron, job, one run request per partition, run keys stable within a night."""

from __future__ import annotations

import datetime as dt

import dagster as dg

from driftlab_dagster.defs.automation import (
    NIGHTLY_CRON,
    nightly_maintenance,
    nightly_study,
    repair_graph_job,
    reports_follow_inputs,
)
from driftlab_dagster.defs.partitions import event_day_partitions, scenario_day_partitions

NIGHT = dt.datetime(2026, 12, 1, 2, tzinfo=dt.timezone.utc)


def _requests(schedule, when=NIGHT):  # type: ignore[no-untyped-def]
    return list(schedule(dg.build_schedule_context(scheduled_execution_time=when)))


def test_the_nightly_study_runs_at_two_and_requests_every_partition_once():
    assert NIGHTLY_CRON == "0 2 * * *"
    assert nightly_study.cron_schedule == "0 2 * * *" and nightly_study.execution_timezone == "UTC"
    assert nightly_study.job_name == "study_partitions"
    requests = _requests(nightly_study)
    assert sorted(r.partition_key for r in requests) == sorted(scenario_day_partitions.get_partition_keys())
    assert len({r.run_key for r in requests}) == len(requests) == 20


def test_run_keys_are_stable_within_a_night_and_new_the_next_night():
    first = {r.run_key for r in _requests(nightly_study)}
    again = {r.run_key for r in _requests(nightly_study, NIGHT + dt.timedelta(minutes=3))}
    tomorrow = {r.run_key for r in _requests(nightly_study, NIGHT + dt.timedelta(days=1))}
    assert first == again
    assert first.isdisjoint(tomorrow)


def test_the_maintenance_comparison_runs_nightly_for_every_event_day():
    requests = _requests(nightly_maintenance)
    assert nightly_maintenance.job_name == "maintenance_comparison"
    assert sorted(r.partition_key for r in requests) == sorted(event_day_partitions.get_partition_keys())


def test_a_scheduled_request_executes_as_a_real_run(tmp_path):
    from driftlab_dagster.definitions import defs
    from driftlab_dagster.defs.resources import default_resources

    definitions = defs()
    instance = dg.DagsterInstance.ephemeral()
    resources = default_resources(database=str(tmp_path / "n.duckdb"), output_dir=str(tmp_path))
    dg.materialize(list(definitions.assets), selection=["world"], resources=resources, instance=instance)
    first = _requests(nightly_study)[0]
    job = dg.Definitions(assets=definitions.assets, asset_checks=definitions.asset_checks, jobs=definitions.jobs,
                         resources=resources, executor=dg.in_process_executor).resolve_job_def("study_partitions")
    # The job's first partition needs nothing but the world.
    result = job.execute_in_process(partition_key=first.partition_key, tags=first.tags, instance=instance)
    assert result.success
    assert {e.check_name for e in result.get_asset_check_evaluations()} == {
        "pages_changed_since_read", "facts_from_superseded_pages", "entity_spelling_splits"}


def test_the_repair_job_patches_by_default_and_the_reports_follow_their_inputs():
    assert repair_graph_job.config["ops"]["fact_graph"]["config"]["repair"] == "patch"
    assert reports_follow_inputs.default_status == dg.DefaultSensorStatus.RUNNING
