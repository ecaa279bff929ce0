from dataclasses import replace
from itertools import groupby

import dagster as dg
import pandas as pd
from pydantic import Field, field_validator

from driftlab_dagster.core.extraction import FULL, PATCH_PAGES, full_reextract, patch_changed_pages
from driftlab_dagster.core.governed import GovernedStore
from driftlab_dagster.core.reports import markdown_table
from driftlab_dagster.core.session import Session
from driftlab_dagster.core.store import StoredPage
from driftlab_dagster.core.study import replay_graph
from driftlab_dagster.core.warehouse import records, replace_slices, stored_world_json, transaction
from driftlab_dagster.core.world import World
from driftlab_dagster.defs.partitions import page_history, scenario_and_day, scenario_day_partitions
from driftlab_dagster.defs.resources import StudyResource, WarehouseResource, spend_metadata
from driftlab_dagster.defs.settings import EXTRACTOR_VERSION


class GraphConfig(dg.Config):
    repair: str = Field(
        default="none",
        description="'none' keeps the scenario's policy; 'patch' re-reads the pages changed since the last "
                    "extraction on that day; 'full' rebuilds the graph from every page.",
    )

    @field_validator("repair")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in ("none", "patch", "full"):
            raise ValueError("repair is 'none', 'patch' or 'full'")
        return value


_GRAPH_DEPS = [dg.AssetDep("pages", partition_mapping=page_history), dg.AssetDep("world")]


def _graph_spec(name: str, description: str) -> dg.AssetSpec:
    # The three tables one replay writes: same partitions, same inputs, versioned by the extractor.
    return dg.AssetSpec(name, group_name="graph", partitions_def=scenario_day_partitions, deps=_GRAPH_DEPS,
                        kinds={"duckdb"}, code_version=EXTRACTOR_VERSION, description=description)


@dg.multi_asset(
    specs=[
        _graph_spec("extraction_log", "One row per page: the version the graph last read and when. Pages whose "
                    "current version is newer are what a patch re-reads (view `pages_ahead_of_graph`)."),
        _graph_spec("fact_graph", "One row per fact after that day's maintenance under the scenario's policy: "
                    "entity, predicate, object, source page and version, extracted_at, valid_from (tables "
                    "`facts`, `entities`, `aliases`; the day's maintenance cost in `graph_maintenance`)."),
        _graph_spec("governed_graph", "One row per governed fact: canonical entity, value, source page and "
                    "version, authority rank, extractor, valid_from/valid_to and recorded_at/retracted_at; "
                    "nothing is deleted, a patch retracts and supersedes (tables `governed_facts`, "
                    "`governed_names`)."),
    ],
    pool="duckdb",
)
def fact_graph(context: dg.AssetExecutionContext, config: GraphConfig, warehouse: WarehouseResource,
               study: StudyResource):
    """Replays the scenario's knowledge layer from its page history: initial extraction, then each event's
    maintenance (patch the changed pages, patch from the system of record, or nothing), then the repair
    asked for in the run config, if any."""
    with warehouse.get_connection() as conn:
        world = World.from_json(stored_world_json(conn))
        with study.session(world, conn) as session:
            session.progress.stage("fact_graph", len(context.partition_keys))
            results, slices, tables = _replay_partitions(context, conn, world, session, config.repair)
        with transaction(conn):
            for table, rows in tables.items():
                replace_slices(conn, table, slices, pd.DataFrame(rows))
        ahead = records(conn, "SELECT scenario, day, page_id, page_version, version_read FROM pages_ahead_of_graph "
                              "WHERE scenario = ? AND day = ? ORDER BY page_id",
                        [slices[-1]["scenario"], slices[-1]["day"]])
        counts = dict(conn.execute("SELECT scenario || ' ' || day, count(*) FROM pages_ahead_of_graph "
                                   "GROUP BY ALL").fetchall())
    for r in results:
        r["pages_ahead"] = counts.get(f"{r['scenario']} {r['day']}", 0)
    last = results[-1]
    yield dg.MaterializeResult(asset_key="extraction_log", metadata={
        "dagster/row_count": sum(r["log"] for r in results),
        "pages_ahead_of_graph": last["pages_ahead"],
        "ahead": dg.MetadataValue.md(markdown_table(ahead, ["scenario", "day", "page_id", "page_version", "version_read"])
                                     if ahead else "every page is as the graph last read it"),
    })
    yield dg.MaterializeResult(asset_key="governed_graph", metadata={
        "dagster/row_count": len(tables["governed_facts"]),
        "retracted": sum(r["retracted_at"] is not None for r in tables["governed_facts"]),
        "names": len(tables["governed_names"]),
    })
    yield dg.MaterializeResult(asset_key="fact_graph", metadata={
        "dagster/row_count": sum(r["facts"] for r in results),
        "facts": last["facts"],
        "entities": last["entities"],
        "aliases": last["aliases"],
        "maintenance": last["approach"],
        "pages_read": last["pages_read"],
        "graph_writes": last["graph_writes"],
        "extractor": session.extractor.id,
        "pages_with_extraction_issues": sum(r["issues"] for r in results),
        **spend_metadata(session),
        "partitions": dg.MetadataValue.md(markdown_table(
            results, ["scenario", "day", "approach", "pages_read", "graph_writes", "facts", "pages_ahead"])),
    })


def _replay_partitions(context: dg.AssetExecutionContext, conn, world: World, session: Session,  # type: ignore[no-untyped-def]
                       repair: str):
    results: list[dict] = []
    slices: list[dict] = []
    tables: dict[str, list[dict]] = {t: [] for t in ("entities", "aliases", "facts", "extraction_log",
                                                      "graph_maintenance", "governed_facts", "governed_names")}
    for key in context.partition_keys:
        scenario, day = scenario_and_day(key)
        step = world.checkpoint(day).step
        governed = GovernedStore(world)
        store, costs = replay_graph(world, scenario, _page_history(conn, scenario, step), session.extractor, governed)
        today = next((c for c in costs if c.event == step), None)
        samples = [today] if today else []
        if repair != "none":
            fix = patch_changed_pages if repair == "patch" else full_reextract
            today = replace(fix(store, session.extractor, world.checkpoints[step].at, step, governed),
                            approach=f"repair: {PATCH_PAGES if repair == 'patch' else FULL}")
            samples.append(today)
        snapshot = store.snapshot()
        where = {"scenario": scenario, "day": day}
        slices.append(where)
        for table in ("entities", "aliases", "facts", "extraction_log"):
            tables[table] += [{**where, **r} for r in snapshot[table]]
        for table, rows in governed.snapshot().items():
            tables[table] += [{**where, **r} for r in rows]
        tables["graph_maintenance"] += [{**where, **sample.as_row()} for sample in samples]
        context.log.info(f"{scenario} {day}: {len(snapshot['facts'])} facts, "
                         f"{today.docs if today else 0} pages read by {today.approach if today else 'nobody'}")
        results.append({"scenario": scenario, "day": day, "facts": len(snapshot["facts"]),
                        "entities": len(snapshot["entities"]), "aliases": len(snapshot["aliases"]),
                        "pages_read": today.docs if today else 0,
                        "graph_writes": today.graph_writes if today else 0,
                        "approach": today.approach if today else "none", "log": len(snapshot["extraction_log"]),
                        "issues": sum(bool(x["issue"]) for x in snapshot["extraction_log"])})
        session.progress.advance()
    return results, slices, tables


def _page_history(conn, scenario: str, step: int) -> list[list[StoredPage]]:  # type: ignore[no-untyped-def]
    rows = records(conn, """SELECT step, page_id, title, body, version, updated_at FROM pages
                            WHERE scenario = ? AND step <= ? ORDER BY step, page_id""", [scenario, step])
    history = [
        [StoredPage(r["page_id"], r["title"], r["body"], r["version"], r["updated_at"]) for r in group]
        for _, group in groupby(rows, key=lambda r: r["step"])
    ]
    if len(history) != step + 1:
        raise ValueError(f"pages of {scenario} are missing for some of steps 0..{step}: materialise them first")
    return history
