import os
from collections.abc import Iterator
from contextlib import nullcontext

import dagster as dg

from driftlab_dagster.core.day_rows import PAGE_COLUMNS, PageRows
from driftlab_dagster.core.duckdb_file import disk_full_in_one_line
from driftlab_dagster.core.layer import KnowledgeLayer
from driftlab_dagster.core.reports import markdown_table
from driftlab_dagster.core.slice_batch import KeyedRows, SliceBatch, copy_slices, worker_file
from driftlab_dagster.core.store import Store, StoredPage
from driftlab_dagster.core.study import pages_at, sync_pages
from driftlab_dagster.core.warehouse import Slice, transaction
from driftlab_dagster.core.workers import in_order, runs_apart
from driftlab_dagster.defs.context import PAGES_CODE_VERSION, StudyContext
from driftlab_dagster.defs.resources import WarehouseResource


def build(ctx: StudyContext) -> list[dg.AssetsDefinition]:
    parts = ctx.partitions

    @dg.asset(key=ctx.key("pages"), group_name="pages", partitions_def=parts.scenario_day, deps=[ctx.key("world")],
              kinds={"duckdb"}, pool="duckdb", code_version=PAGES_CODE_VERSION,
              backfill_policy=dg.BackfillPolicy.single_run())
    def pages(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
        """One row per page as the scenario's wiki shows it on that day: its text, version and updated_at.

        Each scenario's pages policy decides which events reach a page (every page, only the canonical
        page for the change, or none). A page's version bumps each day its text changes. A run over many
        partitions renders each scenario's history once.
        """
        scenarios = list(parts.by_scenario(parts.run_keys(context)).items())
        metadata: dict[str, dict] = {}
        apart = runs_apart(ctx.settings.workers, len(scenarios))
        with (warehouse.worker_folder() if apart else nullcontext("")) as folder, \
                disk_full_in_one_line(warehouse.database):
            # Scenarios render independently: in worker processes (pages call no model), each writing a DuckDB
            # file of its own, or here. Rendering comes before the study's file is opened, so it is held only
            # while writing.
            work = [(scenario, days, os.path.join(folder, f"{i}.duckdb") if apart else None)
                    for i, (scenario, days) in enumerate(scenarios)]
            rendered = [(file, list(days)) for (_, _, file), days in
                        in_order(lambda w: _render(ctx, *w), work, ctx.settings.workers)]
            with warehouse.get_connection() as conn, transaction(conn):
                batch = SliceBatch(conn, ["pages"])
                for file, days in rendered:
                    for key, where, step, rows, values in days:
                        if rows is not None:  # each written as its changes from the partition before it
                            batch.add(where, {"pages": (PAGE_COLUMNS, rows)}, constants={"step": step})
                        metadata[key] = values
                    if file is not None:
                        copy_slices(conn, file, ["pages"], [where for _, where, *_ in days])
                batch.finish()
        for key, values in metadata.items():
            context.add_asset_metadata(values, partition_key=key)
        return dg.MaterializeResult(data_version=ctx.pages_version)

    return [pages]


def _render(ctx: StudyContext, scenario: str, days: list[tuple[str, str]],
            file: str | None) -> Iterator[tuple[str, Slice, int, KeyedRows | None, dict]]:
    """One scenario's pages on each day asked for, rendered through its history: (partition key, slice, step,
    rows or None when written into `file`, the partition's metadata)."""
    world = ctx.world
    wanted = {world.checkpoint(day).step: key for day, key in days}
    layer = KnowledgeLayer(Store())
    page_rows = PageRows()  # each day's rows name the pages that may differ from the day before's
    with worker_file(file, ["pages"]) if file else nullcontext() as own:
        for step in range(max(wanted) + 1):
            renames = world.renames_at(scenario, step)
            changed = sync_pages(layer, world.pages_at(scenario, step), pages_at(world, step), renames)
            page_rows.step(changed, renames)
            if step not in wanted:
                continue
            where = ctx.slice(wanted[step])
            today = layer.store.sorted_pages()
            # A set: on the first day every page is new, and a list here was O(pages^2).
            rows = page_rows.rows(today, set(changed), {new: old for old, new in renames.items()})
            if own is not None:
                own.add(where, {"pages": (PAGE_COLUMNS, rows)}, constants={"step": step})
            yield wanted[step], where, step, None if own is not None else rows, _metadata(today, changed, step,
                                                                                           where.world_version)


def _metadata(pages: list[StoredPage], changed: list[str], step: int, world_version: str) -> dict:
    ids = set(changed)
    shown = [p for p in pages if p.id in ids][:8] if step else pages[:3]
    return {
        "dagster/row_count": len(pages),
        "pages_changed": len(changed) if step else 0,
        "changed": ", ".join(changed) if step and changed else ("initial load" if not step else "no page changed"),
        "world_version": world_version if pages else "",
        "preview": dg.MetadataValue.md(markdown_table(
            [{"page_id": p.id, "title": p.title, "version": p.version, "body": p.body} for p in shown],
            ["page_id", "title", "version", "body"])),
    }
