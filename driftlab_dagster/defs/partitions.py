"""A world's one partitions definition: drift scenario x checkpoint day, both read from its world file.

Built once per world by the definitions factory and handed to every asset, job and schedule of that world.
Key strings join the dimensions in alphabetical order of their names ("2026-09-08|Fresh"); read a key's
parts with `scenario_and_day`, never by splitting the string.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import dagster as dg

from driftlab_dagster.core.world import World

# Ranged runs (a backfill with a single-run policy, `make run`, the nightly run) carry these two tags;
# a multi-partition range is the rectangle between its two corners.
RANGE_START_TAG = "dagster/asset_partition_range_start"
RANGE_END_TAG = "dagster/asset_partition_range_end"


@dataclass(frozen=True)
class StudyPartitions:
    scenarios: list[str]
    days: list[str]
    scenario_day: dg.MultiPartitionsDefinition
    event_day: dg.StaticPartitionsDefinition  # the days on which something happened
    # A graph on day d has read its scenario's page history up to d: pages[s, u] feeds graph[s, d], u <= d.
    page_history: dg.PartitionMapping = field(repr=False)

    @property
    def event_days(self) -> list[str]:
        return self.days[1:]

    def key(self, scenario: str, day: str) -> dg.MultiPartitionKey:
        return dg.MultiPartitionKey({"scenario": scenario, "day": day})

    def scenario_and_day(self, partition_key: str) -> tuple[str, str]:
        # Runs launched with only a "dagster/partition" tag hand over a plain str: always parse.
        parts = self.scenario_day.get_partition_key_from_str(str(partition_key)).keys_by_dimension
        return parts["scenario"], parts["day"]

    def by_scenario(self, partition_keys: list[str]) -> dict[str, list[tuple[str, str]]]:
        """The run's keys grouped by scenario, in the world's order: scenario -> [(day, key)] by day."""
        grouped: dict[str, list[tuple[str, str]]] = {}
        for key in partition_keys:
            scenario, day = self.scenario_and_day(key)
            grouped.setdefault(scenario, []).append((day, str(key)))
        return {s: sorted(grouped[s], key=lambda d: self.days.index(d[0])) for s in self.scenarios if s in grouped}

    def run_keys(self, context: dg.AssetExecutionContext) -> list[str]:
        """The partitions this run writes, or a clear failure before anything is written when Dagster would
        write fewer than the run was launched for: a backfill from a job's page (a job backfill) of
        multi-dimension partitions under a single-run policy gets the range's tags *and* its first key's
        dimension tags, and Dagster 1.13 then runs that first key alone, reporting success."""
        tags = context.run.tags
        start, end = tags.get(RANGE_START_TAG), tags.get(RANGE_END_TAG)
        keys = list(context.partition_keys)
        if start and end and start != end and len(keys) == 1:
            raise dg.Failure(
                f"this run was launched for the partitions {start} to {end} but Dagster would write only {keys[0]} "
                "(a backfill launched from a job's page carries the range and its first partition's own tags). "
                "Nothing was written. Launch the backfill from the Catalog instead (select the assets, "
                "Materialize…, pick the partitions), or run `driftlab run --scenario NAME`.")
        return keys

    def range_tags(self, scenarios: list[str] | None = None, until: str | None = None) -> dict[str, str]:
        """Tags of one run over the rectangle of `scenarios` (contiguous in the world's order) and the days
        from the first checkpoint through `until`."""
        scenarios = scenarios or self.scenarios
        last = self.days.index(until) if until else len(self.days) - 1
        return {RANGE_START_TAG: str(self.key(scenarios[0], self.days[0])),
                RANGE_END_TAG: str(self.key(scenarios[-1], self.days[last]))}

    def event_range_tags(self) -> dict[str, str]:
        return {RANGE_START_TAG: self.event_days[0], RANGE_END_TAG: self.event_days[-1]}


def study_partitions(world: World) -> StudyPartitions:
    scenarios, days = world.scenario_names, world.day_keys
    scenario_day = dg.MultiPartitionsDefinition({
        "scenario": dg.StaticPartitionsDefinition(scenarios),
        "day": dg.StaticPartitionsDefinition(days),
    })
    # MultiPartitionMapping is beta in 1.13 and says so on every use; we depend on it knowingly.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.BetaWarning)
        page_history = dg.MultiPartitionMapping({
            "scenario": dg.DimensionPartitionMapping("scenario", dg.IdentityPartitionMapping()),
            "day": dg.DimensionPartitionMapping(
                "day", dg.StaticPartitionMapping({u: [d for d in days if d >= u] for u in days})),
        })
    return StudyPartitions(scenarios, days, scenario_day, dg.StaticPartitionsDefinition(days[1:]), page_history)
