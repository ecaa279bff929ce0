"""A graph partition materialised on its own resumes from the stored graph of the day before (one day's
maintenance instead of the whole history) and writes exactly the rows a whole run writes; when the day
before cannot be trusted (missing, or its pages were written again since) it replays from day 0, with the
same rows again."""

from __future__ import annotations

import dagster as dg
import duckdb
import pytest

from driftlab_dagster.core.world.loader import load_world
from driftlab_dagster.defs import build_definitions
from driftlab_dagster.headless import execute_job, run_study_in_dagster
from driftlab_dagster.project import DEFAULT_WORLD
from driftlab_dagster_tests.conftest import config_for

pytestmark = pytest.mark.dagster

W = "tessaly_freight"
GRAPH = [dg.AssetKey([W, n]) for n in ("fact_graph", "extraction_log", "governed_graph")]
# Every table the graph step writes must match to the byte.
TABLES = {"facts": "*", "entities": "*", "aliases": "*", "extraction_log": "*", "governed_facts": "*",
          "governed_names": "*", "graph_maintenance": "*"}


def _rows(database, day: str) -> dict[str, list[tuple]]:  # type: ignore[no-untyped-def]
    with duckdb.connect(str(database), read_only=True) as conn:
        return {t: conn.execute(f"SELECT {cols} FROM {t} WHERE day = ? ORDER BY ALL", [day]).fetchall()
                for t, cols in TABLES.items()}


def _replayed_from(instance: dg.DagsterInstance, key: str) -> str:
    record = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey([W, "fact_graph"]), asset_partitions=[key]), limit=1).records[0]
    return record.asset_materialization.metadata["replayed_from"].value


def test_one_day_alone_resumes_from_the_day_before_and_matches_the_whole_run(tmp_path):
    config = config_for(tmp_path)
    instance = dg.DagsterInstance.ephemeral()
    run_study_in_dagster(config, instance=instance)
    days = load_world(DEFAULT_WORLD).day_keys
    last, before = days[-1], days[-2]
    whole = _rows(config.database, last)
    assert whole["facts"] and whole["governed_facts"]

    job = build_definitions(config).resolve_job_def(f"{W}__study")
    for scenario in ("Fresh", "StalePages", "StaleGraph", "PartialPages"):
        execute_job(job, instance, partition_key=f"{last}|{scenario}", asset_selection=GRAPH)
        assert "stored graph of the day before" in _replayed_from(instance, f"{last}|{scenario}")
    assert _rows(config.database, last) == whole

    # The pages of an earlier day written again: the stored graph of the day before no longer counts.
    execute_job(job, instance, partition_key=f"{days[1]}|Fresh", asset_selection=[dg.AssetKey([W, "pages"])])
    execute_job(job, instance, partition_key=f"{last}|Fresh", asset_selection=GRAPH)
    assert "initial extraction" in _replayed_from(instance, f"{last}|Fresh")
    # The day before missing from the warehouse: replayed from day 0 too.
    with duckdb.connect(str(config.database)) as conn:
        conn.execute("DELETE FROM extraction_log_slices WHERE day = ? AND scenario = 'StalePages'", [before])
    execute_job(job, instance, partition_key=f"{last}|StalePages", asset_selection=GRAPH)
    assert "initial extraction" in _replayed_from(instance, f"{last}|StalePages")
    assert _rows(config.database, last) == whole
