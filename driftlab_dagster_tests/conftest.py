"""Shared fixtures: the bundled world, and one real Dagster run of the whole study into a temporary
DuckDB file (session-scoped, because every pipeline test reads the same finished study)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest

from driftlab_dagster.core.world import World, load_world
from driftlab_dagster.project import DEFAULT_WORLD


@pytest.fixture(scope="session")
def world() -> World:
    return load_world(DEFAULT_WORLD)


@dataclass
class FinishedStudy:
    database: Path
    out: Path
    instance: dg.DagsterInstance


@pytest.fixture(scope="session")
def dagster_study(tmp_path_factory: pytest.TempPathFactory) -> FinishedStudy:
    from driftlab_dagster.headless import run_study_in_dagster

    out = tmp_path_factory.mktemp("study")
    instance = dg.DagsterInstance.ephemeral()
    run_study_in_dagster(out / "driftlab.duckdb", out, instance=instance)
    return FinishedStudy(out / "driftlab.duckdb", out, instance)
