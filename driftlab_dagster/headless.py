"""The study as Dagster runs, without the UI: what `make run`, the benchmarks and the acceptance tests call.

For each world, the same jobs the UI and the nightly schedule launch, executed in process against the
instance `make dev` shows (or an ephemeral one): the study job over a rectangle of (scenario, day)
partitions, then the maintenance job over the event days. Inside a run Dagster orders the steps by the
asset graph, so every graph partition finds the page history it declares.

Dagster stores each event as it comes: on a PostgreSQL instance, by default, each through a connection of its
own, and a study run stores hundreds (a materialisation and a check evaluation per partition). So the runs here
hold their instance's connections open for the command's life, as the webserver does, and store each step's
materialisations of one asset in one batch (DAGSTER_EVENT_BATCH_SIZE, Dagster's own switch, read per event).
Both leave every stored event as it was; on SQLite neither changes anything (BENCHMARKS.md "Dagster's cost
per event").

Runs of this command carry the process that runs them in their tags. Before a run starts, runs of earlier
commands whose process is gone (killed, a power cut) are marked failed and their DuckDB pool slots freed;
a live run from elsewhere holding the pool is waited for, boundedly, and named if it does not let go.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import dagster as dg
import duckdb

from driftlab_dagster.config import DriftlabConfig
from driftlab_dagster.core.errors import UserError
from driftlab_dagster.core.progress import Progress
from driftlab_dagster.core.reports import check_output_dir
from driftlab_dagster.core.world import World
from driftlab_dagster.defs import build_definitions, study_contexts
from driftlab_dagster.defs.automation import study_selection
from driftlab_dagster.defs.context import StudyContext
from driftlab_dagster.processes import is_zombie, process_start
from driftlab_dagster.project import EVENT_BATCH_SIZE, REPOSITORY_LABEL

# Failures surface as one line from the command, so Dagster's console logger stays silent.
_QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
POOL = "duckdb"
PID_TAG, HOST_TAG, START_TAG = "driftlab/pid", "driftlab/host", "driftlab/process_start"
REPOSITORY_TAG = ".dagster/repository"  # dagster._core.storage.tags.REPOSITORY_LABEL_TAG (a test pins it)
_LIVE = [dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.CANCELING,
         dg.DagsterRunStatus.NOT_STARTED]


class HeadlessError(UserError, RuntimeError):
    """A run could not start or finish; the message is one line that says what to do."""


@dataclass(frozen=True)
class WorldRun:
    world: World
    results_csv: Path
    costs_csv: Path | None  # None when only a slice ran
    run_ids: list[str]
    spend: dict[str, int]  # model calls made, served from the cache, and tokens live versus spent


def run_study_in_dagster(config: DriftlabConfig, instance: dg.DagsterInstance | None = None,
                         scenarios: list[str] | None = None, until: str | None = None,
                         progress: Progress | None = None, echo: Callable[[str], None] = lambda _: None,
                         ) -> list[WorldRun]:
    """Every configured world's study, or a slice of it: `scenarios` (default all) from the first
    checkpoint through `until` (default the last). Returns what each world's runs wrote."""
    contexts = study_contexts(config)
    for ctx in contexts:
        _check_slice(ctx, scenarios, until)
        check_output_dir(config.output_dir / ctx.world.id)
    definitions = build_definitions(config, progress, contexts)
    if instance is None:
        # With DAGSTER_HOME set (make run sets it), the runs land in the instance `dagster dev` shows.
        instance = dg.DagsterInstance.get() if _dagster_home() else dg.DagsterInstance.ephemeral()
        hold_connections(instance)  # ours alone: a caller's instance keeps its connections as it chose
    with events_batched():
        return [_run_world(definitions, ctx, config, instance, scenarios, until, echo) for ctx in contexts]


def hold_connections(instance: dg.DagsterInstance) -> None:
    """Keep the instance's database connections open between storage calls, as the webserver does (a pool
    of one, more while calls overlap), instead of a new connection per call. No statement timeout: a run
    is not a page waiting on a query. A no-op for SQLite storage."""
    instance.optimize_for_webserver(statement_timeout=0, pool_recycle=3600, max_overflow=20)


@contextmanager
def events_batched() -> Iterator[None]:
    """Dagster's event batching on while the runs execute, unless the caller set it; as it was afterwards."""
    before = os.environ.get("DAGSTER_EVENT_BATCH_SIZE")
    if before is None:
        os.environ["DAGSTER_EVENT_BATCH_SIZE"] = EVENT_BATCH_SIZE
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("DAGSTER_EVENT_BATCH_SIZE", None)


def _dagster_home() -> str | None:
    """DAGSTER_HOME when set, checked first: Dagster's own error for a missing folder is a traceback."""
    home = os.environ.get("DAGSTER_HOME")
    if not home:
        return None
    if not os.path.isabs(home):
        raise HeadlessError(f"DAGSTER_HOME={home} is not an absolute path: set it to one (DAGSTER_HOME=$PWD/{home}) "
                            f"or unset it to run on a throwaway instance")
    if not os.path.isdir(home):
        raise HeadlessError(f"DAGSTER_HOME={home} is not a folder: create it (mkdir -p {home}) or unset "
                            f"DAGSTER_HOME to run on a throwaway instance")
    return home


def _check_slice(ctx: StudyContext, scenarios: list[str] | None, until: str | None) -> None:
    parts = ctx.partitions
    unknown = ([s for s in scenarios or [] if s not in parts.scenarios]
               + ([until] if until and until not in parts.days else []))
    if unknown:
        raise HeadlessError(f"not in world {ctx.world.id}: {', '.join(unknown)} "
                            f"(scenarios: {', '.join(parts.scenarios)}; days: {', '.join(parts.days)})")


def _run_world(definitions: dg.Definitions, ctx: StudyContext, config: DriftlabConfig, instance: dg.DagsterInstance,
               scenarios: list[str] | None, until: str | None, echo: Callable[[str], None]) -> WorldRun:
    parts = ctx.partitions
    whole = scenarios is None and until is None
    run_ids: list[str] = []

    def execute(job_name: str, tags: dict[str, str], selection: list[dg.AssetKey] | None = None) -> None:
        prepare_instance(instance, config.pool_wait, echo)
        started = time.monotonic()
        result = execute_job(definitions.resolve_job_def(job_name), instance, tags={**tags, **process_tags()},
                             asset_selection=selection)
        run_ids.append(result.run_id)
        echo(f"{job_name}: run {result.run_id[:8]} finished in {time.monotonic() - started:.1f}s")

    if whole:
        execute(ctx.name("study"), parts.range_tags())
        execute(ctx.name("maintenance"), parts.event_range_tags())
    else:
        chosen = [s for s in parts.scenarios if s in (scenarios or parts.scenarios)]
        repair = ctx.repair_source
        for group in _contiguous(chosen, parts.scenarios):
            covers_repair = repair is not None and repair[0] in group and (until or parts.days[-1]) == repair[1]
            selection = [k for k in study_selection(ctx) if covers_repair or k != ctx.key("graph_repair")]
            execute(ctx.name("study"), parts.range_tags(group, until), selection)
    return WorldRun(ctx.world, config.output_dir / ctx.world.id / "results.csv",
                    config.output_dir / ctx.world.id / "costs.csv" if whole else None, run_ids,
                    total_spend(instance, run_ids))


def execute_job(job: dg.JobDefinition, instance: dg.DagsterInstance, run_config: dict | None = None,
                **kwargs: Any) -> dg.ExecuteInProcessResult:
    """Run a job in this process; a step's own error (a locked file, a missing input, a model server that
    is down) comes out as itself, so the command can print its one line."""
    try:
        return job.execute_in_process(instance=instance, run_config={**_QUIET, **(run_config or {})},
                                      raise_on_error=True, **kwargs)
    except dg.DagsterExecutionStepExecutionError as e:
        if _interrupted(e.user_exception):
            raise KeyboardInterrupt from None  # Ctrl-C landed in a DuckDB query, which reports it as its own error
        if e.user_exception is not None:
            raise e.user_exception from None
        raise
    except dg.DagsterExecutionInterruptedError:
        # Dagster turned Ctrl-C into this at a safe point; the step in progress rolled its transaction back.
        raise KeyboardInterrupt from None


def _interrupted(error: BaseException | None) -> bool:
    """DuckDB, interrupted by Ctrl-C in a query, raises `RuntimeError: Query interrupted` (or its own
    InterruptException) rather than KeyboardInterrupt."""
    return (isinstance(error, (KeyboardInterrupt, duckdb.InterruptException))
            or (isinstance(error, RuntimeError) and str(error).strip() == "Query interrupted"))


def _contiguous(chosen: list[str], order: list[str]) -> list[list[str]]:
    """Runs of neighbours in the world's order: a multi-partition range is a rectangle."""
    groups: list[list[str]] = []
    for name in chosen:
        if groups and order.index(groups[-1][-1]) + 1 == order.index(name):
            groups[-1].append(name)
        else:
            groups.append([name])
    return groups


# ---------------------------------------------------------------------------------------------------------
# Runs that died, and the DuckDB pool.


def process_tags() -> dict[str, str]:
    """Who started the run (to free its pool slots should it die), and where its job lives: Dagster's own
    `.dagster/repository` tag, which the job pages and Overview's timeline filter on; a run started in
    process carries no code-location origin, and without the tag the UI said the job had never run."""
    return {PID_TAG: str(os.getpid()), HOST_TAG: socket.gethostname(), START_TAG: process_start(os.getpid()),
            REPOSITORY_TAG: REPOSITORY_LABEL}


def _process_gone(tags: dict[str, str]) -> bool:
    if tags.get(HOST_TAG) != socket.gethostname() or not tags.get(PID_TAG, "").isdigit():
        return False  # not ours to judge: the daemon's run monitoring looks after other hosts' runs
    pid = int(tags[PID_TAG])
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    if is_zombie(pid):
        return True
    return bool(tags.get(START_TAG)) and process_start(pid) != tags[START_TAG]


def free_dead_runs(instance: dg.DagsterInstance) -> list[str]:
    """Mark runs of this command whose process is gone as failed, and free every pool slot they held.

    Freeing a slot goes through the instance's event-log storage (`free_concurrency_slots_for_run`,
    `get_concurrency_info`): Dagster frees a dead run's slots only from its run monitoring in the daemon,
    which a headless run does not start, and has no top-level API for it. These are methods of the public
    `DagsterInstance.event_log_storage`, not `dagster._core` imports; the pinned version is tested."""
    freed = []
    for run in instance.get_runs(filters=dg.RunsFilter(statuses=_LIVE, tags={HOST_TAG: socket.gethostname()})):
        if _process_gone(dict(run.tags)):
            instance.report_run_failed(run, f"the process that ran it (pid {run.tags.get(PID_TAG)}) is gone; "
                                            "marked failed by the next headless run")
            instance.event_log_storage.free_concurrency_slots_for_run(run.run_id)
            freed.append(run.run_id)
    # Slots still claimed by runs that have finished (however they finished) hold nothing.
    if instance.event_log_storage.supports_global_concurrency_limits:
        for slot in instance.event_log_storage.get_concurrency_info(POOL).claimed_slots:
            claimant = instance.get_run_by_id(slot.run_id)
            if claimant is None or claimant.is_finished:
                instance.event_log_storage.free_concurrency_slots_for_run(slot.run_id)
                freed.append(slot.run_id)
    return freed


def prepare_instance(instance: dg.DagsterInstance, pool_wait: float, echo: Callable[[str], None]) -> None:
    """Free what dead runs hold; then wait, at most `pool_wait` seconds, for live runs holding the pool,
    looking again while waiting: a holder killed a moment ago may only now show as gone."""
    storage = instance.event_log_storage
    deadline = time.monotonic() + pool_wait
    told = False
    while True:
        for run_id in free_dead_runs(instance):
            echo(f"run {run_id[:8]} had died without finishing: marked failed, its DuckDB pool slot freed")
        if not storage.supports_global_concurrency_limits:
            return
        info = storage.get_concurrency_info(POOL)
        if info.limit is None or len(info.claimed_slots) < info.limit:
            return
        holder = instance.get_run_by_id(info.claimed_slots[0].run_id)
        who = f"run {holder.run_id[:8]} ({holder.job_name}, {holder.status.value})" if holder else "another run"
        if time.monotonic() >= deadline:
            raise HeadlessError(f"the {POOL} pool is held by {who} for more than {pool_wait:g}s: let it finish or "
                                "cancel it in the UI (Runs), then run again")
        if not told:
            echo(f"waiting up to {pool_wait:g}s for {who}, which holds the {POOL} pool")
            told = True
        time.sleep(0.5)


def total_spend(instance: dg.DagsterInstance, run_ids: list[str]) -> dict[str, int]:
    """What the runs' model-using steps reported: per-partition figures add up; a figure reported for a
    whole run (`run_` prefix) counts once per (run, asset)."""
    totals = {"model_calls": 0, "cache_hits": 0, "tokens_live": 0, "tokens_spent": 0, "model_calls_failed": 0}
    for run_id in run_ids:
        seen: set[str] = set()
        for event in instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION):
            materialization = event.asset_materialization
            if materialization is None:
                continue
            metadata = {k: v.value for k, v in materialization.metadata.items()}
            for prefix in ("", "run_"):
                if f"{prefix}model_calls" not in metadata:
                    continue
                if prefix:
                    key = materialization.asset_key.to_user_string()
                    if key in seen:
                        continue
                    seen.add(key)
                # What spend_metadata() reports: counts as int, the cache hit rate as float.
                calls = cast(int, metadata[f"{prefix}model_calls"])
                totals["model_calls"] += calls
                totals["cache_hits"] += round(calls * cast(float, metadata[f"{prefix}cache_hit_rate"]))
                totals["tokens_live"] += cast(int, metadata[f"{prefix}tokens_live"])
                totals["tokens_spent"] += cast(int, metadata[f"{prefix}tokens_spent"])
                totals["model_calls_failed"] += cast(int, metadata.get(f"{prefix}model_calls_failed", 0))
    return totals
