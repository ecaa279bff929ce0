"""The large tables stored once per row version: a day written as its changes stores only its changed rows,
a partition written again leaves none of its old row versions behind, rows from worker files keep their own
slices, and a file an earlier DriftLab wrote is moved into this layout row for row."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from driftlab_dagster.core.duckdb_file import connect
from driftlab_dagster.core.slice_batch import SliceBatch, copy_slices, worker_file
from driftlab_dagster.core.warehouse import TABLES, Slice, WarehouseError, ensure_schema, prune_world, transaction

FACT_COLUMNS = ("fact_id", "entity_id", "entity", "predicate", "object", "source_doc", "source_version",
                "extracted_at", "valid_from", "extractor", "audience")
DAYS = [Slice("w1", "v1", "Fresh", day) for day in ("2026-09-01", "2026-09-02", "2026-09-03", "2026-09-04")]
AT = datetime(2026, 9, 1)


def _fact(fact_id: int, price: str) -> tuple:
    return (fact_id, fact_id, f"Product {fact_id}", "price", price, f"p{fact_id}", 1, AT, AT, "rules", "all")


def _day(prices: dict[int, str]) -> dict:
    return {"facts": (FACT_COLUMNS, [_fact(i, p) for i, p in sorted(prices.items())])}


BASE = {i: f"{i} EUR" for i in range(1, 101)}


def _versions(conn) -> int:
    return conn.execute("SELECT count(*) FROM facts_rows").fetchall()[0][0]


def _view(conn) -> list[tuple]:
    return conn.execute("SELECT day, fact_id, object FROM facts ORDER BY ALL").fetchall()


@pytest.fixture
def conn(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(SliceBatch, "CHANGES_FROM_ROWS", 0)  # every day after the first as its changes
    conn = connect(str(tmp_path / "study.duckdb"))
    ensure_schema(conn)
    yield conn
    conn.close()


def _write(conn, days: list[tuple[Slice, dict]]) -> None:
    with transaction(conn):
        batch = SliceBatch(conn, ["facts"])
        for where, tables in days:
            batch.add(where, tables)
        batch.finish()


def test_a_day_written_as_its_changes_stores_only_the_rows_that_changed(conn):
    """Four days of 100 facts, one price changed on day 2 and one fact added on day 4: 102 row versions,
    where a copy per day would hold 401 rows; the view reads every day whole."""
    changed = {**BASE, 7: "8 EUR"}
    _write(conn, [(DAYS[0], _day(BASE)), (DAYS[1], _day(changed)), (DAYS[2], _day(changed)),
                  (DAYS[3], _day({**changed, 101: "1 EUR"}))])
    assert _versions(conn) == 102
    rows = _view(conn)
    assert len(rows) == 100 + 100 + 100 + 101
    assert [(str(d), o) for d, i, o in rows if i == 7] == [
        ("2026-09-01", "7 EUR"), ("2026-09-02", "8 EUR"), ("2026-09-03", "8 EUR"), ("2026-09-04", "8 EUR")]


def test_a_partition_written_again_leaves_no_row_version_behind(conn):
    _write(conn, [(DAYS[0], _day(BASE)), (DAYS[1], _day(BASE))])
    assert _versions(conn) == 100
    _write(conn, [(DAYS[1], _day({i: "free" for i in BASE}))])  # written again, whole: its own 100 versions
    assert _versions(conn) == 200
    _write(conn, [(DAYS[0], _day({1: "only"}))])  # day 1's versions now held by day 2 alone, or by nobody
    assert _versions(conn) == 101
    assert _view(conn)[0][1:] == (1, "only")
    assert {o for d, _, o in _view(conn) if str(d) == "2026-09-02"} == {"free"}


def test_pruning_a_world_deletes_the_row_versions_only_its_pruned_partitions_held(conn):
    _write(conn, [(DAYS[0], _day(BASE)), (DAYS[1], _day({**BASE, 3: "gone tomorrow"}))])
    with transaction(conn):
        deleted = prune_world(conn, "w1", [("Fresh", "2026-09-01")], ["2026-09-01"])
    assert deleted == 100
    assert _versions(conn) == 100
    assert {str(d) for d, _, _ in _view(conn)} == {"2026-09-01"}


def test_row_versions_copied_from_worker_files_keep_to_their_own_slices(conn, tmp_path: Path):
    """Two worker files each number their row versions from 1: copied in, each slice still reads its own."""
    files = []
    for n, (where, prices) in enumerate([(DAYS[0], BASE), (DAYS[1], {i: "other" for i in BASE})]):
        files.append(str(tmp_path / f"{n}.duckdb"))
        with worker_file(files[-1], ["facts"]) as own:
            own.add(where, _day(prices))
    with transaction(conn):
        for file, where in zip(files, DAYS):
            copy_slices(conn, file, ["facts"], [where])
    assert {(str(d), o) for d, i, o in _view(conn) if i == 5} == {("2026-09-01", "5 EUR"), ("2026-09-02", "other")}
    assert _versions(conn) == 200


def test_a_file_written_before_the_tables_were_versioned_is_moved_in_row_for_row(tmp_path: Path, monkeypatch):
    """An earlier DriftLab's `facts` table (a table of its own, one copy per partition) becomes row versions
    and slices the first time the file is opened: the view reads the very rows, the model calls beside them are
    kept, a day can be written as its changes from an adopted day, and opening the file again changes nothing."""
    path = str(tmp_path / "old.duckdb")
    conn = connect(path)
    conn.execute(f"CREATE TABLE facts ({TABLES['facts']})")
    conn.execute(f"CREATE TABLE model_calls ({TABLES['model_calls']})")
    conn.execute("INSERT INTO model_calls VALUES ('k', 'extract', 'm', 'paid for', 1, 1, 1.0)")
    for where, prices in ((DAYS[0], {1: "1 EUR", 2: "2 EUR"}), (DAYS[1], {1: "1 EUR", 2: "3 EUR"})):
        for row in _day(prices)["facts"][1]:
            conn.execute(f"INSERT INTO facts VALUES ({', '.join('?' for _ in TABLES['facts'].split(','))})",
                         [*where.columns.values(), *row])
    written = conn.execute("SELECT * FROM facts ORDER BY ALL").fetchall()
    conn.close()
    conn = connect(path)
    ensure_schema(conn)
    ensure_schema(conn)
    assert conn.execute("SELECT * FROM facts ORDER BY ALL").fetchall() == written
    assert _versions(conn) == 4
    assert conn.execute("SELECT content FROM model_calls").fetchall() == [("paid for",)]
    monkeypatch.setattr(SliceBatch, "CHANGES_FROM_ROWS", 0)
    with transaction(conn):
        batch = SliceBatch(conn, ["facts"])
        batch.add(DAYS[1], _day({1: "1 EUR", 2: "3 EUR"}))
        batch.add(DAYS[2], _day({1: "1 EUR", 2: "4 EUR"}))  # as its changes from the day written again
        batch.finish()
    assert [(str(d), o) for d, i, o in _view(conn) if i == 2] == [
        ("2026-09-01", "2 EUR"), ("2026-09-02", "3 EUR"), ("2026-09-03", "4 EUR")]
    assert _versions(conn) == 5  # day 2's adopted versions gone with it; day 3 holds one of day 2's new ones
    conn.close()


def test_a_file_whose_pages_are_another_table_is_refused_in_one_line(tmp_path: Path):
    path = str(tmp_path / "other.duckdb")
    conn = connect(path)
    conn.execute("CREATE TABLE pages (world VARCHAR, page_id VARCHAR)")
    with pytest.raises(WarehouseError, match=r"table pages in .* was written by another version of DriftLab"):
        ensure_schema(conn)
    assert conn.execute("SELECT table_type FROM information_schema.tables WHERE table_name = 'pages'").fetchall() == [
        ("BASE TABLE",)]
    conn.close()


PAGE_COLUMNS = ("page_id", "title", "body", "version", "updated_at", "changed", "audience", "renamed_from")


def _page(page_id: str, body: str, version: int = 1, changed: bool = False, renamed_from: str | None = None) -> tuple:
    return (page_id, page_id.title(), body, version, AT, changed, "all", renamed_from)


def _pages_view(conn) -> list[tuple]:
    return conn.execute("SELECT day, step, page_id, body, changed, renamed_from FROM pages ORDER BY ALL").fetchall()


def test_a_page_whose_flags_alone_move_keeps_its_row_version(conn):
    """What happened to a page on a day (changed, renamed from) is kept beside the slice's ids: ten pages new on
    day 1, all unchanged on day 2 but one edited and one renamed, are 12 row versions, not 20, and the view
    reads each day's flags as they were written, whether they moved (day 2, day 4) or stayed (day 3)."""
    first = [_page(f"p{i}", f"text {i}", changed=True) for i in range(10)]
    second = sorted([_page(f"p{i}", f"text {i}") for i in range(1, 9)] + [
        _page("p0", "text 0, edited", version=2, changed=True), _page("q9", "text 9", changed=True, renamed_from="p9")])
    fourth = [(*p[:5], False, p[6], None) for p in second]
    days = [first, second, list(second), fourth]
    with transaction(conn):
        batch = SliceBatch(conn, ["pages"])
        for step, (where, pages) in enumerate(zip(DAYS, days)):
            batch.add(where, {"pages": (PAGE_COLUMNS, pages)}, constants={"step": step})
        batch.finish()
    assert conn.execute("SELECT count(*) FROM pages_rows").fetchall() == [(12,)]
    assert [row[1:] for row in _pages_view(conn)] == sorted(
        (step, p[0], p[2], p[5], p[7]) for step, pages in enumerate(days) for p in pages)


def test_a_file_whose_pages_kept_their_flags_in_each_row_version_has_them_moved_beside_the_ids(tmp_path: Path):
    """The layout a DriftLab before the aligned columns wrote (`changed` and `renamed_from` in `pages_rows`)
    is moved, row for row, the first time the file is opened: the view reads the very rows, the model calls
    are kept, and opening the file again changes nothing."""
    path = str(tmp_path / "flags-in-rows.duckdb")
    conn = connect(path)
    conn.execute("""CREATE TABLE pages_rows (world VARCHAR NOT NULL, world_version VARCHAR NOT NULL,
                    row_id BIGINT NOT NULL, page_id VARCHAR NOT NULL, title VARCHAR NOT NULL, body VARCHAR NOT NULL,
                    version INTEGER NOT NULL, updated_at TIMESTAMP NOT NULL, changed BOOLEAN NOT NULL,
                    audience VARCHAR NOT NULL, renamed_from VARCHAR)""")
    conn.execute("""CREATE TABLE pages_slices (world VARCHAR NOT NULL, world_version VARCHAR NOT NULL,
                    scenario VARCHAR NOT NULL, day DATE NOT NULL, step INTEGER NOT NULL, row_ids BIGINT[] NOT NULL)""")
    conn.execute(f"CREATE TABLE model_calls ({TABLES['model_calls']})")
    conn.execute("INSERT INTO model_calls VALUES ('k', 'extract', 'm', 'paid for', 1, 1, 1.0)")
    rows = [(1, "p0", "a", True, None), (2, "p1", "b", True, None), (3, "p0", "a", False, None),
            (4, "q1", "b", True, "p1")]
    for row_id, page_id, body, changed, renamed_from in rows:
        conn.execute("INSERT INTO pages_rows VALUES ('w1', 'v1', ?, ?, 'T', ?, 1, ?, ?, 'all', ?)",
                     [row_id, page_id, body, AT, changed, renamed_from])
    # Day 2 held in two slice rows, as a day written as its changes was.
    for day, step, ids in ((DAYS[0].day, 0, [1, 2]), (DAYS[1].day, 1, [4]), (DAYS[1].day, 1, [3])):
        conn.execute("INSERT INTO pages_slices VALUES ('w1', 'v1', 'Fresh', ?, ?, ?)", [day, step, ids])
    conn.close()
    conn = connect(path)
    ensure_schema(conn)
    ensure_schema(conn)
    assert [(str(d), *rest) for d, *rest in _pages_view(conn)] == [
        ("2026-09-01", 0, "p0", "a", True, None), ("2026-09-01", 0, "p1", "b", True, None),
        ("2026-09-02", 1, "p0", "a", False, None), ("2026-09-02", 1, "q1", "b", True, "p1")]
    assert "changed" not in [c for (c,) in conn.execute("SELECT column_name FROM duckdb_columns() "
                                                        "WHERE table_name = 'pages_rows'").fetchall()]
    assert conn.execute("SELECT content FROM model_calls").fetchall() == [("paid for",)]
    conn.close()
