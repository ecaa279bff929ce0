"""Worlds kept apart: several worlds in one DuckDB file and one Dagster instance, each matching its own
in-memory oracle row for row, whatever ran in between; an edited world file replaces its rows instead of
mixing old rows into new tables."""

from __future__ import annotations

import dagster as dg
import duckdb
import pytest

from driftlab_dagster.core.reports import results_csv
from driftlab_dagster.core.study import run_study
from driftlab_dagster.core.world.loader import load_world
from driftlab_dagster.headless import run_study_in_dagster
from driftlab_dagster.project import DEFAULT_WORLD
from driftlab_dagster_tests.conftest import SECOND_WORLD, config_for

pytestmark = pytest.mark.dagster


def _rows(database, world_id: str) -> dict[str, list[tuple]]:
    with duckdb.connect(str(database), read_only=True) as conn:
        return {t: conn.execute(f"SELECT * EXCLUDE (world) FROM {t} WHERE world = ? ORDER BY ALL",
                                [world_id]).fetchall()
                for t in ("pages", "facts", "extraction_log", "governed_facts", "answers")}


def _oracle(path) -> str:
    return results_csv(run_study(load_world(path)).results)


def test_two_worlds_run_alternately_into_one_file_each_reproduce_their_own_rows(tmp_path):
    config = config_for(tmp_path)
    instance = dg.DagsterInstance.ephemeral()
    first, second = load_world(DEFAULT_WORLD), load_world(SECOND_WORLD)

    run_study_in_dagster(config.override(worlds=[DEFAULT_WORLD]), instance=instance)
    tessaly_rows = _rows(config.database, first.id)
    run_study_in_dagster(config.override(worlds=[SECOND_WORLD]), instance=instance)
    run_study_in_dagster(config.override(worlds=[DEFAULT_WORLD]), instance=instance)

    assert _rows(config.database, first.id) == tessaly_rows
    for world, path in ((first, DEFAULT_WORLD), (second, SECOND_WORLD)):
        assert (tmp_path / world.id / "results.csv").read_text(encoding="utf-8") == _oracle(path)
    with duckdb.connect(str(config.database), read_only=True) as conn:
        counts = dict(conn.execute("SELECT world, count(*) FROM answers GROUP BY ALL").fetchall())
    # Five designs ask every question in every scenario at every checkpoint, once.
    assert counts == {w.id: 5 * len(w.scenario_names) * len(w.checkpoints) * len(w.spec.questions)
                      for w in (first, second)}


def test_both_worlds_in_one_code_location_run_side_by_side(tmp_path):
    config = config_for(tmp_path, [DEFAULT_WORLD, SECOND_WORLD])
    runs = run_study_in_dagster(config, instance=dg.DagsterInstance.ephemeral())
    assert [r.world.id for r in runs] == ["tessaly_freight", "quillfeather_health"]
    for run, path in zip(runs, (DEFAULT_WORLD, SECOND_WORLD)):
        assert run.results_csv.read_text(encoding="utf-8") == _oracle(path)


def test_an_edited_world_replaces_its_rows_instead_of_mixing_them(tmp_path):
    config = config_for(tmp_path)
    instance = dg.DagsterInstance.ephemeral()
    run_study_in_dagster(config, instance=instance)
    # The owner change moves from day 28 to day 29, and a scenario is renamed.
    edited = tmp_path / "edited.yaml"
    edited.write_text(DEFAULT_WORLD.read_text().replace("{id: 4, day: 28,", "{id: 4, day: 29,")
                      .replace("Fresh: {", "Current: {"))
    [run] = run_study_in_dagster(config.override(worlds=[edited]), instance=instance)
    world = load_world(edited)
    assert world.id == "tessaly_freight" and world.version != load_world(DEFAULT_WORLD).version
    assert run.results_csv.read_text(encoding="utf-8") == _oracle(edited)
    with duckdb.connect(str(config.database), read_only=True) as conn:
        days = {d for (d,) in conn.execute("SELECT DISTINCT day::VARCHAR FROM answers").fetchall()}
        scenarios = {s for (s,) in conn.execute("SELECT DISTINCT scenario FROM facts").fetchall()}
        assert conn.execute("SELECT count(*) FROM answers").fetchone()[0] == 2000
        assert conn.execute("SELECT DISTINCT world_version FROM answers").fetchall() == [(world.version,)]
    assert "2026-09-29" not in days and "2026-09-30" in days
    assert "Fresh" not in scenarios and "Current" in scenarios
