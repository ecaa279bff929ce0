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

from driftlab_dagster.core.warehouse import (
    MissingUpstream,
    Slice,
    WarehouseError,
    connect,
    ensure_schema,
    prune_world,
    replace_slice,
    stored_pages,
    transaction,
)


def _entities(rows, world="w1", version="v1"):
    return pd.DataFrame([{"world": world, "world_version": version, "scenario": s, "day": d, "entity_id": i, "name": n}
                         for s, d, i, n in rows])


def _key(scenario, day="2026-09-01", world="w1"):
    return {"world": world, "scenario": scenario, "day": day}


def _dump(conn) -> list[tuple]:
    return conn.execute("SELECT * FROM entities ORDER BY ALL").fetchall()


def test_replacing_a_slice_twice_gives_the_same_rows_and_leaves_other_slices(tmp_path: Path):
    conn = connect(str(tmp_path / "w.duckdb"))
    ensure_schema(conn)
    for _ in range(2):
        for scenario in ("Fresh", "StaleGraph"):
            with transaction(conn):
                replace_slice(conn, "entities", _key(scenario),
                              _entities([(scenario, "2026-09-01", 1, "Pro"), (scenario, "2026-09-01", 2, "Helix")]))
    assert len(_dump(conn)) == 4
    with transaction(conn):
        replace_slice(conn, "entities", _key("Fresh"), _entities([("Fresh", "2026-09-01", 1, "Starter")]))
    assert sorted(r[-1] for r in _dump(conn)) == ["Helix", "Pro", "Starter"]


def test_two_worlds_with_the_same_partition_keys_live_side_by_side(tmp_path: Path):
    conn = connect(str(tmp_path / "w.duckdb"))
    ensure_schema(conn)
    for world, name in (("w1", "Pro"), ("w2", "Grove")):
        with transaction(conn):
            replace_slice(conn, "entities", _key("Fresh", world=world),
                          _entities([("Fresh", "2026-09-01", 1, name)], world=world))
    with transaction(conn):  # rewriting one world's slice leaves the other world's slice alone
        replace_slice(conn, "entities", _key("Fresh", world="w1"), _entities([("Fresh", "2026-09-01", 1, "Max")]))
    assert conn.execute("SELECT world, name FROM entities ORDER BY ALL").fetchall() == [("w1", "Max"), ("w2", "Grove")]


def test_pruning_drops_only_the_partitions_a_world_no_longer_has(tmp_path: Path):
    conn = connect(str(tmp_path / "w.duckdb"))
    ensure_schema(conn)
    for world, day in (("w1", "2026-09-01"), ("w1", "2026-09-29"), ("w2", "2026-09-29")):
        with transaction(conn):
            replace_slice(conn, "entities", _key("Fresh", day, world), _entities([("Fresh", day, 1, "X")], world=world))
    with transaction(conn):
        deleted = prune_world(conn, "w1", [("Fresh", "2026-09-01"), ("Fresh", "2026-09-30")], ["2026-09-30"])
    assert deleted == 1
    assert conn.execute("SELECT world, day::VARCHAR FROM entities ORDER BY ALL").fetchall() == [
        ("w1", "2026-09-01"), ("w2", "2026-09-29")]


def test_rows_of_another_version_of_the_world_file_are_refused_by_name(tmp_path: Path):
    conn = connect(str(tmp_path / "w.duckdb"))
    ensure_schema(conn)
    page = {"world": "w1", "world_version": "old", "scenario": "Fresh", "day": "2026-09-01", "step": 0,
            "page_id": "d01", "title": "t", "body": "b", "version": 1, "updated_at": "2026-08-31 09:00:00",
            "changed": True, "audience": "public", "renamed_from": None}
    with transaction(conn):
        replace_slice(conn, "pages", _key("Fresh"), pd.DataFrame([page]))
    assert stored_pages(conn, Slice("w1", "old", "Fresh", "2026-09-01"))[0]["id"] == "d01"
    with pytest.raises(MissingUpstream, match="another version of the world file"):
        stored_pages(conn, Slice("w1", "new", "Fresh", "2026-09-01"))
    with pytest.raises(MissingUpstream, match="no pages for StaleGraph"):
        stored_pages(conn, Slice("w1", "old", "StaleGraph", "2026-09-01"))


def test_a_failed_write_rolls_back_and_keeps_the_partitions_previous_rows(tmp_path: Path):
    conn = connect(str(tmp_path / "w.duckdb"))
    ensure_schema(conn)
    with transaction(conn):
        replace_slice(conn, "entities", _key("Fresh"), _entities([("Fresh", "2026-09-01", 1, "Pro")]))
    before = _dump(conn)
    bad = _entities([("Fresh", "2026-09-01", 1, None)])  # name is NOT NULL
    with pytest.raises(Exception):
        with transaction(conn):
            replace_slice(conn, "entities", _key("Fresh"), bad)
    assert _dump(conn) == before


def test_columns_are_inserted_by_name_not_position(tmp_path: Path):
    conn = connect(str(tmp_path / "w.duckdb"))
    ensure_schema(conn)
    shuffled = _entities([("Fresh", "2026-09-01", 7, "Orion")])[["name", "entity_id", "day", "world_version", "scenario",
                                                                  "world"]]
    with transaction(conn):
        replace_slice(conn, "entities", _key("Fresh"), shuffled)
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
