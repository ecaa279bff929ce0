"""The Dagster tier's shared fixture: one real Dagster run of the whole study into a temporary DuckDB file
(session-scoped, because many pipeline tests read the same finished study)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest

from driftlab_dagster.config import DriftlabConfig
from driftlab_dagster.core.world.loader import load_world
from driftlab_dagster_tests.conftest import config_for


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

