from collections.abc import Iterator

import dagster as dg
import pandas as pd

from driftlab_dagster.core.designs import ALL_DESIGNS
from driftlab_dagster.core.evaluation import evaluate, read_ahead
from driftlab_dagster.core.layer import KnowledgeLayer
from driftlab_dagster.core.layer_changes import LayerReader
from driftlab_dagster.core.progress import Progress
from driftlab_dagster.core.reports import markdown_table, stated
from driftlab_dagster.core.session import Session, when_silent
from driftlab_dagster.core.warehouse import replace_slices, transaction
from driftlab_dagster.core.workers import in_order
from driftlab_dagster.defs.context import StudyContext
from driftlab_dagster.defs.resources import ModelResource, WarehouseResource, spend_mark, spend_metadata, study_session


def build(ctx: StudyContext) -> list[dg.AssetsDefinition]:
    world, parts = ctx.world, ctx.partitions
    upstream = ["pages", "fact_graph", "extraction_log", "governed_graph", "world"]

    @dg.asset(key=ctx.key("answers"), group_name="evaluation", partitions_def=parts.scenario_day,
              deps=[ctx.key(name) for name in upstream], kinds={"duckdb"}, pool="duckdb",
              code_version=ctx.reader_id, backfill_policy=dg.BackfillPolicy.single_run())
    def answers(context: dg.AssetExecutionContext, warehouse: WarehouseResource, model: ModelResource,
                progress: dg.ResourceParam[Progress]) -> dg.MaterializeResult:
        """One row per (design, question) asked on that day in that scenario: the answer, the expected value,
        whether it was right, hedged, and why. Evidence comes from that day's pages and graphs only, as they
        are stored in DuckDB."""
        keys = parts.run_keys(context)
        slices, rows, embeddings, metadata = [], [], [], {}
        # The same warning `driftlab run` prints: a prose world read without a model answers only by abstaining.
        unread = ctx.settings.prose_unread(world.ontology.described_count)
        workers = ctx.settings.model_free_workers
        with warehouse.get_connection() as conn:
            with study_session(ctx, conn, model, progress) as session:
                progress.stage(f"{world.id} answers", len(keys))
                # Partitions are asked independently: `workers` at a time in worker processes, each given its
                # layer as read here (a forked worker starts with it in memory). Each partition is read as its
                # changes from the scenario's day before or, a first day, from another scenario's: the same
                # layers, from a fraction of the rows.
                layers = LayerReader(conn, world)
                for group in (keys[i:i + workers] for i in range(0, len(keys), workers)):
                    stored = [(key, layers.read(ctx.slice(key))) for key in group]
                    for (key, _), asked in in_order(lambda item: _ask(ctx, session, *item), stored, workers):
                        [(found, vectors, spend)] = asked
                        where = ctx.slice(key)
                        rows += [{**where.columns, **r} for r in found]
                        slices.append(where.key)
                        embeddings += [{**where.columns, **v} for v in vectors]
                        metadata[key] = {**_summary(found), **spend,
                                         **({"prose_unread": dg.MetadataValue.text(unread)} if unread else {})}
                        progress.advance()
            with transaction(conn):
                replace_slices(conn, "answers", slices, pd.DataFrame(rows))
                replace_slices(conn, "page_embeddings", slices, pd.DataFrame(embeddings))
        for key, values in metadata.items():
            context.add_asset_metadata(values, partition_key=key)
        return dg.MaterializeResult(data_version=ctx.answers_version)

    return [answers]


def _ask(ctx: StudyContext, session: Session, key: str, layer: KnowledgeLayer) -> Iterator[tuple[list, list, dict]]:
    """One partition's answers (one row per design and question), its page embeddings (embedding retrieval
    only) and the model spend of asking them: one item, yielded, so that a worker process can hand it back."""
    where = ctx.slice(key)
    mark = spend_mark(session)
    retriever = session.retriever(layer.store.sorted_pages())
    step = ctx.world.checkpoint(where.day).step
    # With calls in flight, the reader's calls are asked ahead, k at a time; same rows.
    silent = when_silent(ctx.settings, ctx.world)
    read_ahead(layer, ctx.world, where.scenario, step, session.reader, ALL_DESIGNS, retriever, session.extractor,
               ctx.settings.concurrency, silent)
    found = evaluate(layer, ctx.world, where.scenario, step, session.reader, ALL_DESIGNS, retriever, session.extractor,
                     silent)
    vectors = ([{"page_id": p.id, "version": p.version, "model": ctx.settings.embed_model, "embedding": v}
                for p, v in retriever.vectors()] if hasattr(retriever, "vectors") else [])
    yield found, vectors, spend_metadata(session, mark)


def _summary(rows: list[dict]) -> dict:
    """One partition's answers at a glance: accuracy per design (all answers, and those whose expected value is
    stated rather than "none"), hedges, and every answer that was not right."""
    by_design = []
    for design in ALL_DESIGNS:
        cell = [r for r in rows if r["design"] == design.value]
        read = [r for r in cell if stated(r)]  # what the design read, not what abstaining won it
        by_design.append({
            "design": design.value,
            "accuracy": f"{100 * sum(r['outcome'] == 'correct' for r in cell) / len(cell):.0f}%" if cell else "-",
            "stated": f"{100 * sum(r['outcome'] == 'correct' for r in read) / len(read):.0f}%" if read else "-",
            "wrong": sum(r["outcome"] == "wrong" for r in cell),
            "hedged": sum(r["hedged"] for r in cell),
            "abstain": sum(r["outcome"] == "abstain" for r in cell),
        })
    misses = [r for r in rows if r["outcome"] != "correct"]
    metadata: dict = {
        "dagster/row_count": len(rows),
        "accuracy": round(sum(r["outcome"] == "correct" for r in rows) / len(rows), 4) if rows else 0.0,
        "hedged": sum(r["hedged"] for r in rows),
        "by_design": dg.MetadataValue.md(markdown_table(by_design, list(by_design[0]))),
        "misses": dg.MetadataValue.md(
            markdown_table(misses[:40], ["design", "question", "outcome", "answer", "expected", "why"])
            if misses else "every answer is right"),
    }
    for design in ALL_DESIGNS:
        cell = [r for r in rows if r["design"] == design.value]
        if cell:
            metadata[f"accuracy_{design.value}"] = round(sum(r["outcome"] == "correct" for r in cell) / len(cell), 4)
    return metadata
