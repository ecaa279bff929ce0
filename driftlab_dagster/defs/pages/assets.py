import dagster as dg
import pandas as pd

from driftlab_dagster.core.reports import markdown_table
from driftlab_dagster.core.study import page_history
from driftlab_dagster.core.warehouse import replace_slices, stored_world_json, transaction
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
    slices, rows, changed_md = [], [], []
    with warehouse.get_connection() as conn:
        world = World.from_json(stored_world_json(conn))
        for key in context.partition_keys:
            scenario, day = scenario_and_day(key)
            step = world.checkpoint(day).step
            stored, changed = page_history(world, scenario, step)[-1]
            slices.append({"scenario": scenario, "day": day})
            rows += [{"scenario": scenario, "day": day, "step": step, "page_id": p.id, "title": p.title,
                      "body": p.body, "version": p.version, "updated_at": p.updated_at, "changed": p.id in changed}
                     for p in stored]
            changed_md.append(f"- **{scenario} {day}**: {', '.join(changed) if step else 'initial load'}"
                              if changed or not step else f"- **{scenario} {day}**: no page changed")
        with transaction(conn):
            replace_slices(conn, "pages", slices, pd.DataFrame(rows))
    last_slice = [r for r in rows if (r["scenario"], r["day"]) == (slices[-1]["scenario"], slices[-1]["day"])]
    preview = [r for r in last_slice if r["changed"]][:8] or last_slice[:3]
    return dg.MaterializeResult(metadata={
        "dagster/row_count": len(rows),
        "pages_changed": sum(r["changed"] and r["step"] > 0 for r in rows),
        "changed_pages": dg.MetadataValue.md("\n".join(changed_md)),
        "preview": dg.MetadataValue.md(markdown_table(preview, ["page_id", "title", "version", "body"])),
    })
