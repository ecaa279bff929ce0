"""The large tables stored once per version of a row: a partition is the set of row versions valid on its day.

A world's partitions differ in a few rows (a scenario's day from the day before, one scenario from another
until their policies part), so a row version that many partitions hold is stored once. A versioned table `t`
is two tables and a view:

- `t_rows`: one row per stored row version (a page as it read, a fact as extracted), numbered by `row_id`;
- `t_slices`: one row per (world, scenario, day) partition, or a few, each with the ids of the row versions
  it holds, the values the whole slice shares (a page's `step`) and, beside the ids and in their order, the
  values that say what happened to a row on that day rather than what the row is (a page's `changed` flag
  and `renamed_from`): a page that did not change keeps its row version when its flag moves;
- the view `t`: the table as it reads partition by partition, column for column the table it stands for, so
  every query, check and test that reads `t` reads what it always did.

Writing a day as its changes then costs a list of ids for its unchanged rows, not a copy of them. A row
version no slice holds any more (its partition was written again) is deleted by `collect_garbage`. Row ids are
unique in the file and the file's own: they differ between two files holding the same rows, and nothing
outside this module sees them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import duckdb
import numpy as np
import pandas as pd

# The columns that scope a slice, in the order every partitioned table starts with.
SLICE_COLUMNS = ("world", "world_version", "scenario", "day")


def rows_table(table: str) -> str:
    return f"{table}_rows"


def slices_table(table: str) -> str:
    return f"{table}_slices"


def storage_tables(table: str, definitions: Sequence[tuple[str, str]], constants: Sequence[str],
                   aligned: Sequence[str] = ()) -> dict[str, str]:
    """The two tables behind the versioned `table`, name -> column definitions, given the logical table's
    (name, definition) pairs, the columns a slice shares and the columns kept beside its ids (`aligned`)."""
    by_name = dict(definitions)
    content = [(n, d) for n, d in definitions if n not in SLICE_COLUMNS and n not in constants and n not in aligned]
    return {
        rows_table(table): ", ".join([by_name["world"], by_name["world_version"], "row_id BIGINT NOT NULL",
                                      *(d for _, d in content)]),
        slices_table(table): ", ".join([*(by_name[c] for c in SLICE_COLUMNS), *(by_name[c] for c in constants),
                                        "row_ids BIGINT[] NOT NULL",
                                        *(f"{c} {by_name[c].split()[1]}[] NOT NULL" for c in aligned)]),
    }


def view_sql(table: str, columns: Sequence[str], constants: Sequence[str], aligned: Sequence[str] = ()) -> str:
    """The view that reads the versioned `table` as the table it stands for, `columns` in order."""
    on_slice = set(SLICE_COLUMNS) | set(constants) | set(aligned)
    select = ", ".join(f"s.{c}" if c in on_slice else f"r.{c}" for c in columns)
    held = ", ".join(["world", "world_version", "scenario", "day", *constants])
    # Lists unnested side by side in one SELECT are read in step: each id with its own aligned values. The
    # join names `world` although a row id alone is unique: without it, a rerun at 40,000 pages had DuckDB plan
    # the drift checks' join of two views as every id of one slice with every id of the other (past 20 GB).
    # It is no guarantee (a join of two views may still be planned so: core/drift.py reads each slice first).
    beside = "".join(f", unnest({c}) AS {c}" for c in aligned)
    return f"""SELECT {select}
               FROM (SELECT {held}, unnest(row_ids) AS row_id{beside} FROM {slices_table(table)}) s
               JOIN {rows_table(table)} r ON r.world = s.world AND r.row_id = s.row_id"""


def delete_slices(conn: duckdb.DuckDBPyConnection, table: str, wheres: Sequence[Mapping[str, Any]]) -> int:
    """Delete the slices `wheres` name (each a column -> value mapping); their row versions stay until
    `collect_garbage`. Returns how many rows the slices held."""
    held = 0
    for where in wheres:
        clause = " AND ".join(f"{column} = ?" for column in where) or "TRUE"
        held += sum(n for (n,) in conn.execute(
            f"DELETE FROM {slices_table(table)} WHERE {clause} RETURNING len(row_ids)", list(where.values())
        ).fetchall())
    return held


def _next_row_id(conn: duckdb.DuckDBPyConnection, table: str) -> int:
    return conn.execute(f"SELECT coalesce(max(row_id), 0) + 1 FROM {rows_table(table)}").fetchall()[0][0]


def insert(conn: duckdb.DuckDBPyConnection, table: str, rows: pd.DataFrame, columns: Sequence[str],
           constants: Sequence[str], aligned: Sequence[str] = ()) -> None:
    """Store `rows` (a frame of the logical table's `columns`, any number of slices) as new row versions and
    add each slice's ids to it (a slice may then hold ids from several of its rows in `t_slices`)."""
    if not len(rows):
        return
    first = _next_row_id(conn, table)
    conn.register("_versions", rows[list(columns)].assign(row_id=np.arange(first, first + len(rows), dtype=np.int64)))
    _store(conn, table, "_versions", columns, constants, aligned)
    conn.unregister("_versions")


def _store(conn: duckdb.DuckDBPyConnection, table: str, source: str, columns: Sequence[str],
           constants: Sequence[str], aligned: Sequence[str]) -> None:
    """Store the rows of `source` (the logical table's `columns` and a new `row_id` each) as row versions, and
    each slice's ids (with their aligned values)."""
    on_slice = [*SLICE_COLUMNS, *constants]
    content = ", ".join(f'"{c}"' for c in ["world", "world_version", "row_id",
                                            *(c for c in columns if c not in on_slice and c not in aligned)])
    conn.execute(f"INSERT INTO {rows_table(table)} ({content}) SELECT {content} FROM {source}")
    held = ", ".join(on_slice)
    conn.execute(f"""INSERT INTO {slices_table(table)} ({held}, {_listed(aligned)})
                     SELECT {held}, {_listed(aligned, aggregate=True)} FROM {source} GROUP BY ALL""")


def _listed(aligned: Sequence[str], aggregate: bool = False) -> str:
    """A slice row's id list and aligned lists: their column names, or (`aggregate`) each gathered in id order."""
    columns = ["row_ids", *aligned]
    if not aggregate:
        return ", ".join(columns)
    return ", ".join(f"list({'row_id' if c == 'row_ids' else c} ORDER BY row_id) AS {c}" for c in columns)


def adopt(conn: duckdb.DuckDBPyConnection, table: str, columns: Sequence[str], constants: Sequence[str],
          aligned: Sequence[str] = ()) -> None:
    """Move `table` as an earlier DriftLab wrote it (a table of its own, of the logical `columns`) into the
    layout above, row for row, each row a row version of its own until its partition is written again. Call
    inside a transaction, once the tables behind `table` exist."""
    before = f"_{table}_before_versions"
    conn.execute(f"ALTER TABLE {table} RENAME TO {before}")
    first = _next_row_id(conn, table)
    conn.execute(f"CREATE TEMP TABLE _adopted AS SELECT *, row_number() OVER () + {first - 1} AS row_id FROM {before}")
    _store(conn, table, "_adopted", columns, constants, aligned)
    conn.execute("DROP TABLE _adopted")
    conn.execute(f"DROP TABLE {before}")


def move_beside_ids(conn: duckdb.DuckDBPyConnection, table: str, constants: Sequence[str],
                    aligned: Sequence[str]) -> None:
    """Move `aligned` columns, as an earlier DriftLab kept them in each row version, beside the ids of every
    slice holding the version, row for row. Call inside a transaction, before the view is made again."""
    held = ", ".join([*SLICE_COLUMNS, *constants])
    on_slice = ", ".join(f"s.{c}" for c in [*SLICE_COLUMNS, *constants])
    conn.execute(f"""CREATE TEMP TABLE _realigned AS
                     SELECT {on_slice}, {_listed(aligned, aggregate=True)}
                     FROM (SELECT {held}, unnest(row_ids) AS row_id FROM {slices_table(table)}) s
                     JOIN {rows_table(table)} r USING (row_id) GROUP BY ALL""")
    conn.execute(f"DELETE FROM {slices_table(table)}")
    conn.execute(f"DROP VIEW IF EXISTS {table}")  # it reads the columns about to move
    for column in aligned:
        [(kind,)] = conn.execute("SELECT data_type FROM duckdb_columns() WHERE table_name = ? AND column_name = ?",
                                 [rows_table(table), column]).fetchall()
        conn.execute(f"ALTER TABLE {slices_table(table)} ADD COLUMN {column} {kind}[]")
        conn.execute(f"ALTER TABLE {rows_table(table)} DROP COLUMN {column}")
    conn.execute(f"INSERT INTO {slices_table(table)} BY NAME SELECT * FROM _realigned")
    conn.execute("DROP TABLE _realigned")


@contextmanager
def leaving_out(conn: duckdb.DuckDBPyConnection, key: Sequence[str], changed: Sequence[Any]) -> Iterator[str]:
    """An `ANTI JOIN` clause that leaves out the rows whose `key` (its columns) is one of `changed`; empty when
    none is. Not in a `finally`: after a failed statement the transaction is aborted and unregistering would
    raise over the real error, and the next register() of the name replaces it."""
    if not changed:
        yield ""
        return
    keys = [k if len(key) > 1 else (k,) for k in changed]
    conn.register("_changed_keys", pd.DataFrame(keys, columns=list(key), dtype=object))
    yield f"ANTI JOIN _changed_keys USING ({', '.join(key)})"
    conn.unregister("_changed_keys")


def hold_unchanged(conn: duckdb.DuckDBPyConnection, table: str, key: Sequence[str], before: Mapping[str, Any],
                   shared: Mapping[str, Any], changed: Sequence[Any], aligned: Sequence[str] = (),
                   moved: pd.DataFrame | None = None) -> None:
    """Give the slice `shared` names (its columns and constants) the row versions of the slice `before` names
    whose key is not in `changed`: the ids, not the rows. Each keeps its `aligned` values from `before`, but for
    the keys `moved` lists (a frame of the key's columns and the aligned ones): this day's values."""
    slice_where = " AND ".join(f"{column} = ?" for column in before)
    held = ", ".join(shared)
    values = ", ".join("?" for _ in shared)
    if not changed and (moved is None or not len(moved)):  # the slice before's ids and values, as they are
        conn.execute(f"""INSERT INTO {slices_table(table)} ({held}, {_listed(aligned)})
                         SELECT {values}, {_listed(aligned)} FROM {slices_table(table)} WHERE {slice_where}""",
                     [*shared.values(), *before.values()])
        return
    beside = "".join(f", unnest({c}) AS {c}" for c in aligned)
    keys = ", ".join(f"r.{c}" for c in key)
    today, gathered = "", _listed(aligned, aggregate=True)
    if aligned and moved is not None and len(moved):
        conn.register("_moved_today", moved.assign(_moved=True))
        today = f"LEFT JOIN _moved_today t USING ({', '.join(key)})"
        gathered = ", ".join(["list(row_id ORDER BY row_id) AS row_ids", *(
            f"list(CASE WHEN t._moved THEN t.{c} ELSE kept.{c} END ORDER BY row_id) AS {c}" for c in aligned)])
    with leaving_out(conn, key, changed) as anti:
        conn.execute(f"""INSERT INTO {slices_table(table)} ({held}, {_listed(aligned)})
                         SELECT {values}, {gathered} FROM (
                             SELECT b.*, {keys} FROM (SELECT unnest(row_ids) AS row_id{beside}
                                                      FROM {slices_table(table)} WHERE {slice_where}) b
                             JOIN {rows_table(table)} r ON r.row_id = b.row_id) kept {anti} {today}
                         HAVING count(*) > 0""", [*shared.values(), *before.values()])
    if today:
        conn.unregister("_moved_today")


def copy_from(conn: duckdb.DuckDBPyConnection, table: str, schema: str) -> None:
    """Add every slice and row version the attached database `schema` holds of `table`, its row ids moved past
    this file's own."""
    shift = _next_row_id(conn, table) - 1
    conn.execute(f"""INSERT INTO {rows_table(table)} BY NAME
                     SELECT * REPLACE (row_id + {shift} AS row_id) FROM {schema}.{rows_table(table)}""")
    conn.execute(f"""INSERT INTO {slices_table(table)} BY NAME
                     SELECT * REPLACE (list_transform(row_ids, lambda id: id + {shift}) AS row_ids)
                     FROM {schema}.{slices_table(table)}""")


def collect_garbage(conn: duckdb.DuckDBPyConnection, table: str) -> None:
    """Delete the row versions no slice holds any more."""
    conn.execute(f"""DELETE FROM {rows_table(table)} r WHERE NOT EXISTS (
                         SELECT 1 FROM (SELECT unnest(row_ids) AS row_id FROM {slices_table(table)}) s
                         WHERE s.row_id = r.row_id)""")


def changes_between(conn: duckdb.DuckDBPyConnection, table: str, columns: str, within: str, params: list,
                    this: tuple[str, list], earlier: tuple[str, list]) -> list[tuple]:
    """`columns` of the rows that only one of two slices holds (each slice a condition on the slice columns
    and its parameters, both `within`), then whether `this` holds it. Found from the ids: only
    the row versions one slice holds and the other does not are read, and of those the rows the two hold alike
    in `columns` (a page whose `changed` flag alone moved) are left out, as a comparison of the rows would."""
    def ids(holds: tuple[str, list]) -> np.ndarray:
        found = conn.execute(f"SELECT unnest(row_ids) AS id FROM {slices_table(table)} WHERE {within} AND ({holds[0]})",
                             [*params, *holds[1]]).fetchnumpy()["id"]
        return np.asarray(found, dtype=np.int64)  # a slice holds a row version once (its ids are unique)

    this_ids, earlier_ids = ids(this), ids(earlier)
    new = np.setdiff1d(this_ids, earlier_ids, assume_unique=True)
    gone = np.setdiff1d(earlier_ids, this_ids, assume_unique=True)
    if not len(new) and not len(gone):
        return []
    conn.register("_one_side", pd.DataFrame({"row_id": np.concatenate([new, gone]),
                                             "this_one": np.arange(len(new) + len(gone)) < len(new)}))
    # A row both slices hold alike under two row versions is no change: left out inside DuckDB (NULLs compare
    # equal, as in any grouping), so that a day whose pages all lost their `changed` flag sends none of them.
    rows = conn.execute(f"""SELECT {columns}, s.this_one FROM {rows_table(table)} r JOIN _one_side s USING (row_id)
                            QUALIFY count(*) OVER (PARTITION BY {columns}) = 1""").fetchall()
    conn.unregister("_one_side")
    return rows
