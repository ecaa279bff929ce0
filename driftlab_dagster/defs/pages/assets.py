import dagster as dg
import pandas as pd

from driftlab_dagster.core.reports import markdown_table
from driftlab_dagster.core.store import Store
from driftlab_dagster.core.study import pages_at, sync_pages
from driftlab_dagster.core.warehouse import replace_slices, transaction
from driftlab_dagster.defs.context import StudyContext
from driftlab_dagster.defs.resources import WarehouseResource


def build(ctx: StudyContext) -> list[dg.AssetsDefinition]:
    world, parts = ctx.world, ctx.partitions

    @dg.asset(key=ctx.key("pages"), group_name="pages", partitions_def=parts.scenario_day, deps=[ctx.key("world")],
              kinds={"duckdb"}, pool="duckdb", backfill_policy=dg.BackfillPolicy.single_run())
    def pages(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
        """One row per page as the scenario's wiki shows it on that day: its text, version and updated_at.

        Each scenario's pages policy decides which events reach a page (every page, only the canonical
        page for the change, or none). A page's version bumps each day its text changes. A run over many
        partitions renders each scenario's history once.
        """
        slices, rows, metadata = [], [], {}
        for scenario, days in parts.by_scenario(context.partition_keys).items():
            wanted = {world.checkpoint(day).step: key for day, key in days}
            store = Store()
            for step in range(max(wanted) + 1):
                renames = world.renames_at(scenario, step)
                changed = sync_pages(store, world.pages_at(scenario, step), pages_at(world, step), renames)
                moved_from = {new: old for old, new in renames.items()}
                if step not in wanted:
                    continue
                where = ctx.slice(wanted[step])
                slices.append(where.key)
                changed_today = set(changed)  # on the first day every page is new: a list here was O(pages^2)
                today = [{**where.columns, "step": step, "page_id": p.id, "title": p.title, "body": p.body,
                          "version": p.version, "updated_at": p.updated_at, "changed": p.id in changed_today,
                          "audience": p.audience, "renamed_from": moved_from.get(p.id)}
                         for p in store.sorted_pages()]
                rows += today
                metadata[wanted[step]] = _metadata(today, changed, step)
        with warehouse.get_connection() as conn, transaction(conn):
            replace_slices(conn, "pages", slices, pd.DataFrame(rows))
        for key, values in metadata.items():
            context.add_asset_metadata(values, partition_key=key)
        return dg.MaterializeResult()

    return [pages]


def _metadata(rows: list[dict], changed: list[str], step: int) -> dict:
    shown = [r for r in rows if r["changed"]][:8] if step else rows[:3]
    return {
        "dagster/row_count": len(rows),
        "pages_changed": len(changed) if step else 0,
        "changed": ", ".join(changed) if step and changed else ("initial load" if not step else "no page changed"),
        "world_version": rows[0]["world_version"] if rows else "",
        "preview": dg.MetadataValue.md(markdown_table(shown, ["page_id", "title", "version", "body"])),
    }
