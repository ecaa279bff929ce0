"""Many partitions' rows on their way into DuckDB, from this process or from worker processes.

A step over many partitions writes them in a few large INSERTs (`SliceBatch`). A worker process (see
workers.py) cannot write the study's file, which one process holds: it writes its partitions into a DuckDB
file of its own (`worker_file`), and the step copies that file's slices into the study's file inside its own
transaction (`copy_slices`), a copy DuckDB does without a Python object per row. Either way the step's
partitions land together or not at all, and the rows are the same.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

import duckdb
import pandas as pd

from .warehouse import NO_EXTENSIONS, Slice, ensure_schema, replace_slices, slice_frame, table_columns, transaction


class SliceBatch:
    """Partitions' rows for `tables`, buffered: one INSERT per table while the rows are few (a small world pays
    one round trip, not one per partition), a flush every FLUSH_ROWS rows so memory stays bounded. Use inside
    one transaction."""

    FLUSH_ROWS = 200_000

    def __init__(self, conn: duckdb.DuckDBPyConnection, tables: Sequence[str]):
        self.conn, self.tables = conn, tuple(tables)
        self.frames: dict[str, list[pd.DataFrame]] = {t: [] for t in self.tables}
        self.slices: list[Slice] = []
        self.rows = 0

    def add(self, where: Slice, tables: Mapping[str, tuple[Sequence[str], list[tuple]]]) -> None:
        """One partition's rows: table -> (columns, rows as tuples of them). A table left out, or without
        rows, has its slice emptied."""
        self.slices.append(where)
        for table, (columns, rows) in tables.items():
            if rows:
                self.frames[table].append(slice_frame(where.columns, columns, rows))
                self.rows += len(rows)
        if self.rows >= self.FLUSH_ROWS:
            self.flush()

    def flush(self) -> None:
        if not self.slices:
            return
        for table, frames in self.frames.items():  # an empty table still clears its slices (DELETE, no INSERT)
            rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
            replace_slices(self.conn, table, [s.key for s in self.slices], rows)
        self.frames = {t: [] for t in self.tables}
        self.slices, self.rows = [], 0


@contextmanager
def worker_file(path: str, tables: Sequence[str]) -> Iterator[SliceBatch]:
    """A worker's own DuckDB file at `path`, which must not exist yet (`copy_slices` copies all it holds), with
    a batch for `tables`; written and closed on exit."""
    if os.path.exists(path):
        raise FileExistsError(f"{path}: a worker file must be new")
    conn = duckdb.connect(path, config=dict(NO_EXTENSIONS))
    try:
        ensure_schema(conn)
        with transaction(conn):
            batch = SliceBatch(conn, tables)
            yield batch
            batch.flush()
    finally:
        conn.close()


def copy_slices(conn: duckdb.DuckDBPyConnection, path: str, tables: Sequence[str], slices: Sequence[Slice]) -> None:
    """Replace `slices` of `tables` in the study's file with what the worker file at `path` holds for them (all
    it holds). Call inside the step's transaction."""
    conn.execute(f"ATTACH '{_quoted(path)}' AS worker_rows (READ_ONLY)")
    for table in tables:
        replace_slices(conn, table, [s.key for s in slices], pd.DataFrame())  # DELETE, as a batch would
        columns = ", ".join(f'"{c}"' for c in table_columns(table))
        conn.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM worker_rows.{table}")
    # Not in a `finally`: after a failed statement the transaction is aborted and DETACH would raise over the
    # real error; the rollback detaches the file anyway.
    conn.execute("DETACH worker_rows")


def _quoted(path: str) -> str:
    return path.replace("'", "''")
