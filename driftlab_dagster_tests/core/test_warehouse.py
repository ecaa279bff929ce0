"""The DuckDB file: idempotent partition writes, rollback on failure, and one-line errors for a missing
directory or a file another process holds."""

from __future__ import annotations

import datetime as dt
import errno
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from driftlab_dagster.core.designs import ALL_DESIGNS
from driftlab_dagster.core.duckdb_file import connect, disk_full_in_one_line
from driftlab_dagster.core.evaluation import evaluate
from driftlab_dagster.core.extraction import RegexExtractor
from driftlab_dagster.core.governed import GovernedStore
from driftlab_dagster.core.layer import KnowledgeLayer
from driftlab_dagster.core.readers import DeterministicReader
from driftlab_dagster.core.slice_batch import worker_file
from driftlab_dagster.core.store import Store
from driftlab_dagster.core.study import replay_steps
from driftlab_dagster.core.warehouse import (
    STORAGE,
    TABLES,
    VERSIONED,
    VIEWS,
    MissingUpstream,
    Slice,
    WarehouseError,
    ensure_schema,
    prune_world,
    replace_slice,
    stored_governed_store,
    stored_store,
    transaction,
)
from driftlab_dagster.core.world.loader import load_world
from driftlab_dagster.project import DEFAULT_WORLD
from driftlab_dagster_tests.support.stored_layers import write_layer


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
    with pytest.raises(MissingUpstream, match="no graph for Fresh"):  # the pages are found: the graph is next
        stored_store(conn, Slice("w1", "old", "Fresh", "2026-09-01"))
    with pytest.raises(MissingUpstream, match="pages for Fresh on 2026-09-01 were computed from another version "
                                              "of the world file"):
        stored_store(conn, Slice("w1", "new", "Fresh", "2026-09-01"))
    with pytest.raises(MissingUpstream, match="no pages for StaleGraph"):
        stored_store(conn, Slice("w1", "old", "StaleGraph", "2026-09-01"))


def test_a_failed_write_rolls_back_and_keeps_the_partitions_previous_rows(tmp_path: Path):
    conn = connect(str(tmp_path / "w.duckdb"))
    ensure_schema(conn)
    with transaction(conn):
        replace_slice(conn, "entities", _key("Fresh"), _entities([("Fresh", "2026-09-01", 1, "Pro")]))
    before = _dump(conn)
    bad = _entities([("Fresh", "2026-09-01", 1, None)])  # name is NOT NULL
    # The constraint DuckDB names is what reaches the caller (not a complaint about the aborted transaction).
    with pytest.raises(duckdb.ConstraintException, match="NOT NULL"):
        with transaction(conn):
            replace_slice(conn, "entities", _key("Fresh"), bad)
    assert _dump(conn) == before


def test_columns_are_inserted_by_name_not_position(tmp_path: Path):
    conn = connect(str(tmp_path / "w.duckdb"))
    ensure_schema(conn)
    shuffled = _entities([("Fresh", "2026-09-01", 7, "Orion")])[["name", "entity_id", "day", "world_version",
                                                                  "scenario", "world"]]
    with transaction(conn):
        replace_slice(conn, "entities", _key("Fresh"), shuffled)
    assert conn.execute("SELECT entity_id, name FROM entities").fetchall() == [(7, "Orion")]


def test_the_study_and_its_workers_open_files_on_one_thread_unless_the_caller_asks_for_more(tmp_path: Path):
    # DuckDB's default is a thread per core: measured costlier in CPU for the study's many small queries.
    def threads(conn: duckdb.DuckDBPyConnection) -> int:
        return int(conn.execute("SELECT current_setting('threads')").fetchone()[0])

    with connect(str(tmp_path / "d.duckdb")) as conn:
        assert threads(conn) == 1
    with connect(str(tmp_path / "d.duckdb"), config={"threads": 2}) as conn:
        assert threads(conn) == 2
    with worker_file(str(tmp_path / "w.duckdb"), ["pages"]) as batch:
        assert threads(batch.conn) == 1


def test_a_missing_directory_is_one_clear_line(tmp_path: Path):
    with pytest.raises(WarehouseError) as info:
        connect(str(tmp_path / "nowhere" / "w.duckdb"))
    assert "does not exist" in str(info.value) and "mkdir -p" in str(info.value)
    assert "\n" not in str(info.value)
    assert not (tmp_path / "nowhere").exists()


def test_a_sqlite_file_or_another_file_is_named_for_what_it_is_and_nothing_is_downloaded(tmp_path: Path):
    """Issue 21, item 16: a SQLite file made DuckDB try to download its sqlite extension, and the message
    never said the file was SQLite."""
    import sqlite3

    lite = tmp_path / "notes.db"
    with sqlite3.connect(lite) as made:
        made.execute("CREATE TABLE t (x)")
    (tmp_path / "notes.txt").write_text("hello\n")
    (tmp_path / "empty.duckdb").write_bytes(b"")
    for name, what in [("notes.db", "a SQLite database"), ("notes.txt", "a text file"),
                       ("empty.duckdb", "an empty file")]:
        with pytest.raises(WarehouseError) as info:
            connect(str(tmp_path / name))
        message = str(info.value)
        assert f"{tmp_path / name} is {what}, not a DuckDB database" in message and "--database" in message
        assert "\n" not in message
    assert lite.read_bytes().startswith(b"SQLite format 3\x00")  # left as it was
    conn = connect(str(tmp_path / "new.duckdb"))  # a new file, then the same file again, open as before
    conn.close()
    conn = connect(str(tmp_path / "new.duckdb"))
    settings = dict(conn.execute("SELECT name, value FROM duckdb_settings() WHERE name IN "
                                 "('autoinstall_known_extensions', 'autoload_known_extensions')").fetchall())
    assert settings == {"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"}
    conn.close()


class _CommitOnAFullDisk:
    """A connection whose COMMIT meets a full disk, failing as DuckDB reports it (a real full disk cannot
    be made in a test; docs/dagster.md says how to check it by hand)."""

    def __init__(self, conn: duckdb.DuckDBPyConnection):
        self.conn = conn

    def execute(self, sql: str, *args):  # type: ignore[no-untyped-def]
        if sql == "COMMIT":
            raise duckdb.TransactionException(
                'TransactionContext Error: Failed to commit: Could not write file "/data/driftlab.duckdb.wal": '
                "No space left on device")
        return self.conn.execute(sql, *args)


def test_a_full_disk_under_the_duckdb_file_is_one_line_naming_the_file(tmp_path: Path):
    """Issue 21, item 4: `TransactionException ... No space left on device` came out as an 87-line traceback."""
    path = str(tmp_path / "w.duckdb")
    conn = connect(path)
    ensure_schema(conn)
    with pytest.raises(WarehouseError) as info:
        with disk_full_in_one_line(path), transaction(_CommitOnAFullDisk(conn)) as full:  # type: ignore[arg-type]
            replace_slice(full.conn, "entities", _key("Fresh"), _entities([("Fresh", "2026-09-01", 1, "Acme")]))
    message = str(info.value)
    assert message.startswith(f"DuckDB file {path}: the disk is full") and "--database" in message
    assert "\n" not in message
    with pytest.raises(WarehouseError, match="the disk is full"), disk_full_in_one_line(path):
        raise duckdb.IOException("IO Error: Could not write to file: [Errno 28]")
    with pytest.raises(WarehouseError, match="the disk is full"), disk_full_in_one_line(path):
        raise duckdb.IOException("IO Error: could not write") from OSError(errno.ENOSPC, "No space left on device")
    with pytest.raises(duckdb.ConstraintException), disk_full_in_one_line(path):  # other errors pass as they are
        raise duckdb.ConstraintException("Constraint Error: NOT NULL constraint failed")


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


@pytest.mark.system  # starts the command, or a second process holding the file
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


def test_a_file_whose_cost_rows_carry_milliseconds_is_refused_with_what_to_do(tmp_path: Path):
    """Files written before the stopwatch moved to `pass_timings` had `ms INTEGER NOT NULL` after graph_writes
    in each cost table. Their one-off migration is retired (tag `legacy-prompts`): such a file holds derived
    data only, and opening it says so in one line and leaves its rows alone."""
    path = str(tmp_path / "old.duckdb")
    conn = connect(path)
    old = TABLES["graph_maintenance"].replace("graph_writes INTEGER NOT NULL,",
                                              "graph_writes INTEGER NOT NULL, ms INTEGER NOT NULL,")
    assert old != TABLES["graph_maintenance"]
    conn.execute(f"CREATE TABLE graph_maintenance ({old})")
    conn.execute("INSERT INTO graph_maintenance VALUES ('w1', 'v1', 'Fresh', '2026-09-08', 'patch changed pages', "
                 "1, 8, 2081, 388, 42, 3, true, 0, 0)")
    conn.close()
    conn = connect(path)
    with pytest.raises(WarehouseError, match="graph_maintenance .* written by another version of DriftLab.*delete it"):
        ensure_schema(conn)
    assert conn.execute("SELECT docs, graph_writes, ms FROM graph_maintenance").fetchall() == [(8, 42, 3)]


def test_opening_the_file_again_creates_only_what_is_missing_and_keeps_every_row(tmp_path: Path):
    path = str(tmp_path / "w.duckdb")
    conn = connect(path)
    ensure_schema(conn)
    with transaction(conn):
        replace_slice(conn, "entities", _key("Fresh"), _entities([("Fresh", "2026-09-01", 1, "Pro")]))
    conn.execute("DROP VIEW pages_ahead_of_graph")
    conn.execute("DROP TABLE answers")
    conn.close()
    conn = connect(path)
    ensure_schema(conn)
    ensure_schema(conn)
    assert _dump(conn) == [("w1", "v1", "Fresh", dt.date(2026, 9, 1), 1, "Pro")]
    assert conn.execute("SELECT count(*) FROM answers").fetchone() == (0,)
    assert conn.execute("SELECT count(*) FROM pages_ahead_of_graph").fetchone() == (0,)
    tables = {t for (t,) in conn.execute("SELECT table_name FROM duckdb_tables() "
                                         "WHERE schema_name = 'main'").fetchall()}
    assert tables == set(STORAGE)
    views = {v for (v,) in conn.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
    assert views == set(VERSIONED) | set(VIEWS)


def test_partitions_read_back_as_the_stores_that_were_written_and_answer_alike(tmp_path: Path):
    """Every stored column lands in the field it came from (the read-back builds objects from positions):
    each scenario's graphs on each day, written as the graph asset writes them and read back, snapshot as
    the originals and answer every question the same way."""
    world = load_world(DEFAULT_WORLD)
    extractor, reader = RegexExtractor(world.ontology), DeterministicReader(world.ontology)
    conn = connect(str(tmp_path / "w.duckdb"))
    ensure_schema(conn)
    last = len(world.checkpoints) - 1
    for scenario in world.scenario_names:
        layer = KnowledgeLayer(Store(), GovernedStore(world))
        steps = replay_steps(world, scenario, layer, (world.pages_at(scenario, s) for s in range(last + 1)),
                             extractor, [world.renames_at(scenario, s) for s in range(last + 1)])
        for step, layer, _ in steps:
            store, governed = layer.store, layer.governed
            assert governed is not None
            where = Slice(world.id, world.version, scenario, world.checkpoints[step].key)
            written, written_governed = store.snapshot(), governed.snapshot()
            write_layer(conn, where, step, layer)
            back = stored_store(conn, where)
            back_governed = stored_governed_store(conn, world, where, back)
            assert back.snapshot() == written
            # Names come back in the table's order (entity, valid_from, name), not the order they were made in.
            by_entity = (lambda n: (n["entity_id"], n["valid_from"], n["name"]))  # noqa: E731
            assert back_governed.snapshot()["governed_facts"] == written_governed["governed_facts"]
            assert (sorted(back_governed.snapshot()["governed_names"], key=by_entity)
                    == sorted(written_governed["governed_names"], key=by_entity))
            assert back_governed.extractions == governed.extractions
            assert (evaluate(KnowledgeLayer(back, back_governed), world, scenario, step, reader, ALL_DESIGNS,
                             extractor=extractor)
                    == evaluate(layer, world, scenario, step, reader, ALL_DESIGNS, extractor=extractor))
