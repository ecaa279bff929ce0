"""Partitions' rows written from a worker's own DuckDB file: the step's slices are replaced by what the file
holds, every other slice is left, and a failure inside the step's transaction leaves the study's file as it
was."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

import pytest

from driftlab_dagster.core.duckdb_file import connect
from driftlab_dagster.core.slice_batch import KeyedRows, SliceBatch, copy_slices, worker_file
from driftlab_dagster.core.warehouse import Slice, ensure_schema, transaction

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


# Slices added to a batch one after another: each after the first written as its changes from the one before.
DAYS = [Slice("w1", "v1", "Fresh", day) for day in ("2026-09-01", "2026-09-02", "2026-09-03")]
FACT_COLUMNS = ("fact_id", "entity_id", "entity", "predicate", "object", "source_doc", "source_version",
                "extracted_at", "valid_from", "extractor", "audience")
NAME_COLUMNS = ("entity_id", "name", "valid_from", "valid_to")


def _fact(fact_id: int, obj: str) -> tuple:
    at = datetime(2026, 9, 1, 9)
    return (fact_id, 1, "Pro plan", "price", obj, "pricing", 1, at, at, "rules", "everyone")


def _name(entity_id: int, name: str, day: int, until: int | None = None) -> tuple:
    return (entity_id, name, datetime(2026, 9, day), datetime(2026, 9, until) if until else None)


# Each day's rows: day 2 changes one fact, drops one and adds one, renames an entity (a row of a two-column key
# changed, another added) and drops its aliases; day 3 gives the same entity id two rows.
CHAIN = [
    {"facts": (FACT_COLUMNS, [_fact(1, "$10"), _fact(2, "$20"), _fact(3, "$30")]),
     "governed_names": (NAME_COLUMNS, [_name(1, "Pro", 1), _name(2, "Team", 1)]),
     "aliases": (("alias", "entity_id"), [("pro", 1)]),
     "graph_maintenance": (("approach", "event"), [("patch", 0)])},
    {"facts": (FACT_COLUMNS, [_fact(1, "$10"), _fact(3, "$35"), _fact(4, "$40")]),
     "governed_names": (NAME_COLUMNS, [_name(1, "Pro", 1, 2), _name(1, "Pro plan", 2), _name(2, "Team", 1)])},
    {"facts": (FACT_COLUMNS, [_fact(1, "$10"), _fact(1, "$11"), _fact(4, "$40")]),
     "governed_names": (NAME_COLUMNS, [_name(1, "Pro", 1, 2), _name(1, "Pro plan", 2), _name(2, "Team", 1)])},
]
TABLES = ["facts", "governed_names", "aliases"]
ONE_SCENARIO = tuple(zip(DAYS, CHAIN))


def _slices(conn, table: str) -> list[tuple]:
    return conn.execute(f"SELECT * EXCLUDE (world, world_version) FROM {table} ORDER BY ALL").fetchall()


def _write_in_order(path: Path, changes_from: int, monkeypatch, partitions=ONE_SCENARIO) -> dict[str, list[tuple]]:
    """Each table's rows (scenario first) after `partitions` were added to one batch in order, each written as
    changes once the slice before holds `changes_from` rows."""
    monkeypatch.setattr(SliceBatch, "CHANGES_FROM_ROWS", changes_from)
    conn = connect(str(path))
    ensure_schema(conn)
    with transaction(conn):
        batch = SliceBatch(conn, TABLES)
        for where, tables in partitions:
            batch.add(where, {t: rows for t, rows in tables.items() if t in TABLES})
        batch.flush()
    found = {table: _slices(conn, table) for table in TABLES}
    conn.close()
    return found


def test_a_day_written_as_its_changes_holds_the_rows_of_a_whole_write(tmp_path: Path, monkeypatch):
    whole = _write_in_order(tmp_path / "whole.duckdb", 10**9, monkeypatch)
    changes = _write_in_order(tmp_path / "changes.duckdb", 0, monkeypatch)
    assert changes == whole
    # and the whole write is what the days say: day 2 lost fact 2 and its aliases, day 3 holds fact 1 twice
    assert [(r[1].day, r[2], r[6]) for r in whole["facts"]] == [
        (1, 1, "$10"), (1, 2, "$20"), (1, 3, "$30"), (2, 1, "$10"), (2, 3, "$35"), (2, 4, "$40"),
        (3, 1, "$10"), (3, 1, "$11"), (3, 4, "$40")]
    assert [r[1].day for r in whole["aliases"]] == [1]


# A world's partitions in the order a step writes them: one scenario's days, then the next scenario's, whose
# first day follows the other's last (and holds what the other's first day held).
ACROSS = [*ONE_SCENARIO, *zip([Slice("w1", "v1", "StaleGraph", d.day) for d in DAYS[:2]], CHAIN[:2])]


def test_a_scenario_s_first_day_written_as_changes_from_another_s_last_holds_a_whole_write(tmp_path: Path,
                                                                                          monkeypatch):
    whole = _write_in_order(tmp_path / "whole.duckdb", 10**9, monkeypatch, ACROSS)
    assert _write_in_order(tmp_path / "changes.duckdb", 0, monkeypatch, ACROSS) == whole
    # the second scenario's slices are its own rows under its own name: day 1 holds facts 1-3 again
    assert [(r[0], r[1].day, r[2]) for r in whole["facts"] if r[0] == "StaleGraph"] == [
        ("StaleGraph", 1, 1), ("StaleGraph", 1, 2), ("StaleGraph", 1, 3),
        ("StaleGraph", 2, 1), ("StaleGraph", 2, 3), ("StaleGraph", 2, 4)]


def _facts_by_key(day: int) -> dict[int, tuple]:
    return {row[0]: row for row in CHAIN[day]["facts"][1]}


def _write_keyed(path: Path, second: dict) -> list[tuple]:
    """The facts of days 1 and 2 written as changes, the second day's rows as given."""
    conn = connect(str(path))
    ensure_schema(conn)
    with transaction(conn):
        batch = SliceBatch(conn, ["facts"])
        batch.add(DAYS[0], {"facts": (FACT_COLUMNS, first := KeyedRows(_facts_by_key(0)))})
        batch.add(DAYS[1], {"facts": (FACT_COLUMNS, second(first))})
        batch.flush()
    found = _slices(conn, "facts")
    conn.close()
    return found


def test_rows_that_name_the_day_before_are_compared_only_where_they_say(tmp_path: Path, monkeypatch):
    whole = _write_in_order(tmp_path / "whole.duckdb", 10**9, monkeypatch, ONE_SCENARIO[:2])["facts"]
    monkeypatch.setattr(SliceBatch, "CHANGES_FROM_ROWS", 0)
    day2 = _facts_by_key(1)  # fact 1 unchanged, 2 gone, 3 changed, 4 added
    told = _write_keyed(tmp_path / "told.duckdb", lambda first: KeyedRows(day2, first, touched=[4, 2, 3]))
    assert told == whole
    # Rows naming other rows than those written before are compared whole: the same slices.
    assert _write_keyed(tmp_path / "other.duckdb", lambda first: KeyedRows(day2, dict(first), touched=[])) == whole
    # The keys named are the only ones looked at: rows that said nothing changed hold the day before's.
    silent = _write_keyed(tmp_path / "silent.duckdb", lambda first: KeyedRows(day2, first, touched=[]))
    assert [(r[1].day, r[2], r[6]) for r in silent] == [
        (1, 1, "$10"), (1, 2, "$20"), (1, 3, "$30"), (2, 1, "$10"), (2, 2, "$20"), (2, 3, "$30")]


def test_unchanged_rows_are_copied_from_the_day_before_as_stored(tmp_path: Path, monkeypatch):
    """The path is taken: a row the day before holds, changed in the file behind the batch's back, is copied
    as the file holds it (a whole write would send the row from Python)."""
    monkeypatch.setattr(SliceBatch, "CHANGES_FROM_ROWS", 0)
    conn = connect(str(tmp_path / "study.duckdb"))
    ensure_schema(conn)
    with transaction(conn):
        batch = SliceBatch(conn, ["facts"])
        batch.add(DAYS[0], {"facts": CHAIN[0]["facts"]})
        batch.flush()
        conn.execute("UPDATE facts_rows SET extractor = 'edited' WHERE fact_id = 1")  # the row version behind the view
        batch.add(DAYS[1], {"facts": CHAIN[1]["facts"]})
    assert conn.execute("SELECT fact_id, extractor FROM facts WHERE day = '2026-09-02' ORDER BY 1").fetchall() == [
        (1, "edited"), (3, "rules"), (4, "rules")]
    conn.close()


def test_a_small_day_before_is_written_whole_in_the_batch(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(SliceBatch, "CHANGES_FROM_ROWS", 4)  # day 1 holds 3 facts: day 2 is written whole
    conn = connect(str(tmp_path / "study.duckdb"))
    ensure_schema(conn)
    with transaction(conn):
        batch = SliceBatch(conn, ["facts"])
        batch.add(DAYS[0], {"facts": CHAIN[0]["facts"]})
        batch.add(DAYS[1], {"facts": CHAIN[1]["facts"]})
        assert conn.execute("SELECT count(*) FROM facts").fetchone() == (0,)  # both still in the batch
        batch.flush()
    assert conn.execute("SELECT count(*) FROM facts").fetchone() == (6,)
    conn.close()


def test_constants_are_the_slice_s_own_in_copied_rows(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(SliceBatch, "CHANGES_FROM_ROWS", 0)
    columns = ("page_id", "title", "body", "version", "updated_at", "changed", "audience", "renamed_from")
    page = ("pricing", "Pricing", "Pro costs $10.", 1, datetime(2026, 9, 1), True, "everyone", None)
    conn = connect(str(tmp_path / "study.duckdb"))
    ensure_schema(conn)
    with transaction(conn):
        batch = SliceBatch(conn, ["pages"])
        for step, where in enumerate(DAYS):
            batch.add(where, {"pages": (columns, [page])}, constants={"step": step})
        batch.flush()
    assert conn.execute("SELECT day, step FROM pages ORDER BY day").fetchall() == [
        (date(2026, 9, 1), 0), (date(2026, 9, 2), 1), (date(2026, 9, 3), 2)]
    conn.close()


def test_a_worker_file_writes_its_slices_as_changes_and_copies_whole(study, tmp_path: Path, monkeypatch):
    monkeypatch.setattr(SliceBatch, "CHANGES_FROM_ROWS", 0)
    path = str(tmp_path / "worker.duckdb")
    with worker_file(path, TABLES) as own:
        for where, tables in zip(DAYS, CHAIN):
            own.add(where, {t: rows for t, rows in tables.items() if t in TABLES})
    with transaction(study):
        copy_slices(study, path, TABLES, DAYS)
    assert {t: _slices(study, t) for t in TABLES} == _write_in_order(tmp_path / "whole.duckdb", 10**9, monkeypatch)
