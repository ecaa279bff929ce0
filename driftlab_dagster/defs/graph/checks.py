import dagster as dg

from driftlab_dagster.core import drift
from driftlab_dagster.core.reports import markdown_table
from driftlab_dagster.core.warehouse import stored_world_json
from driftlab_dagster.core.world import World
from driftlab_dagster.defs.partitions import scenario_and_day, scenario_day_partitions
from driftlab_dagster.defs.resources import WarehouseResource


def _evaluate(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource, find, columns: list[str],
              what: str) -> dg.AssetCheckResult:
    """One WARN check over the run's partitions (one in a per-partition run: the UI, backfills, the nightly
    fan-out), listing the offending rows."""
    findings = []
    with warehouse.get_connection() as conn:
        for key in context.partition_keys:
            scenario, day = scenario_and_day(key)
            findings += [{"scenario": scenario, "day": day, **row} for row in find(conn, scenario, day)]
    return dg.AssetCheckResult(
        passed=not findings, severity=dg.AssetCheckSeverity.WARN,
        metadata={"count": len(findings),
                  what: dg.MetadataValue.md(markdown_table(findings[:50], ["scenario", "day"] + columns)
                                            if findings else "none")},
    )


@dg.asset_check(asset="fact_graph", partitions_def=scenario_day_partitions, blocking=False,
                additional_deps=["extraction_log", "pages"])
def pages_changed_since_read(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource) -> dg.AssetCheckResult:
    """Pages whose current version is newer than the version the graph last read: the graph is behind them."""
    return _evaluate(context, warehouse, drift.pages_ahead, ["page_id", "page_version", "version_read"], "pages")


@dg.asset_check(asset="fact_graph", partitions_def=scenario_day_partitions, blocking=False,
                additional_deps=["pages"])
def facts_from_superseded_pages(context: dg.AssetCheckExecutionContext,
                                warehouse: WarehouseResource) -> dg.AssetCheckResult:
    """Facts read from a page version that is no longer current."""
    return _evaluate(context, warehouse, drift.superseded_facts,
                     ["entity", "predicate", "object", "source_doc", "source_version", "page_version"], "facts")


@dg.asset_check(asset="fact_graph", partitions_def=scenario_day_partitions, blocking=False)
def entity_spelling_splits(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource) -> dg.AssetCheckResult:
    """Entities that differ only by spelling ("Pro" beside "Pro plan"): a patch keyed by one misses the other."""
    with warehouse.get_connection() as conn:
        name_key = World.from_json(stored_world_json(conn)).name_key
    return _evaluate(context, warehouse, lambda conn, s, d: drift.spelling_splits(conn, s, d, name_key),
                     ["canonical", "spellings"], "splits")
