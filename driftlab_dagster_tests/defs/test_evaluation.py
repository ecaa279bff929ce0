"""The answers asset's story in the UI: what a partition's metadata says about how its answers were read."""

from __future__ import annotations

import dagster as dg
import pytest

from driftlab_dagster.core.world.loader import load_world
from driftlab_dagster.fixture_repo import build_handbook
from driftlab_dagster.headless import run_study_in_dagster
from driftlab_dagster_tests.conftest import config_for

pytestmark = pytest.mark.dagster


def test_a_prose_world_read_without_a_model_says_so_in_each_answers_partition(tmp_path):
    """`driftlab run` prints a note when a prose world is read by the model-free parts; a partition
    materialised through Dagster (a UI click, a backfill) carries the same words, so no route shows tables of
    abstentions as if they were a finding without saying why."""
    built = build_handbook(tmp_path / "hb")
    world = load_world(built.world)
    instance = dg.DagsterInstance.ephemeral()
    config = config_for(tmp_path, [built.world])
    first = world.checkpoints[0].day.isoformat()
    run_study_in_dagster(config, instance=instance, scenarios=["Fresh"], until=first)

    records = instance.fetch_materializations(dg.AssetKey([world.id, "answers"]), limit=100).records
    assert len(records) == 1 and {"Fresh", first} == set(records[0].partition_key.split("|"))
    note = records[0].asset_materialization.metadata["prose_unread"].value
    assert "--extractor model" in note and "--reader model" in note
    # ... and the per-design table shows what each design read apart from what abstaining won it
    lines = records[0].asset_materialization.metadata["by_design"].value.splitlines()
    header, rows = lines[0], [[c.strip() for c in line.strip("|").split("|")] for line in lines[2:]]
    column = [c.strip() for c in header.strip("|").split("|")].index("stated")
    assert len(rows) == 5 and all(row[column] == "0%" for row in rows)


def test_a_templated_world_carries_no_such_note(dagster_study):
    records = dagster_study.instance.fetch_materializations(
        dg.AssetKey(["tessaly_freight", "answers"]), limit=1000).records
    assert records and all("prose_unread" not in r.asset_materialization.metadata for r in records)
