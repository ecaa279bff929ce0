import dagster as dg
import pandas as pd

from driftlab_dagster.core.reports import markdown_table
from driftlab_dagster.core.study import page_history
from driftlab_dagster.core.warehouse import replace_slice, stored_world_json, transaction
from driftlab_dagster.core.world import World
from driftlab_dagster.defs.partitions import scenario_and_day, scenario_day_partitions
from driftlab_dagster.defs.resources import WarehouseResource


@dg.asset(group_name="pages", partitions_def=scenario_day_partitions, deps=["world"], kinds={"duckdb"},
          pool="duckdb")
def pages(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    """One row per page as the scenario's wiki shows it on that day: its text, version and updated_at.

    Fresh and StaleGraph pages follow every event, PartialPages only the canonical page for each change,
    StalePages never change. A page's version bumps each day its text changes.
    """
    summary = []
    with warehouse.get_connection() as conn:
        world = World.from_json(stored_world_json(conn))
        for key in context.partition_keys:
            scenario, day = scenario_and_day(key)
            step = world.checkpoint(day).step
            stored, changed = page_history(world, scenario, step)[-1]
            rows = pd.DataFrame([
                {"scenario": scenario, "day": day, "step": step, "page_id": p.id, "title": p.title, "body": p.body,
                 "version": p.version, "updated_at": p.updated_at, "changed": p.id in changed}
                for p in stored
            ])
            with transaction(conn):
                replace_slice(conn, "pages", {"scenario": scenario, "day": day}, rows)
            summary.append((key, scenario, day, len(rows), changed, rows))
    changed_md = "\n".join(
        f"- **{s} {d}**: {', '.join(c) if c else 'no page changed'}" for _, s, d, _, c, _ in summary
    )
    last = summary[-1][5]
    preview = last[last["changed"]] if last["changed"].any() else last.head(3)
    return dg.MaterializeResult(metadata={
        "dagster/row_count": sum(n for _, _, _, n, _, _ in summary),
        "pages_changed": sum(len(c) for _, _, _, _, c, _ in summary),
        "changed_pages": dg.MetadataValue.md(changed_md),
        "preview": dg.MetadataValue.md(markdown_table(preview.to_dict("records"), ["page_id", "title", "version", "body"])),
    })
