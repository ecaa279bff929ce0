import dagster as dg
import pandas as pd

from driftlab_dagster.core.reports import markdown_table
from driftlab_dagster.core.warehouse import prune_world, replace_slice, transaction
from driftlab_dagster.defs.context import StudyContext
from driftlab_dagster.defs.resources import WarehouseResource


def build(ctx: StudyContext) -> list[dg.AssetsDefinition]:
    world_def = ctx.world

    # The world file's content hash is this asset's code version: edit the file, reload the code location,
    # and the world shows "new code version"; once it is materialised again, everything downstream is stale.
    @dg.asset(key=ctx.key("world"), group_name="world", kinds={"duckdb", "yaml"}, pool="duckdb",
              code_version=world_def.version)
    def world(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
        """One row per version of the world file: its canonical JSON, id and content hash. Materialising a
        new version also drops this world's rows of partitions the file no longer has (a moved event day,
        a renamed scenario); rows of the partitions it keeps stay until they are recomputed."""
        row = pd.DataFrame([{"world": world_def.id, "world_version": world_def.version,
                             "company": world_def.company, "source": str(world_def.source),
                             "spec_json": world_def.canonical_json}])
        partitions = [(s, d) for s in ctx.partitions.scenarios for d in ctx.partitions.days]
        with warehouse.get_connection() as conn, transaction(conn):
            replace_slice(conn, "worlds", {"world": world_def.id, "world_version": world_def.version}, row)
            pruned = prune_world(conn, world_def.id, partitions, ctx.partitions.event_days)
        changes = world_def.changes()
        events = markdown_table(changes, list(changes[0])) if changes else "no change after the first checkpoint"
        return dg.MaterializeResult(metadata={
            "dagster/row_count": 1,
            "company": world_def.company,
            "world_id": world_def.id,
            "version": world_def.version,
            "source": str(world_def.source),
            "pages": world_def.page_count,
            "questions": len(world_def.question_ids),
            "scenarios": ", ".join(ctx.partitions.scenarios),
            "predicates": ", ".join(world_def.ontology.names),
            "rows_of_removed_partitions_dropped": pruned,
            "events": dg.MetadataValue.md(events),
        })

    return [world]
