"""Repair as one asset: it starts from the graph nobody maintained (its one declared input), costs both
ways of catching up, keeps the graph repaired the configured way, and its check turns green, while the
stale partition itself stays as its scenario left it."""

from __future__ import annotations

import dagster as dg
import duckdb
import pytest

from driftlab_dagster.defs import build_definitions
from driftlab_dagster.headless import execute_job, run_study_in_dagster
from driftlab_dagster_tests.conftest import config_for

pytestmark = pytest.mark.dagster

W = "tessaly_freight"


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    config = config_for(tmp_path_factory.mktemp("repair"))
    instance = dg.DagsterInstance.ephemeral()
    run_study_in_dagster(config, instance=instance)
    return config, instance, build_definitions(config)


def _repair(study, run_config=None) -> dg.ExecuteInProcessResult:
    config, instance, definitions = study
    return execute_job(definitions.resolve_job_def(f"{W}__repair_graph"), instance, run_config=run_config)


def _materialization(result: dg.ExecuteInProcessResult) -> dict:
    [event] = [e for e in result.get_asset_materialization_events() if e.asset_key == dg.AssetKey([W, "graph_repair"])]
    return {k: v.value for k, v in event.step_materialization_data.materialization.metadata.items()}


def test_the_repair_job_patches_by_default_and_its_check_turns_green(study):
    result = _repair(study)
    metadata = _materialization(result)
    assert metadata["approach_kept"] == "patch"
    assert (metadata["pages_read_by_patch"], metadata["pages_read_by_full"]) == (21, 40)
    [check] = result.get_asset_check_evaluations()
    assert check.check_name == "pages_changed_since_read" and check.passed
    with duckdb.connect(str(study[0].database), read_only=True) as conn:
        assert conn.execute("SELECT DISTINCT approach FROM repaired_facts").fetchall() == [("patch",)]
        # Every page of the stale partition is as the repaired graph read it ...
        assert conn.execute("""SELECT count(*) FROM pages p LEFT JOIN repaired_extraction_log x USING (world, page_id)
                               WHERE p.scenario = 'StaleGraph' AND p.day = '2026-09-29'
                               AND (x.version IS NULL OR x.version < p.version)""").fetchone()[0] == 0
        # ... and the stale partition itself is untouched: nobody maintains that scenario's graph.
        assert conn.execute("""SELECT count(*) FROM pages_ahead_of_graph WHERE scenario = 'StaleGraph'
                               AND day = '2026-09-29'""").fetchone()[0] == 21
        assert conn.execute("SELECT count(*) FROM repair_costs").fetchone()[0] == 2


def test_the_launchpad_can_ask_for_a_full_rebuild_instead(study):
    result = _repair(study, {"ops": {f"{W}__graph_repair": {"config": {"approach": "full"}}}})
    assert _materialization(result)["approach_kept"] == "full"
    with duckdb.connect(str(study[0].database), read_only=True) as conn:
        assert conn.execute("SELECT DISTINCT approach FROM repaired_facts").fetchall() == [("full",)]
        # Both ways leave a graph that answers every question (the post's graph-only check).
        assert conn.execute("SELECT min(graph_only_accuracy) FROM repair_costs").fetchone()[0] == 1.0
