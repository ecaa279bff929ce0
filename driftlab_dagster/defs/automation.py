"""A world's jobs, its nightly full run, and the reports following their inputs.

The study job is one run over a rectangle of (scenario, day) partitions: world, pages, graphs, answers, the
repair and the accuracy report, in the asset graph's order, so a graph never starts before the page history
it declares. The maintenance job compares the ways of absorbing each event. Schedules, sensors and queued
runs need the daemon: `dagster dev` (make dev) starts it; a headless deployment runs `dagster-daemon run`
beside the webserver.
"""

from __future__ import annotations

from typing import Any, TypedDict

import dagster as dg

from driftlab_dagster.defs.context import StudyContext

STUDY_ASSETS = ["world", "pages", "extraction_log", "fact_graph", "governed_graph", "answers"]


def study_selection(ctx: StudyContext, with_reports: bool = True) -> list[dg.AssetKey]:
    names = (STUDY_ASSETS + (["graph_repair"] if ctx.repair_source else [])
             + (["accuracy_report"] if with_reports else []))
    return [ctx.key(n) for n in names]


MODEL_TAG = "driftlab/model"


class Automation(TypedDict):
    """A world's jobs, schedules and sensor, as keyword arguments of dg.Definitions."""

    jobs: list[Any]  # what define_asset_job returns: Dagster exports no name for its type outside dagster._core
    schedules: list[dg.ScheduleDefinition]
    sensors: list[dg.SensorDefinition]


def build(ctx: StudyContext, nightly_cron: str) -> Automation:
    parts = ctx.partitions
    # Runs that call a model say so, so a deployment can cap them at the model server's slots
    # (tag_concurrency_limits in deploy/dagster.yaml).
    model_tags = {MODEL_TAG: ctx.settings.model} if ctx.settings.uses_model else {}
    study = dg.define_asset_job(
        ctx.name("study"), selection=dg.AssetSelection.assets(*study_selection(ctx)),
        partitions_def=parts.scenario_day, tags=model_tags,
        description="The study over (scenario, day) partitions: pages, graphs with their checks, answers, the "
                    "repair of the unmaintained graph, and the accuracy report.",
    )
    maintenance = dg.define_asset_job(
        ctx.name("maintenance"),
        selection=dg.AssetSelection.assets(ctx.key("maintenance_costs"), ctx.key("cost_report")),
        partitions_def=parts.event_day, tags=model_tags,
        description="Per event: the cost of patching the changed pages, patching from the record, and rebuilding.",
    )
    jobs = [study, maintenance]
    if ctx.repair_source:
        jobs.append(dg.define_asset_job(
            ctx.name("repair_graph"),
            selection=dg.AssetSelection.assets(ctx.key("graph_repair"), ctx.key("cost_report")),
            config={"ops": {f"{ctx.world.id}__graph_repair": {"config": {"approach": "patch"}}}}, tags=model_tags,
            description="Repair the graph that missed every event by patching the pages changed since its last "
                        "extraction (set approach: full to rebuild instead); both ways are costed.",
        ))

    @dg.schedule(name=ctx.name("nightly_study"), job=study, cron_schedule=nightly_cron, execution_timezone="UTC",
                 default_status=dg.DefaultScheduleStatus.RUNNING)
    def nightly_study(context: dg.ScheduleEvaluationContext):
        """The whole study every night, as one run over every (scenario, day) partition. The run key names the
        night, so a re-tick of the same night launches nothing twice."""
        yield dg.RunRequest(run_key=_night(context), tags=parts.range_tags())

    @dg.schedule(name=ctx.name("nightly_maintenance"), job=maintenance, cron_schedule=nightly_cron,
                 execution_timezone="UTC", default_status=dg.DefaultScheduleStatus.RUNNING)
    def nightly_maintenance(context: dg.ScheduleEvaluationContext):
        """Every event day's maintenance comparison, as one run, keyed by night."""
        yield dg.RunRequest(run_key=_night(context), tags=parts.event_range_tags())

    # The reports (and nothing else) refresh themselves once their inputs were updated, whatever updated them.
    follow = dg.AutomationConditionSensorDefinition(
        ctx.name("reports_follow_inputs"),
        target=dg.AssetSelection.assets(ctx.key("accuracy_report"), ctx.key("cost_report")),
        default_status=dg.DefaultSensorStatus.RUNNING, minimum_interval_seconds=30,
    )
    return {"jobs": jobs, "schedules": [nightly_study, nightly_maintenance], "sensors": [follow]}


def _night(context: dg.ScheduleEvaluationContext) -> str:
    return context.scheduled_execution_time.strftime("%Y-%m-%d")
