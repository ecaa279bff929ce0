"""The whole study as Dagster runs, without the UI: what `make run` and the acceptance test call.

Two in-process runs, each over every partition of its partitions definition at once: the world and the
maintenance comparison over every event day; then pages, graph and answers over every (scenario, day),
with the repair and the two reports. The assets are the same ones `dagster dev` shows.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import dagster as dg


@dataclass(frozen=True)
class HeadlessRun:
    database: Path
    results_csv: Path
    costs_csv: Path
    run_ids: list[str]


# The console logger prints every Dagster event at DEBUG; headless users want the tables, not the events.
# Failures surface as one line from the CLI, so the console logger stays silent.
_QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


def _range_tags(keys: list[str]) -> dict[str, str]:
    return {"dagster/asset_partition_range_start": keys[0], "dagster/asset_partition_range_end": keys[-1]}


def run_study_in_dagster(database: Path, output_dir: Path, world: Path | None = None,
                         instance: dg.DagsterInstance | None = None, lock_timeout_seconds: float = 10.0) -> HeadlessRun:
    if world is not None:
        os.environ["DRIFTLAB_WORLD"] = str(world)  # the partitions are read from it when definitions load
    # Imported here so DRIFTLAB_WORLD is set before the partitions are built.
    from driftlab_dagster.definitions import defs
    from driftlab_dagster.defs.partitions import event_day_partitions, scenario_day_partitions
    from driftlab_dagster.defs.resources import default_resources

    definitions = defs()
    assets = list(definitions.assets or [])
    resources = default_resources(database=str(database), world=str(world) if world else None,
                                  output_dir=str(output_dir), lock_timeout_seconds=lock_timeout_seconds)
    # With DAGSTER_HOME set (make run sets it), the runs land in the instance `dagster dev` shows.
    instance = instance or (dg.DagsterInstance.get() if os.environ.get("DAGSTER_HOME") else dg.DagsterInstance.ephemeral())
    # Two runs, one per partitions definition; unpartitioned assets ride along with the run after their inputs.
    plan = [
        (["world", "maintenance_costs"], _range_tags(event_day_partitions.get_partition_keys())),
        (["pages", "extraction_log", "fact_graph", "answers", "graph_repair", "accuracy_report", "cost_report"],
         _range_tags(scenario_day_partitions.get_partition_keys())),
    ]
    run_ids = []
    for selection, tags in plan:
        # In process, a failing asset's own exception propagates (a WarehouseError stays one line).
        result = dg.materialize(assets, selection=selection, resources=resources, instance=instance, tags=tags,
                                run_config=_QUIET, raise_on_error=True)
        run_ids.append(result.run_id)
    return HeadlessRun(database, output_dir / "results.csv", output_dir / "costs.csv", run_ids)
