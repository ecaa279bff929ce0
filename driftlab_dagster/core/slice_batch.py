"""Many partitions' rows on their way into DuckDB, from this process or from worker processes.

A step over many partitions writes them in a few large INSERTs (`SliceBatch`). A worker process (see
workers.py) cannot write the study's file, which one process holds: it writes its partitions into a DuckDB
file of its own (`worker_file`), and the step copies that file's slices into the study's file inside its own
transaction (`copy_slices`), a copy DuckDB does without a Python object per row. Either way the step's
partitions land together or not at all, and the rows are the same.

A world's partitions differ in a few rows: a scenario's day from the day before, and one scenario's days from
another's (the scenarios hold the same pages and graphs until their policies part). So a batch writes each
slice after its first as its changes from the slice added before it (a step adds a world's partitions in
order): only the rows whose key changed are sent from Python, and the unchanged ones are the slice before's: in
a versioned table (versioned.py) the ids of its row versions, in the others its rows copied inside DuckDB. The
slice is the one a whole write gives, row for row, however different the two slices are.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import duckdb
import pandas as pd

from . import versioned
from .duckdb_file import STUDY_CONNECTION
from .warehouse import (
    ALIGNED,
    ROW_KEYS,
    VERSIONED,
    Slice,
    ensure_schema,
    replace_slices,
    slice_frame,
    table_columns,
    transaction,
)


class KeyedRows(dict):
    """A keyed table's rows by key, in key order, built from `since` (the rows of the same table handed to the
    batch for the partition before, or None): they hold `since`'s rows (its very tuples, or equal ones) for
    every key but those in `touched` (rebuilt, added or gone). A batch comparing them with `since` then looks
    at those keys only."""

    def __init__(self, rows: dict[Any, tuple], since: dict[Any, tuple] | None = None,
                 touched: Sequence[Any] = ()):
        super().__init__(rows)
        self.since, self.touched = since, touched


# A table's columns, and its rows as tuples of them: a list, or (a keyed table) a dict by its ROW_KEYS key in
# row order, which spares the batch keying them again (a KeyedRows spares it comparing them all too).
Rows = tuple[Sequence[str], list[tuple] | dict[Any, tuple]]


def _listed(rows: list[tuple] | dict[Any, tuple]) -> list[tuple]:
    return list(rows.values()) if isinstance(rows, dict) else rows


@dataclass
class _Written:
    """The slice added last, as each keyed table's rows by key (what the next slice is compared with)."""

    where: Slice
    by_key: dict[str, dict[Any, tuple]]
    rows: int


class SliceBatch:
    """Partitions' rows for `tables`, buffered: one INSERT per table while the rows are few (a small world pays
    one round trip, not one per partition), a flush every FLUSH_ROWS rows so memory stays bounded. Use inside
    one transaction.

    A slice added after one of at least CHANGES_FROM_ROWS rows is written at once as its changes from it; below
    that, a round trip per slice costs more than the rows."""

    FLUSH_ROWS = 200_000
    CHANGES_FROM_ROWS = 10_000

    def __init__(self, conn: duckdb.DuckDBPyConnection, tables: Sequence[str]):
        self.conn, self.tables = conn, tuple(tables)
        self.frames: dict[str, list[pd.DataFrame]] = {t: [] for t in self.tables}
        self.slices: list[Slice] = []
        self.rows = 0
        self.last: _Written | None = None
        self.garbage: set[str] = set()  # versioned tables where a slice written again left row versions behind

    def add(self, where: Slice, tables: Mapping[str, Rows], constants: Mapping[str, Any] | None = None) -> None:
        """One partition's rows: table -> (columns, rows as tuples of them). A table left out, or without
        rows, has its slice emptied. `constants` are columns every row of the slice shares beside the slice's
        own (a day's step)."""
        constants = dict(constants or {})
        before, self.last = self.last, _Written(where, _by_key(tables), sum(len(r) for _, r in tables.values()))
        if before is not None and before.rows >= self.CHANGES_FROM_ROWS:
            self._add_changes(where, tables, constants, before, self.last)
            return
        self.slices.append(where)
        for table, (columns, rows) in tables.items():
            if rows:
                self.frames[table].append(slice_frame({**where.columns, **constants}, columns, _listed(rows)))
                self.rows += len(rows)
        if self.rows >= self.FLUSH_ROWS:
            self.flush()

    def _add_changes(self, where: Slice, tables: Mapping[str, Rows], constants: Mapping[str, Any],
                     before: _Written, today: _Written) -> None:
        """Write `where` now: each keyed table as the rows of `before` whose key holds the same row today,
        held by id (a versioned table) or copied inside DuckDB, and today's rows of every other key; any other
        table whole."""
        self.flush()  # the slice before must be in the file to be copied from
        shared = {**where.columns, **constants}
        for table in self.tables:
            columns, rows = tables.get(table, ((), []))
            old, new = before.by_key.get(table), today.by_key.get(table)
            if old is None or new is None:  # not keyed, or a key held two rows: written whole
                self._replace(table, [where.key], slice_frame(shared, columns, _listed(rows)) if rows
                              else pd.DataFrame())
                continue
            aligned = ALIGNED.get(table, ())
            changed, moved = _differing(old, new, columns, aligned)
            self._replace(table, [where.key], slice_frame(shared, columns, [new[k] for k in changed if k in new]))
            if table in VERSIONED:  # the unchanged rows' versions are held by id, not copied
                beside = None
                if moved:
                    kept = [*ROW_KEYS[table], *aligned]
                    values = itemgetter(*(list(columns).index(c) for c in kept))
                    beside = pd.DataFrame([values(new[k]) for k in moved], columns=kept, dtype=object)
                versioned.hold_unchanged(self.conn, table, ROW_KEYS[table], before.where.key, shared, changed, aligned,
                                         beside)
            else:
                _copy_unchanged(self.conn, table, before.where, shared, changed)

    def flush(self) -> None:
        if not self.slices:
            return
        for table, frames in self.frames.items():  # an empty table still clears its slices (DELETE, no INSERT)
            rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
            self._replace(table, [s.key for s in self.slices], rows)
        self.frames = {t: [] for t in self.tables}
        self.slices, self.rows = [], 0

    def finish(self) -> None:
        """Write what is buffered, then delete the row versions that the slices written again were the last to
        hold (once, not per slice: a slice written as its changes holds many of its predecessor's)."""
        self.flush()
        for table in sorted(self.garbage):
            versioned.collect_garbage(self.conn, table)
        self.garbage.clear()

    def _replace(self, table: str, wheres: list[dict[str, str]], rows: pd.DataFrame) -> None:
        if table not in VERSIONED:
            replace_slices(self.conn, table, wheres, rows)
            return
        if versioned.delete_slices(self.conn, table, wheres):
            self.garbage.add(table)
        versioned.insert(self.conn, table, rows, table_columns(table), VERSIONED[table], ALIGNED.get(table, ()))


def _differing(old: dict[Any, tuple], new: dict[Any, tuple], columns: Sequence[str],
               aligned: Sequence[str]) -> tuple[list[Any], list[Any]]:
    """The keys whose rows differ between two slices of a keyed table: those whose row changed, was added or
    is gone (in `new`'s order, then `old`'s), and those whose row differs in its `aligned` values alone
    (`moved`, a flag dropped: the same row version). Rows built from `old` say which keys to look at."""
    # A row built again only where it changed is the day before's very tuple (day_rows.py): `is` first.
    if isinstance(new, KeyedRows) and new.since is old:
        touched = set(new.touched)  # both slices are in key order, so sorting the few keeps theirs
        today = sorted(k for k in touched if k in new)
        gone = sorted(k for k in touched if k not in new and k in old)
    else:
        today, gone = list(new), [k for k in old if k not in new]
    changed: list[Any] = []
    moved: list[Any] = []  # keys whose row is the same version, its aligned values moved (a flag dropped)
    if aligned:
        content = itemgetter(*(i for i, c in enumerate(columns) if c not in aligned))
        for k in today:
            if (was := old.get(k)) is not (row := new[k]) and was != row:
                (changed if was is None or content(was) != content(row) else moved).append(k)
    else:
        changed = [k for k in today if (was := old.get(k)) is not (row := new[k]) and was != row]
    return changed + gone, moved


def _by_key(tables: Mapping[str, Rows]) -> dict[str, dict[Any, tuple]]:
    """Each keyed table's rows by key; a table where a key holds two rows is left out (written whole)."""
    found = {}
    for table, (columns, rows) in tables.items():
        key = ROW_KEYS.get(table)
        if key is None:
            continue
        if isinstance(rows, dict):  # keyed by the caller
            found[table] = rows
            continue
        at = [list(columns).index(c) for c in key]
        by_key = {row[at[0]]: row for row in rows} if len(at) == 1 else {tuple(row[i] for i in at): row for row in rows}
        if len(by_key) == len(rows):
            found[table] = by_key
    return found


def _copy_unchanged(conn: duckdb.DuckDBPyConnection, table: str, before: Slice, shared: Mapping[str, Any],
                    changed: list[Any]) -> None:
    """Copy `before`'s rows of `table` whose key is not in `changed` into the slice `shared` names."""
    replaced = ", ".join(f"? AS {column}" for column in shared)
    where = " AND ".join(f"{column} = ?" for column in before.key)
    with versioned.leaving_out(conn, ROW_KEYS[table], changed) as anti:
        conn.execute(f"INSERT INTO {table} SELECT * REPLACE ({replaced}) FROM {table} {anti} WHERE {where}",
                     [*shared.values(), *before.key.values()])


@contextmanager
def worker_file(path: str, tables: Sequence[str]) -> Iterator[SliceBatch]:
    """A worker's own DuckDB file at `path`, which must not exist yet (`copy_slices` copies all it holds), with
    a batch for `tables`; written and closed on exit."""
    if os.path.exists(path):
        raise FileExistsError(f"{path}: a worker file must be new")
    conn = duckdb.connect(path, config=dict(STUDY_CONNECTION))
    try:
        ensure_schema(conn)
        with transaction(conn):
            batch = SliceBatch(conn, tables)
            yield batch
            batch.finish()
    finally:
        conn.close()


def copy_slices(conn: duckdb.DuckDBPyConnection, path: str, tables: Sequence[str], slices: Sequence[Slice]) -> None:
    """Replace `slices` of `tables` in the study's file with what the worker file at `path` holds for them (all
    it holds). Call inside the step's transaction."""
    conn.execute(f"ATTACH '{_quoted(path)}' AS worker_rows (READ_ONLY)")
    for table in tables:
        if table in VERSIONED:
            replaced = versioned.delete_slices(conn, table, [s.key for s in slices])
            versioned.copy_from(conn, table, "worker_rows")
            if replaced:
                versioned.collect_garbage(conn, table)
            continue
        replace_slices(conn, table, [s.key for s in slices], pd.DataFrame())  # DELETE, as a batch would
        columns = ", ".join(f'"{c}"' for c in table_columns(table))
        conn.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM worker_rows.{table}")
    # Not in a `finally`: after a failed statement the transaction is aborted and DETACH would raise over the
    # real error; the rollback detaches the file anyway.
    conn.execute("DETACH worker_rows")


def _quoted(path: str) -> str:
    return path.replace("'", "''")
