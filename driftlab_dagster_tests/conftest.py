"""Shared fixtures: the bundled worlds, a configuration pointing into a temporary folder, and one real
Dagster run of the whole study into a temporary DuckDB file (session-scoped, because many pipeline tests
read the same finished study)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest

from driftlab_dagster.config import DriftlabConfig, StudySettings
from driftlab_dagster.core.world import World
from driftlab_dagster.core.world.loader import load_world
from driftlab_dagster.project import DATA_DIR, DEFAULT_WORLD

SECOND_WORLD = DATA_DIR / "worlds" / "quillfeather_health.yaml"


def config_for(folder: Path, worlds: list[Path] | None = None, **study) -> DriftlabConfig:
    """The settings a test runs with: its own DuckDB file and report folder, the given worlds."""
    return DriftlabConfig(worlds=worlds or [DEFAULT_WORLD], database=folder / "driftlab.duckdb", output_dir=folder,
                          study=StudySettings(**study))


@pytest.fixture(scope="session", autouse=True)
def _own_world_cache(tmp_path_factory: pytest.TempPathFactory):
    """Large parsed worlds are cached on disk (world_cache.py): the tests' go to a folder of their own, never
    the user's ~/.cache, and the commands the tests start inherit it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DRIFTLAB_WORLD_CACHE", str(tmp_path_factory.mktemp("world_cache")))
        yield


@pytest.fixture(scope="session")
def world() -> World:
    return load_world(DEFAULT_WORLD)


@dataclass
class FinishedStudy:
    config: DriftlabConfig
    instance: dg.DagsterInstance
    run_ids: list[str]

    @property
    def database(self) -> Path:
        return self.config.database

    @property
    def out(self) -> Path:
        """Where the study's reports are (the default world's folder)."""
        return self.config.output_dir / load_world(self.config.worlds[0]).id


@pytest.fixture(scope="session")
def dagster_study(tmp_path_factory: pytest.TempPathFactory) -> FinishedStudy:
    from driftlab_dagster.headless import run_study_in_dagster

    config = config_for(tmp_path_factory.mktemp("study"))
    instance = dg.DagsterInstance.ephemeral()
    [run] = run_study_in_dagster(config, instance=instance)
    return FinishedStudy(config, instance, run.run_ids)
