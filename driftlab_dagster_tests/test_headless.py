"""How headless runs store Dagster's events: a step's materialisations of one asset in one batch, and the
environment as the caller left it afterwards. (Their connections held open on PostgreSQL: test_local_postgres.)"""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg
import pytest

from driftlab_dagster.core.world.loader import load_world
from driftlab_dagster.headless import events_batched, run_study_in_dagster
from driftlab_dagster.project import DEFAULT_WORLD
from driftlab_dagster_tests.conftest import config_for


def test_batching_is_on_inside_and_as_the_caller_had_it_after(monkeypatch):
    monkeypatch.delenv("DAGSTER_EVENT_BATCH_SIZE", raising=False)
    with events_batched():
        assert int(os.environ["DAGSTER_EVENT_BATCH_SIZE"]) > 1
    assert "DAGSTER_EVENT_BATCH_SIZE" not in os.environ
    monkeypatch.setenv("DAGSTER_EVENT_BATCH_SIZE", "0")  # a caller who turned it off keeps it off
    with events_batched():
        assert os.environ["DAGSTER_EVENT_BATCH_SIZE"] == "0"
    assert os.environ["DAGSTER_EVENT_BATCH_SIZE"] == "0"


@pytest.mark.dagster
def test_a_run_over_several_days_stores_each_assets_materialisations_in_one_batch(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("DAGSTER_EVENT_BATCH_SIZE", raising=False)
    instance = dg.DagsterInstance.ephemeral()
    storage = instance.event_log_storage
    batches: list[list[dg.EventLogEntry]] = []
    store_batch = storage.store_event_batch

    def recorded(events):
        batches.append(list(events))
        store_batch(events)

    monkeypatch.setattr(storage, "store_event_batch", recorded)
    days = [c.key for c in load_world(DEFAULT_WORLD).checkpoints]
    [run] = run_study_in_dagster(config_for(tmp_path), instance=instance, scenarios=["Fresh"], until=days[2])

    materialised = [e for b in batches for e in b if e.dagster_event_type == dg.DagsterEventType.ASSET_MATERIALIZATION]
    by_asset = {tuple(b[0].dagster_event.asset_key.path) for b in batches if len(b) == 3}
    assert {("tessaly_freight", "pages"), ("tessaly_freight", "fact_graph")} <= by_asset, by_asset
    # Every materialisation the runs stored came in a batch, and each is still one partition's own.
    stored = [r.event_log_entry for r in instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey(["tessaly_freight", "fact_graph"])), limit=100).records]
    assert sorted(e.dagster_event.partition for e in stored) == sorted(
        e.dagster_event.partition for e in materialised if e.dagster_event.asset_key.path[-1] == "fact_graph")
    assert len(stored) == 3 and run.run_ids
    assert "DAGSTER_EVENT_BATCH_SIZE" not in os.environ
