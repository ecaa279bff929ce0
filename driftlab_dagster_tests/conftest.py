"""Shared fixtures: the bundled worlds and a configuration pointing into a temporary folder. Nothing here
imports Dagster: the unit tier runs without it (the finished Dagster study is in defs/conftest.py).

Hypothesis profiles: `ci` (the default, what `make test` runs) draws 1,500 examples per property; `dev`
(`make test-unit` sets HYPOTHESIS_PROFILE=dev) draws 150, so the unit tier answers in under a minute."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from driftlab_dagster.config import DriftlabConfig
from driftlab_dagster.core.settings import StudySettings
from driftlab_dagster.core.world import World
from driftlab_dagster.core.world.loader import load_world
from driftlab_dagster.project import DATA_DIR, DEFAULT_WORLD

SECOND_WORLD = DATA_DIR / "worlds" / "quillfeather_health.yaml"

for _name, _examples in (("ci", 1500), ("dev", 150)):
    settings.register_profile(_name, max_examples=_examples, deadline=None,
                              suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


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
