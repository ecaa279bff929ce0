import dagster as dg
import pandas as pd

from driftlab_dagster.core.reports import cost_markdown
from driftlab_dagster.core.store import Store
from driftlab_dagster.core.study import maintenance_comparison, repair, stale_graph_scenario
from driftlab_dagster.core.warehouse import (
    replace_slice,
    replace_slices,
    stored_graph,
    stored_pages,
    stored_world_json,
    transaction,
)
from driftlab_dagster.core.world import World
from driftlab_dagster.defs.partitions import event_day_partitions, repair_source_key
from driftlab_dagster.defs.resources import StudyResource, WarehouseResource, spend_metadata
from driftlab_dagster.defs.settings import EXTRACTOR_VERSION, READER_VERSION


@dg.asset(group_name="maintenance", partitions_def=event_day_partitions, deps=["world"], kinds={"duckdb"},
          pool="duckdb", code_version=f"{EXTRACTOR_VERSION}|{READER_VERSION}")
def maintenance_costs(context: dg.AssetExecutionContext, warehouse: WarehouseResource,
                      study: StudyResource) -> dg.MaterializeResult:
    """One row per way of absorbing that day's event: patch the changed pages, full re-extraction (both on
    the Fresh pages), patch from the system of record (on the StalePages graph). Each row counts pages
    read, tokens, graph writes and milliseconds, and the graph-only accuracy of the graph it left."""
    rows = []
    with warehouse.get_connection() as conn:
        world = World.from_json(stored_world_json(conn))
        with study.session(world, conn) as session:
            session.progress.stage("maintenance", len(context.partition_keys))
            for day in context.partition_keys:
                step = world.checkpoint(day).step
                rows += [{"day": day, **r.as_row()}
                         for r in maintenance_comparison(world, step, session.extractor, session.reader)]
                session.progress.advance()
        with transaction(conn):
            replace_slices(conn, "maintenance_costs", [{"day": d} for d in context.partition_keys], pd.DataFrame(rows))
    patch = [r for r in rows if r["approach"] == "patch changed pages"]
    return dg.MaterializeResult(metadata={
        "dagster/row_count": len(rows),
        "pages_read_by_patch": ", ".join(str(r["docs"]) for r in patch),
        **spend_metadata(session),
        "costs": dg.MetadataValue.md(cost_markdown(rows)),
    })


_STALE_END = dg.SpecificPartitionsPartitionMapping([repair_source_key])


@dg.asset(
    group_name="maintenance", kinds={"duckdb"}, pool="duckdb", code_version=f"{EXTRACTOR_VERSION}|{READER_VERSION}",
    automation_condition=dg.AutomationCondition.eager(),
    deps=[dg.AssetDep(name, partition_mapping=_STALE_END) for name in ("pages", "fact_graph", "extraction_log")]
    + ["world"],
)
def graph_repair(context: dg.AssetExecutionContext, warehouse: WarehouseResource,
                 study: StudyResource) -> dg.MaterializeResult:
    """One row per way of repairing the graph that missed every event (StaleGraph on the last day): full
    re-extraction versus patching the pages changed since the last extraction, with the graph-only
    accuracy each leaves behind. Reads that partition's stored graph and pages and changes neither."""
    with warehouse.get_connection() as conn:
        world = World.from_json(stored_world_json(conn))
        scenario, day = stale_graph_scenario(world), world.day_keys[-1]
        stale = Store.from_snapshot(pages=stored_pages(conn, scenario, day), **stored_graph(conn, scenario, day))
        with study.session(world, conn) as session:
            rows = [r.as_row() for r in repair(stale, world, scenario, session.extractor, session.reader)]
        with transaction(conn):
            replace_slice(conn, "repair_costs", {}, pd.DataFrame(rows))
    by_approach = {r["approach"]: r for r in rows}
    return dg.MaterializeResult(metadata={
        "dagster/row_count": len(rows),
        "pages_read_by_patch": by_approach["repair: patch changed pages"]["docs"],
        "pages_read_by_full": by_approach["repair: full re-extract"]["docs"],
        **spend_metadata(session),
        "costs": dg.MetadataValue.md(cost_markdown(rows)),
    })
