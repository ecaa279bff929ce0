"""What one world's assets are built from: the world, the study settings, its partitions, and the ids of
the extractor and reader that the settings name. One object per world, made by the definitions factory."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import dagster as dg

from driftlab_dagster.core.session import extractor_id, graph_reader_id, reader_id
from driftlab_dagster.core.settings import StudySettings
from driftlab_dagster.core.study import stale_graph_scenario
from driftlab_dagster.core.warehouse import Slice
from driftlab_dagster.core.world import World
from driftlab_dagster.defs.partitions import StudyPartitions, study_partitions

# The pages' code version. A page partition's rows are a pure function of the world file and of how the core
# renders pages: bump this when the rendering changes, and every page partition shows a new code version.
PAGES_CODE_VERSION = "1"


def _digest(*parts: str) -> dg.DataVersion:
    return dg.DataVersion(hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16])


@dataclass(frozen=True)
class StudyContext:
    world: World
    settings: StudySettings
    partitions: StudyPartitions
    extractor_id: str  # the graph assets' code version, and what every fact they write stores
    reader_id: str  # the answers' code version
    graph_reader_id: str  # the reader of the maintenance assets' graph-only accuracy (their code version's)

    @classmethod
    def build(cls, world: World, settings: StudySettings) -> StudyContext:
        return cls(world, settings, study_partitions(world), extractor_id(settings, world),
                   reader_id(settings, world), graph_reader_id(settings))

    def key(self, name: str) -> dg.AssetKey:
        """A world's assets live under its id: several worlds share one code location and one DuckDB file."""
        return dg.AssetKey([self.world.id, name])

    def name(self, what: str) -> str:
        """A name for a job, schedule, sensor or op of this world (unique across worlds)."""
        return f"{self.world.id}__{what}"

    # Data versions. Every partition's rows are a pure function of the world file and of the code that writes
    # them (the study is deterministic, and model replies come from the call cache), so the version of those
    # inputs is the version of the rows: a run that rewrites identical rows gives every partition the version
    # it had, and nothing downstream turns stale; a new world file, a new extractor or a new reader gives a
    # new one, and what reads it turns stale. Dagster's own version for a run over many partitions would hash
    # the versions of every upstream partition in the run's range, so the same rows written by a backfill of
    # one scenario and by `make run` would differ (and a batched step has one version for all its partitions).
    @property
    def pages_version(self) -> dg.DataVersion:
        return _digest("pages", PAGES_CODE_VERSION, self.world.version)

    @property
    def graph_version(self) -> dg.DataVersion:
        return _digest("graph", self.pages_version.value, self.extractor_id)

    @property
    def answers_version(self) -> dg.DataVersion:
        return _digest("answers", self.graph_version.value, self.reader_id)

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
