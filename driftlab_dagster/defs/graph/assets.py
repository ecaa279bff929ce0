import os
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass

import dagster as dg
import duckdb

from driftlab_dagster.core import drift
from driftlab_dagster.core.day_rows import DayRows
from driftlab_dagster.core.extraction import CostSample
from driftlab_dagster.core.governed import GovernedStore
from driftlab_dagster.core.layer import KnowledgeLayer
from driftlab_dagster.core.layer_changes import stored_page_history
from driftlab_dagster.core.progress import Progress
from driftlab_dagster.core.reports import markdown_table
from driftlab_dagster.core.session import Session
from driftlab_dagster.core.slice_batch import Rows, SliceBatch, copy_slices, worker_file
from driftlab_dagster.core.store import Store
from driftlab_dagster.core.study import replay_steps
from driftlab_dagster.core.warehouse import (
    MissingUpstream,
    Slice,
    record_timings,
    stored_layer,
    transaction,
)
from driftlab_dagster.core.workers import in_order, runs_apart
from driftlab_dagster.defs.context import StudyContext
from driftlab_dagster.defs.metadata import CHECK_METADATA
from driftlab_dagster.defs.resources import ModelResource, WarehouseResource, spend_mark, spend_metadata, study_session

# The type of AssetCheckEvaluation's public `target_materialization_data` argument. Dagster 1.13 exports the
# argument but not its type (it lives in `dagster._core`, which this project never imports): read it off the
# public class's own signature, so a Dagster that renames the internal module still hands us the right type.
_TargetMaterialization = next(t for t in typing.get_args(
    typing.get_type_hints(dg.AssetCheckEvaluation.__new__)["target_materialization_data"]) if t is not type(None))

GRAPH_TABLES = ("entities", "aliases", "facts", "extraction_log", "graph_maintenance", "governed_facts",
                "governed_names")

# The three drift checks every graph partition carries, evaluated from the rows the step just wrote.
CHECKS = {
    "pages_changed_since_read": "Pages whose current version is newer than the version the graph last read: "
                                "the graph is behind them (what a patch would re-read).",
    "facts_from_superseded_pages": "Facts read from a page version that is no longer the page's current version.",
    "entity_spelling_splits": "Entities that differ only by spelling (\"Pro\" beside \"Pro plan\"): a patch keyed "
                              "by one spelling misses the other.",
}


def build(ctx: StudyContext) -> list[dg.AssetsDefinition]:
    world, parts = ctx.world, ctx.partitions
    deps = [dg.AssetDep(ctx.key("pages"), partition_mapping=parts.page_history), dg.AssetDep(ctx.key("world"))]

    def spec(name: str, description: str) -> dg.AssetSpec:
        # The three tables one replay writes: same partitions, same inputs, versioned by the extractor.
        return dg.AssetSpec(ctx.key(name), group_name="graph", partitions_def=parts.scenario_day, deps=deps,
                            kinds={"duckdb"}, code_version=ctx.extractor_id, description=description)

    @dg.multi_asset(
        name=ctx.name("graph"),
        specs=[
            spec("extraction_log", "One row per page: the version the graph last read and when, and by which "
                 "extractor. Pages whose current version is newer are what a patch re-reads (view "
                 "`pages_ahead_of_graph`)."),
            spec("fact_graph", "One row per fact after that day's maintenance under the scenario's policy: entity, "
                 "predicate, object, source page and version, extracted_at, valid_from, extractor (tables `facts`, "
                 "`entities`, `aliases`; the day's maintenance cost in `graph_maintenance`)."),
            spec("governed_graph", "One row per governed fact: canonical entity, value, source page and version, "
                 "authority rank, extractor, valid_from/valid_to and recorded_at/retracted_at; nothing is deleted, "
                 "a patch retracts and supersedes (tables `governed_facts`, `governed_names`)."),
        ],
        check_specs=[dg.AssetCheckSpec(name, asset=ctx.key("fact_graph"), description=f"{description} {CHECK_METADATA}",
                                       partitions_def=parts.scenario_day) for name, description in CHECKS.items()],
        pool="duckdb",
        backfill_policy=dg.BackfillPolicy.single_run(),
        # Check results are reported per partition (below), not as the step's outputs, so the outputs must
        # be optional; the three tables always come from one replay and are written together.
        can_subset=True,
    )
    def graph(context: dg.AssetExecutionContext, warehouse: WarehouseResource, model: ModelResource,
              progress: dg.ResourceParam[Progress]):
        """Replays each scenario's knowledge layer from its page history: initial extraction, then each
        event's maintenance under the scenario's policy (patch the changed pages, patch from the system of
        record, or nothing). A run over many days replays each scenario once and keeps every day asked for."""
        keys = parts.run_keys(context)
        metadata: dict[str, dict] = {}
        # The replays call a model only through the extractor (the reader and the embedder are the answers').
        workers = 1 if ctx.settings.extractor == "model" else ctx.settings.workers
        with warehouse.get_connection() as conn, \
                (warehouse.worker_folder() if workers > 1 else nullcontext("")) as folder:
            with study_session(ctx, conn, model, progress) as session, transaction(conn):
                batch = SliceBatch(conn, GRAPH_TABLES)
                timings: list[tuple[str, str, dict]] = []
                progress.stage(f"{world.id} graph", len(keys))
                scenarios = list(parts.by_scenario(keys).items())
                # Scenarios replay independently: `workers` of them at a time in worker processes, each given
                # its page history as read here (a group's histories are in memory at once, never all) and
                # writing its rows into a file of its own, which is copied in below.
                for start in range(0, len(scenarios), workers):
                    group = scenarios[start:start + workers]
                    replays = [_replay_input(context, conn, ctx, scenario, days) for scenario, days in group]
                    # A new file per scenario: copy_slices copies all a file holds.
                    files = ([os.path.join(folder, f"{start + i}.duckdb") for i in range(len(replays))]
                             if runs_apart(workers, len(replays)) else [None] * len(replays))
                    for (replay, file), replayed_days in in_order(lambda r: _replay(ctx, session, *r),
                                                                  list(zip(replays, files)), workers):
                        copied = []
                        for day in replayed_days:
                            key = replay.wanted[day.step]
                            where, cost = ctx.slice(key), day.cost
                            if cost is not None:
                                timings.append((replay.scenario, where.day, cost.timing()))
                            if day.tables is None:
                                copied.append(where)
                            else:  # each partition written as its changes from the one written before it
                                batch.add(where, day.tables)
                            metadata[key] = {**day.counts, "where": where, "cost": cost, "spend": day.spend,
                                             "replayed_from": _replayed_from(world.checkpoints, replay.first,
                                                                             day.step, replay.resumed is not None,
                                                                             day.maintained)}
                            context.log.info(f"{where}: {day.counts['facts']} facts, {cost.docs if cost else 0} "
                                             f"pages read by {cost.approach if cost else 'nobody'}")
                            progress.advance()
                        if file is not None:
                            copy_slices(conn, file, GRAPH_TABLES, copied)
                batch.finish()
                record_timings(conn, world, "graph_maintenance", context.run_id, timings)
            # The checks read what was just written, as anyone querying the file would see it.
            findings = {key: _findings(conn, m["where"], world.name_key) for key, m in metadata.items()}

        selected = context.selected_asset_keys
        for key, m in metadata.items():
            _describe_partition(context, ctx, key, m, findings[key], selected)
        for name in ("extraction_log", "fact_graph", "governed_graph"):
            if ctx.key(name) in selected:
                yield dg.MaterializeResult(asset_key=ctx.key(name), data_version=ctx.graph_version)
        # One evaluation per partition and check, each naming its own partition and the materialisation it
        # checked (just stored above): a run over many partitions reports them as a one-partition run does.
        selected_checks = context.selected_asset_check_keys
        checks = {k.name for k in selected_checks}
        for key, found in findings.items():
            target = _latest_materialization(context, ctx.key("fact_graph"), key)
            for name, (failing, columns) in found.items():
                if name not in checks:
                    continue
                yield dg.AssetCheckEvaluation(
                    asset_key=ctx.key("fact_graph"), check_name=name, passed=not failing, partition=key,
                    severity=dg.AssetCheckSeverity.WARN, target_materialization_data=target,
                    metadata={"count": len(failing),
                              "rows": dg.MetadataValue.md(markdown_table(failing[:50], columns) if failing
                                                          else "none")},
                )
        # Dagster counts a check as reported only when its output is yielded (it does this itself for an
        # AssetCheckResult, which cannot name a partition); without these it logs that the step "did not
        # yield or return expected outputs" although every evaluation above was recorded.
        for check_key in selected_checks:
            yield dg.Output(None, output_name=context.assets_def.get_output_name_for_asset_check_key(check_key))

    return [graph]


def _replayed_from(checkpoints: Sequence, first: int, step: int, resumed: bool, maintained: list[str]) -> str:
    """Where this partition's graph came from, in words: the initial extraction (on the first day, that is
    all it is), or the stored graph of the day before, then the events maintained since under the policy."""
    if step == 0:
        return f"{checkpoints[0].key}: the initial extraction (this day)"
    start = (f"{checkpoints[first - 1].key} (the stored graph of the day before)" if resumed
             else f"{checkpoints[0].key} (the initial extraction)")
    policies = sorted(set(maintained))
    if len(maintained) == 1:
        return f"{start}, then 1 event, " + ("not maintained" if policies == ["none"]
                                             else f"maintained by {policies[0]}")
    if policies == ["none"]:
        return f"{start}, then {len(maintained)} events, none of them maintained"
    return f"{start}, then {len(maintained)} events, each maintained by {', '.join(policies)}"


@dataclass(frozen=True)
class _ReplayInput:
    """What one scenario's replay starts from, as read from DuckDB: the days asked for (step -> partition key),
    the first step replayed, the stored layer it resumes (None: from the initial extraction) and the pages and
    renames of each step from there."""

    scenario: str
    wanted: dict[int, str]
    first: int
    resumed: KnowledgeLayer | None
    pages_by_step: list[list]
    renames: list[dict[str, str]]


@dataclass(frozen=True)
class _ReplayedDay:
    """One asked-for day of a replay: the rows of its seven tables, their counts, its maintenance cost, the
    model spend since the day before, and each event maintained since the replay began (for `replayed_from`)."""

    step: int
    tables: Mapping[str, Rows] | None  # None: written into the worker's file
    counts: dict[str, int]
    cost: CostSample | None
    spend: dict
    maintained: list[str]


def _replay_input(context: dg.AssetExecutionContext, conn: duckdb.DuckDBPyConnection, ctx: StudyContext,
                  scenario: str, days: list[tuple[str, str]]) -> _ReplayInput:
    wanted = {ctx.world.checkpoint(day).step: key for day, key in days}
    resumed = _resume_point(context, conn, ctx, scenario, min(wanted))
    first = min(wanted) if resumed else 0
    history = stored_page_history(conn, ctx.world.id, ctx.world.version, scenario, max(wanted), first)
    steps = range(first, max(wanted) + 1)
    return _ReplayInput(scenario, wanted, first, resumed, [history[step][0] for step in steps],
                        [history[step][1] for step in steps])


def _replay(ctx: StudyContext, session: Session, replay: _ReplayInput, file: str | None) -> Iterator[_ReplayedDay]:
    """One scenario's graphs, day by day: each day's rows handed over, or (in a worker process) written into
    `file`, a DuckDB file of its own. Lazy: in this process the next day is replayed only once the caller has
    taken this one, so each day's model spend is its own."""
    layer = replay.resumed or KnowledgeLayer(Store(), GovernedStore(ctx.world))
    mark = spend_mark(session)
    maintained: list[str] = []  # each replayed event's maintenance, in order
    day_rows = DayRows()
    with worker_file(file, GRAPH_TABLES) if file else nullcontext() as own:
        for step, replayed, cost in replay_steps(ctx.world, replay.scenario, layer, replay.pages_by_step,
                                                 session.extractor, replay.renames, replay.first):
            if step > 0:
                maintained.append(cost.approach if cost else "none")
            if step not in replay.wanted:
                continue
            tables = day_rows.tables(replayed)  # rows unchanged since the day before are its own tuples
            if cost is not None:
                cost_row = cost.as_row()
                tables["graph_maintenance"] = (tuple(cost_row), [tuple(cost_row.values())])
            if own is not None:
                own.add(ctx.slice(replay.wanted[step]), tables)
            store, governed = replayed.store, replayed.governed
            assert governed is not None
            counts = {"facts": len(store.facts), "entities": len(store.entities), "aliases": len(store.aliases),
                      "pages_logged": len(store.extractions),
                      "issues": sum(bool(x.issue) for x in store.extractions.values()),
                      "governed": len(governed.facts),
                      "retracted": sum(f.retracted_at is not None for f in governed.facts.values())}
            yield _ReplayedDay(step, None if own is not None else tables, counts, cost, spend_metadata(session, mark),
                               list(maintained))
            mark = spend_mark(session)


def _resume_point(context: dg.AssetExecutionContext, conn: duckdb.DuckDBPyConnection, ctx: StudyContext,
                  scenario: str, first: int) -> KnowledgeLayer | None:
    """The graphs as stored for the day before `first`, when they can stand in for replaying the days up to
    it: materialised (in this instance) after every page partition they read, for the same world version,
    every page read by this run's extractor. Otherwise None: replay from day 0. A partition materialised
    alone then costs one day's maintenance, not the whole history's; both ways give the same rows."""
    if first == 0:
        return None
    days = [c.key for c in ctx.world.checkpoints[:first]]
    previous = str(ctx.partitions.key(scenario, days[-1]))
    graph_at = _latest_materialization(context, ctx.key("fact_graph"), previous)
    if graph_at is None:
        return None
    for day in days:
        pages_at = _latest_materialization(context, ctx.key("pages"), str(ctx.partitions.key(scenario, day)))
        if pages_at is None or pages_at.storage_id > graph_at.storage_id:
            return None  # the pages were written again since: replay them
    try:
        layer = stored_layer(conn, ctx.world, ctx.slice(previous))
    except MissingUpstream:
        return None
    if any(x.extractor != ctx.extractor_id for x in layer.store.extractions.values()):
        return None
    return layer


# Returns a _TargetMaterialization or None: that type is read at runtime (above), so mypy cannot name it.
def _latest_materialization(context: dg.AssetExecutionContext, asset_key: dg.AssetKey,
                            partition: str) -> typing.Any:
    """Which materialisation a check evaluated, so the UI counts the check as current for that partition."""
    found = context.instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=asset_key, asset_partitions=[partition]), limit=1).records
    if not found:
        return None
    return _TargetMaterialization(
        run_id=found[0].event_log_entry.run_id, storage_id=found[0].storage_id, timestamp=found[0].timestamp)


def _findings(conn: duckdb.DuckDBPyConnection, where: Slice,
              name_key: Callable[[str], str]) -> dict[str, tuple[list[dict], list[str]]]:
    return {
        "pages_changed_since_read": (drift.pages_ahead(conn, where), ["page_id", "page_version", "version_read"]),
        "facts_from_superseded_pages": (drift.superseded_facts(conn, where),
                                        ["entity", "predicate", "object", "source_doc", "source_version",
                                         "page_version"]),
        "entity_spelling_splits": (drift.spelling_splits(conn, where, name_key), ["canonical", "spellings"]),
    }


def _describe_partition(context: dg.AssetExecutionContext, ctx: StudyContext, key: str, m: dict,
                        found: dict[str, tuple[list[dict], list[str]]], selected: set[dg.AssetKey]) -> None:
    """Each partition's own numbers on each of the three assets' materialisations."""
    cost = m["cost"]
    ahead = found["pages_changed_since_read"][0]

    def describe(name: str, metadata: dict) -> None:
        if ctx.key(name) in selected:
            context.add_asset_metadata(partition_key=key, asset_key=ctx.key(name), metadata=metadata)

    describe("fact_graph", {
        "dagster/row_count": m["facts"],
        "entities": m["entities"],
        "aliases": m["aliases"],
        "maintenance": cost.approach if cost else "none",
        "pages_read": cost.docs if cost else 0,
        "graph_writes": cost.graph_writes if cost else 0,
        "extractor": ctx.extractor_id,
        "world_version": ctx.world.version,
        "pages_with_extraction_issues": m["issues"],
        "replayed_from": m["replayed_from"],
        **m["spend"],
    })
    describe("extraction_log", {
        "dagster/row_count": m["pages_logged"],
        "pages_ahead_of_graph": len(ahead),
        "ahead": dg.MetadataValue.md(markdown_table(ahead, ["page_id", "page_version", "version_read"])
                                     if ahead else "every page is as the graph last read it"),
    })
    describe("governed_graph", {
        "dagster/row_count": m["governed"],
        "retracted": m["retracted"],
        "active": m["governed"] - m["retracted"],
    })
