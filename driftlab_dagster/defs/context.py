"""What one world's assets are built from: the world, the study settings, its partitions, and the ids of
the extractor and reader that the settings name. One object per world, made by the definitions factory."""

from __future__ import annotations

from dataclasses import dataclass

import dagster as dg

from driftlab_dagster.core.session import extractor_id, reader_id
from driftlab_dagster.core.settings import StudySettings
from driftlab_dagster.core.study import stale_graph_scenario
from driftlab_dagster.core.warehouse import Slice
from driftlab_dagster.core.world import World
from driftlab_dagster.defs.partitions import StudyPartitions, study_partitions


@dataclass(frozen=True)
class StudyContext:
    world: World
    settings: StudySettings
    partitions: StudyPartitions
    extractor_id: str  # the graph assets' code version, and what every fact they write stores
    reader_id: str  # the answers' code version

    @classmethod
    def build(cls, world: World, settings: StudySettings) -> StudyContext:
        return cls(world, settings, study_partitions(world), extractor_id(settings, world),
                   reader_id(settings))

    def key(self, name: str) -> dg.AssetKey:
        """A world's assets live under its id: several worlds share one code location and one DuckDB file."""
        return dg.AssetKey([self.world.id, name])

    def name(self, what: str) -> str:
        """A name for a job, schedule, sensor or op of this world (unique across worlds)."""
        return f"{self.world.id}__{what}"

    def slice(self, partition_key: str) -> Slice:
        scenario, day = self.partitions.scenario_and_day(partition_key)
        return Slice(self.world.id, self.world.version, scenario, day)

    @property
    def repair_source(self) -> tuple[str, str] | None:
        """The partition the repair starts from: the graph nobody maintained, on the last day (None when the
        world has no such scenario)."""
        try:
            return stale_graph_scenario(self.world), self.partitions.days[-1]
        except ValueError:
            return None
