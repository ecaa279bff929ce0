"""Drift as asset checks: the stale graph's checks go yellow day by day, and green after a repair."""

from __future__ import annotations

import dagster as dg
import pytest

from driftlab_dagster.definitions import defs
from driftlab_dagster.defs.partitions import DAYS
from driftlab_dagster.defs.resources import default_resources


def _checks(result: dg.ExecuteInProcessResult) -> dict[str, dg.AssetCheckEvaluation]:
    return {e.check_name: e for e in result.get_asset_check_evaluations()}


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    from driftlab_dagster.headless import run_study_in_dagster

    out = tmp_path_factory.mktemp("checks")
    instance = dg.DagsterInstance.ephemeral()
    run_study_in_dagster(out / "c.duckdb", out, instance=instance)
    definitions = defs()
    resources = default_resources(database=str(out / "c.duckdb"), output_dir=str(out))

    def materialize(scenario: str, day: str, repair: str = "none") -> dg.ExecuteInProcessResult:
        return dg.materialize(
            list(definitions.assets) + list(definitions.asset_checks), selection=dg.AssetSelection.assets("fact_graph", "extraction_log", "governed_graph"),
            partition_key=dg.MultiPartitionKey({"scenario": scenario, "day": day}), resources=resources,
            instance=instance, run_config={"ops": {"fact_graph": {"config": {"repair": repair}}}},
        )

    return materialize


def test_the_stale_graph_falls_further_behind_each_day(study):
    behind = []
    for day in DAYS:
        checks = _checks(study("StaleGraph", day))
        assert checks["pages_changed_since_read"].severity == dg.AssetCheckSeverity.WARN
        behind.append(checks["pages_changed_since_read"].metadata["count"].value)
        assert checks["pages_changed_since_read"].passed == (behind[-1] == 0)
        assert checks["facts_from_superseded_pages"].passed == (day == DAYS[0])
    assert behind == [0, 8, 12, 14, 21]


def test_a_maintained_graph_passes_every_check(study):
    for day in DAYS:
        assert all(c.passed for c in _checks(study("Fresh", day)).values())


def test_a_repair_turns_the_checks_green_and_reports_its_cost(study):
    result = study("StaleGraph", DAYS[-1], repair="patch")
    assert all(c.passed for c in _checks(result).values())
    materialization = next(e for e in result.get_asset_materialization_events()
                           if e.asset_key == dg.AssetKey("fact_graph"))
    metadata = materialization.step_materialization_data.materialization.metadata
    assert metadata["maintenance"].value == "repair: patch changed pages"
    assert metadata["pages_read"].value == 21
    # The next ordinary run puts the scenario back to its policy: nobody maintains the graph.
    assert not _checks(study("StaleGraph", DAYS[-1]))["pages_changed_since_read"].passed


def test_no_spelling_splits_in_the_regex_graph(study):
    assert _checks(study("PartialPages", DAYS[-1]))["entity_spelling_splits"].passed
