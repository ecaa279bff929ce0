"""Partitions' rows written from a worker's own DuckDB file: the step's slices are replaced by what the file
holds, every other slice is left, and a failure inside the step's transaction leaves the study's file as it
was."""

from __future__ import annotations

from pathlib import Path

import pytest

from driftlab_dagster.core.slice_batch import SliceBatch, copy_slices, worker_file
from driftlab_dagster.core.warehouse import Slice, connect, ensure_schema, transaction

COLUMNS = ("entity_id", "name")
FRESH, STALE = Slice("w1", "v1", "Fresh", "2026-09-01"), Slice("w1", "v1", "StaleGraph", "2026-09-01")


def _entities(conn) -> list[tuple]:
    return conn.execute("SELECT scenario, entity_id, name FROM entities ORDER BY ALL").fetchall()


@pytest.fixture
def study(tmp_path: Path):
    conn = connect(str(tmp_path / "study.duckdb"))
    ensure_schema(conn)
    with transaction(conn):
        batch = SliceBatch(conn, ["entities"])
        batch.add(FRESH, {"entities": (COLUMNS, [(1, "old name"), (2, "gone")])})
        batch.add(STALE, {"entities": (COLUMNS, [(1, "untouched")])})
        batch.flush()
    yield conn
    conn.close()


def test_a_worker_file_replaces_its_slices_and_leaves_the_others(study, tmp_path: Path):
    path = str(tmp_path / "worker.duckdb")
    with worker_file(path, ["entities", "facts"]) as own:
        own.add(FRESH, {"entities": (COLUMNS, [(1, "new name")])})
    with transaction(study):
        copy_slices(study, path, ["entities", "facts"], [FRESH])
    assert _entities(study) == [("Fresh", 1, "new name"), ("StaleGraph", 1, "untouched")]


def test_copying_a_slice_the_worker_left_empty_empties_it(study, tmp_path: Path):
    path = str(tmp_path / "worker.duckdb")
    with worker_file(path, ["entities"]) as own:
        own.add(FRESH, {})
    with transaction(study):
        copy_slices(study, path, ["entities"], [FRESH])
    assert _entities(study) == [("StaleGraph", 1, "untouched")]


def test_a_failure_after_the_copy_leaves_the_study_as_it_was(study, tmp_path: Path):
    path = str(tmp_path / "worker.duckdb")
    with worker_file(path, ["entities"]) as own:
        own.add(FRESH, {"entities": (COLUMNS, [(1, "new name")])})
    before = _entities(study)
    with pytest.raises(RuntimeError), transaction(study):
        copy_slices(study, path, ["entities"], [FRESH])
        raise RuntimeError("the step failed after copying")
    assert _entities(study) == before


def test_a_worker_file_must_be_new(tmp_path: Path):
    path = tmp_path / "worker.duckdb"
    with worker_file(str(path), ["entities"]) as own:
        own.add(FRESH, {"entities": (COLUMNS, [(1, "once")])})
    with pytest.raises(FileExistsError, match="must be new"), worker_file(str(path), ["entities"]):
        pass
