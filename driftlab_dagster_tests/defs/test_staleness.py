"""No hidden dependencies: re-materialising one scenario's day-7 pages marks exactly the partitions that
read them as stale, and nothing else.

Dagster 1.13 exposes stale status publicly only through GraphQL; in process we read it with dagster's own
stale-status resolver (a test helper), the same computation the UI shows.
"""

from __future__ import annotations

import dagster as dg

from driftlab_dagster.defs.partitions import DAYS, SCENARIOS, scenario_day_partitions
from driftlab_dagster.defs.resources import default_resources
from driftlab_dagster.definitions import defs
from driftlab_dagster.headless import run_study_in_dagster


def _stale_partitions(instance: dg.DagsterInstance, definitions: dg.Definitions) -> set[tuple[str, str | None]]:
    from dagster._utils.test.data_versions import get_stale_status_resolver  # no public API in 1.13

    resolver = get_stale_status_resolver(instance, list(definitions.assets or []))
    graph = definitions.resolve_asset_graph()
    stale = set()
    for key in graph.get_all_asset_keys():
        partitions_def = graph.get(key).partitions_def
        for partition in partitions_def.get_partition_keys() if partitions_def else [None]:
            if resolver.get_status(key, partition).value == "STALE":
                stale.add((key.to_user_string(), partition))
    return stale


def test_rematerialising_one_days_pages_marks_exactly_its_readers_stale(tmp_path):
    instance = dg.DagsterInstance.ephemeral()
    run_study_in_dagster(tmp_path / "s.duckdb", tmp_path, instance=instance)
    definitions = defs()
    assert _stale_partitions(instance, definitions) == set()

    day7 = dg.MultiPartitionKey({"scenario": "Fresh", "day": DAYS[1]})
    dg.materialize(list(definitions.assets), selection=["pages"], partition_key=day7, instance=instance,
                   resources=default_resources(database=str(tmp_path / "s.duckdb"), output_dir=str(tmp_path)))

    later_fresh = {str(dg.MultiPartitionKey({"scenario": "Fresh", "day": d})) for d in DAYS[1:]}
    expected = {(asset, key) for asset in ("fact_graph", "extraction_log") for key in later_fresh}
    expected.add(("answers", str(day7)))  # that day's answers read that day's pages
    assert _stale_partitions(instance, definitions) == expected
    # Sanity: the grid is the 4 scenarios x 5 days the world declares.
    assert len(scenario_day_partitions.get_partition_keys()) == len(SCENARIOS) * len(DAYS)
