import dagster as dg
import pandas as pd

from driftlab_dagster.core.designs import ALL_DESIGNS
from driftlab_dagster.core.evaluation import evaluate
from driftlab_dagster.core.governed import GovernedStore
from driftlab_dagster.core.reports import markdown_table
from driftlab_dagster.core.store import Store
from driftlab_dagster.core.warehouse import (
    replace_slices,
    stored_governed,
    stored_graph,
    stored_pages,
    stored_world_json,
    transaction,
)
from driftlab_dagster.core.world import World
from driftlab_dagster.defs.partitions import scenario_and_day, scenario_day_partitions
from driftlab_dagster.defs.resources import StudyResource, WarehouseResource, spend_metadata
from driftlab_dagster.defs.settings import READER_VERSION


@dg.asset(group_name="evaluation", partitions_def=scenario_day_partitions,
          deps=["pages", "fact_graph", "extraction_log", "governed_graph", "world"], kinds={"duckdb"}, pool="duckdb",
          code_version=READER_VERSION)
def answers(context: dg.AssetExecutionContext, warehouse: WarehouseResource, study: StudyResource) -> dg.MaterializeResult:
    """One row per (design, question) asked on that day in that scenario: the answer, the expected value,
    whether it was right, hedged, and why. Evidence comes from that day's pages and fact graph only."""
    per_partition, slices, frames = [], [], []
    with warehouse.get_connection() as conn:
        world = World.from_json(stored_world_json(conn))
        embeddings = []
        with study.session(world, conn) as session:
            session.progress.stage("answers", len(context.partition_keys))
            for key in context.partition_keys:
                scenario, day = scenario_and_day(key)
                step = world.checkpoint(day).step
                pages = stored_pages(conn, scenario, day)
                graph = stored_graph(conn, scenario, day)
                store = Store.from_snapshot(pages=pages, **graph)
                governed = GovernedStore.from_snapshot(world, extraction_log=graph["extraction_log"],
                                                       **stored_governed(conn, scenario, day))
                retriever = session.retriever(store.sorted_pages())
                rows = evaluate(store, world, scenario, step, session.reader, ALL_DESIGNS, retriever, governed)
                slices.append({"scenario": scenario, "day": day})
                frames += [{**r, "day": day} for r in rows]
                per_partition.append((scenario, day, rows))
                if hasattr(retriever, "vectors"):
                    embeddings += [{"scenario": scenario, "day": day, "page_id": p.id, "version": p.version,
                                    "model": session.config.embed_model, "embedding": v} for p, v in retriever.vectors()]
                session.progress.advance()
        with transaction(conn):
            replace_slices(conn, "answers", slices, pd.DataFrame(frames))
            replace_slices(conn, "page_embeddings", slices, pd.DataFrame(embeddings))
    by_design = []
    for scenario, day, rows in per_partition:
        for design in ALL_DESIGNS:
            cell = [r for r in rows if r["design"] == design.value]
            by_design.append({
                "scenario": scenario, "day": day, "design": design.value,
                "accuracy": f"{100 * sum(r['outcome'] == 'correct' for r in cell) / len(cell):.0f}%",
                "wrong": sum(r["outcome"] == "wrong" for r in cell),
                "hedged": sum(r["hedged"] for r in cell),
                "abstain": sum(r["outcome"] == "abstain" for r in cell),
            })
    all_rows = [r for _, _, rows in per_partition for r in rows]
    misses = [r for r in all_rows if r["outcome"] != "correct"]
    metadata: dict = {
        "dagster/row_count": len(all_rows),
        "accuracy": round(sum(r["outcome"] == "correct" for r in all_rows) / len(all_rows), 4),
        "hedged": sum(r["hedged"] for r in all_rows),
        "reader": getattr(session.reader, "id", "deterministic"),
        "retrieval": session.config.retrieval,
        **spend_metadata(session),
        "by_design": dg.MetadataValue.md(markdown_table(by_design, list(by_design[0]))),
        "misses": dg.MetadataValue.md(
            markdown_table(misses[:40], ["scenario", "design", "question", "outcome", "answer", "expected", "why"])
            if misses else "every answer is right"),
    }
    for design in ALL_DESIGNS:
        cell = [r for r in all_rows if r["design"] == design.value]
        metadata[f"accuracy_{design.value}"] = round(sum(r["outcome"] == "correct" for r in cell) / len(cell), 4)
    return dg.MaterializeResult(metadata=metadata)
