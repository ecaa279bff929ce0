from typing import Literal

import dagster as dg
import pandas as pd
from pydantic import Field

from driftlab_dagster.core import drift
from driftlab_dagster.core.extraction import FULL, PATCH_PAGES
from driftlab_dagster.core.progress import Progress
from driftlab_dagster.core.reports import markdown_table
from driftlab_dagster.core.study import maintenance_comparisons, repair
from driftlab_dagster.core.warehouse import (
    Slice,
    record_timings,
    replace_slice,
    replace_slices,
    stored_store,
    transaction,
)
from driftlab_dagster.defs.context import StudyContext
from driftlab_dagster.defs.metadata import CHECK_METADATA, costs_markdown
from driftlab_dagster.defs.resources import ModelResource, WarehouseResource, spend_metadata, study_session


class RepairConfig(dg.Config):
    approach: Literal["patch", "full"] = Field(
        default="patch",
        description="Which repaired graph to keep: 'patch' re-reads only the pages changed since the last "
                    "extraction, 'full' rebuilds from every page. Both are costed either way.",
    )


def build(ctx: StudyContext) -> list[dg.AssetsDefinition]:
    world, parts = ctx.world, ctx.partitions
    versions = f"{ctx.extractor_id}|{ctx.graph_reader_id}"

    @dg.asset(key=ctx.key("maintenance_costs"), group_name="maintenance", partitions_def=parts.event_day,
              deps=[ctx.key("world")], kinds={"duckdb"}, pool="duckdb", code_version=versions,
              backfill_policy=dg.BackfillPolicy.single_run())
    def maintenance_costs(context: dg.AssetExecutionContext, warehouse: WarehouseResource, model: ModelResource,
                          progress: dg.ResourceParam[Progress]) -> dg.MaterializeResult:
        """One row per way of absorbing that day's event: patch the changed pages and full re-extraction (both
        on pages that follow every event), patch from the system of record (on pages that never change).
        Each row counts pages read, tokens and graph writes, and the graph-only accuracy of the graph it
        left; how long each pass took goes to `pass_timings`. A run over several event days replays the
        world once."""
        days = {world.checkpoint(str(key)).step: str(key) for key in context.partition_keys}
        with warehouse.get_connection() as conn:
            with study_session(ctx, conn, model, progress) as session:
                progress.stage(f"{world.id} maintenance", 1)
                comparisons = maintenance_comparisons(world, days, session.extractor, session.reader)
                progress.advance()
                spend = spend_metadata(session)
            rows = {day: [{"world": world.id, "world_version": world.version, "day": day, **r.as_row()}
                          for r in comparisons[step]] for step, day in days.items()}
            timings = {day: [r.sample.timing() for r in comparisons[step]] for step, day in days.items()}
            with transaction(conn):
                replace_slices(conn, "maintenance_costs", [{"world": world.id, "day": d} for d in rows],
                               pd.DataFrame([r for day_rows in rows.values() for r in day_rows]))
                record_timings(conn, world, "maintenance_costs", context.run_id,
                               [(None, day, t) for day, day_timings in timings.items() for t in day_timings])
        for day, day_rows in rows.items():
            by = {r["approach"]: r for r in day_rows}
            context.add_asset_metadata(partition_key=day, metadata={
                "dagster/row_count": len(day_rows),
                "pages_read_by_patch": by[PATCH_PAGES]["docs"],
                "pages_read_by_full": by[FULL]["docs"],
                "costs": dg.MetadataValue.md(costs_markdown(day_rows)),
            })
        # Model spend belongs to the whole run (the comparison replays its event days together): `run_` says so.
        return dg.MaterializeResult(metadata={f"run_{k}": v for k, v in spend.items()})

    assets = [maintenance_costs]
    if ctx.repair_source is not None:
        assets.append(_repair_asset(ctx, *ctx.repair_source))
    return assets


def _repair_asset(ctx: StudyContext, scenario: str, day: str) -> dg.AssetsDefinition:
    world, parts = ctx.world, ctx.partitions
    source = dg.SpecificPartitionsPartitionMapping([parts.key(scenario, day)])
    checks = ["pages_changed_since_read"]

    @dg.asset(
        key=ctx.key("graph_repair"), group_name="maintenance", kinds={"duckdb"}, pool="duckdb",
        code_version=f"{ctx.extractor_id}|{ctx.graph_reader_id}",
        deps=[dg.AssetDep(ctx.key(name), partition_mapping=source) for name in ("pages", "fact_graph",
                                                                              "extraction_log")]
        + [ctx.key("world")],
        check_specs=[dg.AssetCheckSpec(name, asset=ctx.key("graph_repair"),
                                       description="Pages whose current version is newer than the version the "
                                                   f"repaired graph read. {CHECK_METADATA}") for name in checks],
    )
    def graph_repair(context: dg.AssetExecutionContext, config: RepairConfig, warehouse: WarehouseResource,
                     model: ModelResource, progress: dg.ResourceParam[Progress]):
        """One row per way of repairing the graph that missed every event (the partition it starts from is
        its one declared input): full re-extraction versus patching the pages changed since the last
        extraction, with the graph-only accuracy each leaves behind. The graph repaired the configured way
        is kept in `repaired_facts` and `repaired_extraction_log`; the stale partition is left untouched."""
        where = Slice(world.id, world.version, scenario, day)
        with warehouse.get_connection() as conn:
            stale = stored_store(conn, where)
            with study_session(ctx, conn, model, progress) as session:
                outcomes = repair(stale, world, scenario, session.extractor, session.reader)
                spend = spend_metadata(session)
            kept = outcomes[config.approach]
            snapshot = kept.store.snapshot()
            scope = {"world": world.id, "world_version": world.version}
            with transaction(conn):
                replace_slice(conn, "repair_costs", {"world": world.id},
                              pd.DataFrame([{**scope, **o.row.as_row()} for o in outcomes.values()]))
                record_timings(conn, world, "repair_costs", context.run_id,
                               [(scenario, day, o.row.sample.timing()) for o in outcomes.values()])
                replace_slice(conn, "repaired_extraction_log", {"world": world.id},
                              pd.DataFrame([{**scope, "approach": config.approach, **r}
                                            for r in snapshot["extraction_log"]]))
                replace_slice(conn, "repaired_facts", {"world": world.id},
                              pd.DataFrame([{**scope, "approach": config.approach,
                                             **{k: v for k, v in r.items() if k != "entity_id"}}
                                            for r in snapshot["facts"]]))
        ahead = drift.pages_ahead_of(kept.store)
        costs = [o.row.as_row() for o in outcomes.values()]
        yield dg.MaterializeResult(metadata={
            "dagster/row_count": len(costs),
            "repaired_from": f"{scenario} on {day}",
            "approach_kept": config.approach,
            "pages_read_by_patch": outcomes["patch"].row.sample.docs,
            "pages_read_by_full": outcomes["full"].row.sample.docs,
            "facts_after_repair": len(snapshot["facts"]),
            **spend,
            "costs": dg.MetadataValue.md(costs_markdown(costs)),
        })
        yield dg.AssetCheckResult(
            check_name="pages_changed_since_read", passed=not ahead, severity=dg.AssetCheckSeverity.WARN,
            metadata={"count": len(ahead), "rows": dg.MetadataValue.md(
                markdown_table(ahead, ["page_id", "page_version", "version_read"]) if ahead else "none")},
        )

    return graph_repair
