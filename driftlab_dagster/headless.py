"""The whole study as Dagster runs, without the UI: what `make run` and the acceptance test call.

A full run is two in-process runs, each over every partition of its partitions definition at once: the
world and the maintenance comparison over every event day; then pages, graph and answers over every
(scenario, day), with the repair and the two reports. A slice (some scenarios, some days) runs one
partition at a time and skips the comparison and the repair. The assets are the ones `dagster dev` shows.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import dagster as dg

from driftlab_dagster.core.session import StudyConfig

# Failures surface as one line from the CLI, so the console logger stays silent.
_QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


@dataclass(frozen=True)
class HeadlessRun:
    database: Path
    results_csv: Path
    costs_csv: Path
    run_ids: list[str]
    spend: dict[str, int]  # model calls made, served from the cache, and tokens live versus spent


def _spend(instance: dg.DagsterInstance, run_ids: list[str]) -> dict[str, int]:
    """Adds up what the model-using steps of these runs reported in their metadata. A step over many
    partitions puts the same totals on each partition's materialisation, so each (run, asset) counts once."""
    totals = {"model_calls": 0, "cache_hits": 0, "tokens_live": 0, "tokens_spent": 0}
    for run_id in run_ids:
        seen: set[str] = set()
        for event in instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION):
            materialization = event.asset_materialization
            if materialization is None or "model_calls" not in materialization.metadata:
                continue
            if materialization.asset_key.to_user_string() in seen:
                continue
            seen.add(materialization.asset_key.to_user_string())
            metadata = materialization.metadata
            totals["model_calls"] += metadata["model_calls"].value
            totals["cache_hits"] += round(metadata["model_calls"].value * metadata["cache_hit_rate"].value)
            totals["tokens_spent"] += metadata["tokens_spent"].value
            totals["tokens_live"] += metadata["tokens_live"].value
    return totals


def _range_tags(keys: list[str]) -> dict[str, str]:
    return {"dagster/asset_partition_range_start": keys[0], "dagster/asset_partition_range_end": keys[-1]}


def run_study_in_dagster(database: Path, output_dir: Path, world: Path | None = None,
                         instance: dg.DagsterInstance | None = None, lock_timeout_seconds: float = 10.0,
                         config: StudyConfig | None = None, scenarios: list[str] | None = None,
                         days: list[str] | None = None, progress: bool = False) -> HeadlessRun:
    if world is not None:
        os.environ["DRIFTLAB_WORLD"] = str(world)  # the partitions are read from it when definitions load
    # Imported here so DRIFTLAB_WORLD is set before the partitions are built.
    from driftlab_dagster.definitions import defs
    from driftlab_dagster.defs.partitions import DAYS, SCENARIOS, event_day_partitions, scenario_day_partitions
    from driftlab_dagster.defs.resources import StudyResource, default_resources

    config = config or StudyConfig()
    study = StudyResource(**{k: getattr(config, k) for k in StudyConfig.__dataclass_fields__}, progress=progress)
    definitions = defs()
    assets = list(definitions.assets or [])
    checks_defs = list(definitions.asset_checks or [])
    resources = default_resources(database=str(database), world=str(world) if world else None,
                                  output_dir=str(output_dir), lock_timeout_seconds=lock_timeout_seconds, study=study)
    # With DAGSTER_HOME set (make run sets it), the runs land in the instance `dagster dev` shows.
    instance = instance or (dg.DagsterInstance.get() if os.environ.get("DAGSTER_HOME") else dg.DagsterInstance.ephemeral())

    def materialize(selection: list[str], checks: bool = False, **kwargs: object) -> str:
        # Partitioned checks report per partition only in single-partition runs, so ranged runs leave them out.
        chosen = dg.AssetSelection.assets(*selection)
        # In process, a failing asset's own exception propagates (a WarehouseError stays one line).
        return dg.materialize(assets + checks_defs, selection=chosen if checks else chosen.without_checks(),
                              resources=resources, instance=instance, run_config=_QUIET, raise_on_error=True,
                              **kwargs).run_id  # type: ignore[arg-type]

    partitioned = ["pages", "extraction_log", "fact_graph", "governed_graph", "answers"]
    run_ids: list[str]
    if scenarios is None and days is None:
        run_ids = [
            materialize(["world", "maintenance_costs"], tags=_range_tags(event_day_partitions.get_partition_keys())),
            materialize(partitioned + ["graph_repair", "accuracy_report", "cost_report"],
                        tags=_range_tags(scenario_day_partitions.get_partition_keys())),
        ]
    else:
        unknown = sorted(set(scenarios or []) - set(SCENARIOS)) + sorted(set(days or []) - set(DAYS))
        if unknown:
            raise ValueError(f"not in this world: {', '.join(unknown)} (scenarios {SCENARIOS}, days {DAYS})")
        run_ids = [materialize(["world"])]
        # A graph on day d reads the pages of every earlier day: materialise those pages too.
        last = max(DAYS.index(d) for d in (days or DAYS))
        for scenario in scenarios or SCENARIOS:
            for day in DAYS[: last + 1]:
                key = dg.MultiPartitionKey({"scenario": scenario, "day": day})
                run_ids.append(materialize(partitioned if day in (days or DAYS) else ["pages"], checks=True,
                                           partition_key=key))
        run_ids.append(materialize(["accuracy_report"]))
    return HeadlessRun(database, output_dir / "results.csv", output_dir / "costs.csv", run_ids,
                       _spend(instance, run_ids) if config.uses_model else {})
