"""The definitions factory: one configuration object in, every world's assets, checks, jobs, schedules and
sensors out. The code location (`definitions.py`), the headless command and the tests all call it.

Each stage folder is also the asset group of its assets: world, pages, graph, evaluation, maintenance,
reports. Each world's assets live under its id (`tessaly_freight/fact_graph`), with its own partitions.
"""

from __future__ import annotations

import warnings

import dagster as dg

from driftlab_dagster.config import ConfigError, DriftlabConfig
from driftlab_dagster.core.progress import Progress
from driftlab_dagster.core.world.loader import load_world
from driftlab_dagster.defs import automation
from driftlab_dagster.defs.context import StudyContext
from driftlab_dagster.defs.evaluation import assets as evaluation
from driftlab_dagster.defs.graph import assets as graph
from driftlab_dagster.defs.maintenance import assets as maintenance
from driftlab_dagster.defs.metadata import with_glossaries
from driftlab_dagster.defs.pages import assets as pages
from driftlab_dagster.defs.reports import assets as reports
from driftlab_dagster.defs.resources import build_resources
from driftlab_dagster.defs.world import assets as world

STAGES = (world, pages, graph, evaluation, maintenance, reports)


def study_contexts(config: DriftlabConfig) -> list[StudyContext]:
    contexts = [StudyContext.build(load_world(path), config.study) for path in config.worlds]
    seen: dict[str, str] = {}
    for ctx in contexts:
        if ctx.world.id in seen:
            raise ConfigError(f"{ctx.world.source} and {seen[ctx.world.id]} are both world {ctx.world.id!r}: give one "
                              "of them its own `id:`")
        seen[ctx.world.id] = ctx.world.source
    return contexts


def world_definitions(ctx: StudyContext, config: DriftlabConfig) -> dg.Definitions:
    # Single-run backfill policies (beta) and partitioned check specs (preview) are what let one run over
    # many partitions report each partition's own metadata and checks; we depend on them knowingly.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.BetaWarning)
        warnings.simplefilter("ignore", dg.PreviewWarning)
        assets = with_glossaries([a for stage in STAGES for a in stage.build(ctx)], ctx.settings.uses_model)
        return dg.Definitions(assets=assets, **automation.build(ctx, config.nightly_cron))


def build_definitions(config: DriftlabConfig, progress: Progress | None = None,
                      contexts: list[StudyContext] | None = None) -> dg.Definitions:
    """`contexts`: the configured worlds already loaded (`study_contexts(config)`), so a caller that needed
    them first does not parse every world file twice (at 40,000 pages that is seconds)."""
    # In process by default: a run's steps share one process, so a run over many partitions pays Dagster's
    # start-up once. With the multiprocess executor the steps that write DuckDB still queue on the pool.
    executor = dg.in_process_executor if config.executor == "in_process" else dg.multiprocess_executor
    return dg.Definitions.merge(
        *(world_definitions(ctx, config) for ctx in (contexts if contexts is not None else study_contexts(config))),
        dg.Definitions(resources=build_resources(config, progress), executor=executor),
    )
