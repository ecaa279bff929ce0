"""Past one process: the study job on Dagster's multiprocess executor over several partitions, as deploy/
sets it up on one machine. The duckdb pool must keep DuckDB writers to one at a time, and the rows must be
the ones the in-process executor writes."""

from __future__ import annotations

import dagster as dg
import duckdb
import pytest
import yaml

from driftlab_dagster.config import DriftlabConfig
from driftlab_dagster.defs import build_definitions, study_contexts
from driftlab_dagster.defs.automation import study_selection

pytestmark = pytest.mark.system

SCENARIOS = ["Fresh", "StalePages"]


def study_job() -> dg.JobDefinition:
    """Module level, so each step's process can rebuild the job: from the settings $DRIFTLAB_CONFIG names."""
    config = DriftlabConfig.load()
    return build_definitions(config).resolve_job_def(study_contexts(config)[0].name("study"))


def _settings(tmp_path, name: str, executor: str):  # type: ignore[no-untyped-def]
    settings = tmp_path / f"{name}.yaml"
    settings.write_text(yaml.safe_dump({"database": str(tmp_path / f"{name}.duckdb"),
                                        "output_dir": str(tmp_path / f"{name}-out"), "executor": executor}))
    return settings


def _rows(database) -> dict[str, list[tuple]]:  # type: ignore[no-untyped-def]
    with duckdb.connect(str(database), read_only=True) as conn:
        return {table: conn.execute(f"SELECT * FROM {table} ORDER BY ALL").fetchall()
                for table in ("pages", "facts", "governed_facts", "answers")}


def test_the_multiprocess_executor_runs_several_partitions_with_one_duckdb_writer_at_a_time(tmp_path, monkeypatch):
    monkeypatch.delenv("DRIFTLAB_WORLD", raising=False)
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    monkeypatch.setenv("DRIFTLAB_CONFIG", str(_settings(tmp_path, "multi", "multiprocess")))
    config = DriftlabConfig.load()
    ctx = study_contexts(config)[0]
    tags = ctx.partitions.range_tags(SCENARIOS, ctx.partitions.days[2])
    # The slice does not reach the unmaintained graph's last day, so the repair is not part of it.
    selection = [k for k in study_selection(ctx) if k != ctx.key("graph_repair")]
    (tmp_path / "home").mkdir()
    (tmp_path / "home2").mkdir()
    pools = {"concurrency": {"pools": {"default_limit": 1, "granularity": "op"}}}
    with dg.instance_for_test(temp_dir=str(tmp_path / "home"), overrides=pools) as instance:
        result = dg.execute_job(dg.reconstructable(study_job), instance, tags=tags, asset_selection=selection)
        assert result.success
        records = instance.get_records_for_run(result.run_id).records
    events = [r.event_log_entry for r in records if r.event_log_entry.dagster_event is not None]
    processes = {e.dagster_event.pid for e in events if e.dagster_event.is_step_start}
    assert len(processes) > 1  # a process per step: really the multiprocess executor

    # Every step of this job writes the DuckDB file, so all sit in the pool: no two may overlap.
    spans: dict[str, list[float]] = {}
    for e in events:
        event = e.dagster_event
        if event.is_step_start or event.is_step_success:
            spans.setdefault(event.step_key, []).append(e.timestamp)
    intervals = sorted((times[0], times[-1], step) for step, times in spans.items())
    assert len(intervals) >= 4
    for (_, end, first), (start, _, second) in zip(intervals, intervals[1:]):
        assert start >= end, f"{second} started while {first} still held the duckdb pool"

    # The same rows as the default in-process executor writes for the same partitions.
    monkeypatch.setenv("DRIFTLAB_CONFIG", str(_settings(tmp_path, "single", "in_process")))
    single = DriftlabConfig.load()
    job = build_definitions(single).resolve_job_def(ctx.name("study"))
    with dg.instance_for_test(temp_dir=str(tmp_path / "home2")) as instance:
        assert job.execute_in_process(instance=instance, tags=tags, asset_selection=selection).success
    multi, one = _rows(tmp_path / "multi.duckdb"), _rows(tmp_path / "single.duckdb")
    assert multi["answers"] and multi == one
