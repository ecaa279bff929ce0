"""The DuckDB file: idempotent partition writes, rollback on failure, and one-line errors for a missing
directory or a file another process holds."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from driftlab_dagster.core.warehouse import WarehouseError, connect, ensure_schema, replace_slice, transaction


def _entities(rows):
    return pd.DataFrame([{"scenario": s, "day": d, "entity_id": i, "name": n} for s, d, i, n in rows])


def _dump(conn) -> list[tuple]:
    return conn.execute("SELECT * FROM entities ORDER BY ALL").fetchall()


def test_replacing_a_slice_twice_gives_the_same_rows_and_leaves_other_slices(tmp_path: Path):
    conn = connect(str(tmp_path / "w.duckdb"))
    ensure_schema(conn)
    for _ in range(2):
        for scenario in ("Fresh", "StaleGraph"):
            with transaction(conn):
                replace_slice(conn, "entities", {"scenario": scenario, "day": "2026-09-01"},
                              _entities([(scenario, "2026-09-01", 1, "Pro"), (scenario, "2026-09-01", 2, "Helix")]))
    assert len(_dump(conn)) == 4
    with transaction(conn):
        replace_slice(conn, "entities", {"scenario": "Fresh", "day": "2026-09-01"},
                      _entities([("Fresh", "2026-09-01", 1, "Starter")]))
    assert sorted(r[3] for r in _dump(conn)) == ["Helix", "Pro", "Starter"]


def test_a_failed_write_rolls_back_and_keeps_the_partitions_previous_rows(tmp_path: Path):
    conn = connect(str(tmp_path / "w.duckdb"))
    ensure_schema(conn)
    with transaction(conn):
        replace_slice(conn, "entities", {"scenario": "Fresh", "day": "2026-09-01"},
                      _entities([("Fresh", "2026-09-01", 1, "Pro")]))
    before = _dump(conn)
    bad = _entities([("Fresh", "2026-09-01", 1, None)])  # name is NOT NULL
    with pytest.raises(Exception):
        with transaction(conn):
            replace_slice(conn, "entities", {"scenario": "Fresh", "day": "2026-09-01"}, bad)
    assert _dump(conn) == before


def test_columns_are_inserted_by_name_not_position(tmp_path: Path):
    conn = connect(str(tmp_path / "w.duckdb"))
    ensure_schema(conn)
    shuffled = _entities([("Fresh", "2026-09-01", 7, "Orion")])[["name", "entity_id", "day", "scenario"]]
    with transaction(conn):
        replace_slice(conn, "entities", {"scenario": "Fresh", "day": "2026-09-01"}, shuffled)
    assert conn.execute("SELECT entity_id, name FROM entities").fetchall() == [(7, "Orion")]


def test_a_missing_directory_is_one_clear_line(tmp_path: Path):
    with pytest.raises(WarehouseError) as info:
        connect(str(tmp_path / "nowhere" / "w.duckdb"))
    assert "does not exist" in str(info.value) and "mkdir -p" in str(info.value)
    assert "\n" not in str(info.value)
    assert not (tmp_path / "nowhere").exists()


@pytest.fixture
def locked_database(tmp_path: Path):
    """A DuckDB file held open by another process, as a DuckDB shell or a notebook would hold it."""
    path = tmp_path / "locked.duckdb"
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import duckdb, sys, time
            conn = duckdb.connect({str(path)!r})
            conn.execute("CREATE TABLE held(x INTEGER)")
            print("ready", flush=True)
            sys.stdin.read()
        """)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    assert holder.stdout.readline().strip() == "ready"
    yield path
    holder.stdin.close()
    holder.wait(timeout=30)


def test_a_locked_file_fails_within_the_timeout_with_one_clear_line(locked_database: Path):
    started = time.monotonic()
    with pytest.raises(WarehouseError) as info:
        connect(str(locked_database), lock_timeout_seconds=0.5)
    assert time.monotonic() - started < 10
    message = str(info.value)
    assert "locked by another process" in message and "PID" in message and "\n" not in message


def test_a_file_from_another_version_is_refused_in_one_line_and_kept(tmp_path: Path):
    path = tmp_path / "old.duckdb"
    old = connect(str(path))
    old.execute("CREATE TABLE answers(scenario VARCHAR, design VARCHAR)")
    old.execute("INSERT INTO answers VALUES ('Fresh', 'Rag')")
    old.close()
    conn = connect(str(path))
    with pytest.raises(WarehouseError, match="written by another version of DriftLab") as info:
        ensure_schema(conn)
    assert "\n" not in str(info.value)
    assert conn.execute("SELECT * FROM answers").fetchall() == [("Fresh", "Rag")]
