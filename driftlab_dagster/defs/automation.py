"""The nightly full run, the repair job, and the reports following their inputs.

Schedules and queued runs need the daemon: `dagster dev` (make dev) starts it; a headless deployment runs
`dagster-daemon run` beside the webserver.
"""

import os

import dagster as dg

from driftlab_dagster.defs.partitions import event_day_partitions, scenario_day_partitions

# 02:00 UTC by default; set DRIFTLAB_NIGHTLY_CRON (a cron string) to move it.
NIGHTLY_CRON = os.environ.get("DRIFTLAB_NIGHTLY_CRON", "0 2 * * *")

_GRAPH_STAGE = dg.AssetSelection.assets("pages", "extraction_log", "fact_graph", "governed_graph", "answers")

study_partitions_job = dg.define_asset_job(
    "study_partitions", selection=_GRAPH_STAGE, partitions_def=scenario_day_partitions,
    description="Pages, graph, checks and answers of (scenario, day) partitions.",
)
maintenance_job = dg.define_asset_job(
    "maintenance_comparison", selection=dg.AssetSelection.assets("maintenance_costs"),
    partitions_def=event_day_partitions,
    description="The per-event comparison of patching pages, patching from the record, and rebuilding.",
)
repair_graph_job = dg.define_asset_job(
    "repair_graph", selection=dg.AssetSelection.assets("fact_graph", "extraction_log", "governed_graph"),
    partitions_def=scenario_day_partitions,
    config={"ops": {"fact_graph": {"config": {"repair": "patch"}}}},
    description="Repair a stale graph partition: re-read the pages changed since the last extraction "
                "(set repair: full in the launchpad to rebuild). The cost lands in the materialisation.",
)


def _night(context: dg.ScheduleEvaluationContext) -> str:
    return context.scheduled_execution_time.strftime("%Y-%m-%d")


@dg.schedule(job=study_partitions_job, cron_schedule=NIGHTLY_CRON, execution_timezone="UTC",
             default_status=dg.DefaultScheduleStatus.RUNNING)
def nightly_study(context: dg.ScheduleEvaluationContext):
    """Every (scenario, day) partition, one run each; the run key makes a re-tick of the same night a no-op."""
    for key in scenario_day_partitions.get_partition_keys():
        yield dg.RunRequest(partition_key=key, run_key=f"{_night(context)}|{key}")


@dg.schedule(job=maintenance_job, cron_schedule=NIGHTLY_CRON, execution_timezone="UTC",
             default_status=dg.DefaultScheduleStatus.RUNNING)
def nightly_maintenance(context: dg.ScheduleEvaluationContext):
    """Every event day's maintenance comparison, one run each, keyed by night."""
    for key in event_day_partitions.get_partition_keys():
        yield dg.RunRequest(partition_key=key, run_key=f"{_night(context)}|{key}")


# The repair and the reports refresh themselves once their inputs have been updated (the nightly runs above,
# or a backfill in the UI).
reports_follow_inputs = dg.AutomationConditionSensorDefinition(
    "reports_follow_inputs", target=dg.AssetSelection.assets("graph_repair", "accuracy_report", "cost_report"),
    default_status=dg.DefaultSensorStatus.RUNNING, minimum_interval_seconds=30,
)
