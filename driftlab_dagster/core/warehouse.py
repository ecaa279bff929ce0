"""The DuckDB file that holds the study: one table per asset; each partition is a (world, scenario, day)
slice, so any number of worlds live side by side in one file. The four large tables are views over row
versions stored once and each slice's list of them (versioned.py): read them as tables.

Every world-scoped row carries the world's id and the version (content hash) of the world file it was
computed from. A partition's slice is keyed by (world, scenario, day) whatever the version, so
re-materialising it replaces it; readers take only rows of the world version they were built from, so a
changed world file shows up as stale partitions, never as old rows in new tables.

Writes are idempotent: a partition's slice of every table it owns is deleted and re-inserted in one
transaction, by column name, with values bound as parameters. A failure rolls the whole partition back,
so no partition is ever half-written and every other partition's rows stay as they were.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import duckdb
import pandas as pd

from . import versioned
from .duckdb_file import WarehouseError
from .governed import EntityName, GovernedFact, GovernedStore
from .layer import KnowledgeLayer
from .store import Store
from .world import World

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

_COST_COLUMNS = """
    approach VARCHAR NOT NULL, event INTEGER NOT NULL, docs INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, graph_writes INTEGER NOT NULL,
    estimated BOOLEAN NOT NULL, spent_input_tokens INTEGER NOT NULL, spent_output_tokens INTEGER NOT NULL"""

# The columns that scope a row to a world and to the version of its world file.
_WORLD = "world VARCHAR NOT NULL, world_version VARCHAR NOT NULL"
# ... and to a (scenario, day) partition.
_PARTITION = f"{_WORLD}, scenario VARCHAR NOT NULL, day DATE NOT NULL"

# table -> column definitions. Every partitioned table starts with its partition columns.
TABLES: dict[str, str] = {
    "worlds": f"""{_WORLD}, company VARCHAR NOT NULL, source VARCHAR NOT NULL, spec_json VARCHAR NOT NULL""",
    "pages": f"""{_PARTITION}, step INTEGER NOT NULL, page_id VARCHAR NOT NULL,
        title VARCHAR NOT NULL, body VARCHAR NOT NULL, version INTEGER NOT NULL, updated_at TIMESTAMP NOT NULL,
        changed BOOLEAN NOT NULL, audience VARCHAR NOT NULL, renamed_from VARCHAR""",
    "entities": f"{_PARTITION}, entity_id INTEGER NOT NULL, name VARCHAR NOT NULL",
    "aliases": f"{_PARTITION}, alias VARCHAR NOT NULL, entity_id INTEGER NOT NULL",
    "facts": f"""{_PARTITION}, fact_id INTEGER NOT NULL, entity_id INTEGER NOT NULL,
        entity VARCHAR NOT NULL, predicate VARCHAR NOT NULL, object VARCHAR NOT NULL, source_doc VARCHAR NOT NULL,
        source_version INTEGER NOT NULL, extracted_at TIMESTAMP NOT NULL, valid_from TIMESTAMP NOT NULL,
        extractor VARCHAR NOT NULL, audience VARCHAR NOT NULL""",
    "extraction_log": f"""{_PARTITION}, page_id VARCHAR NOT NULL,
        version INTEGER NOT NULL, extracted_at TIMESTAMP NOT NULL, extractor VARCHAR NOT NULL,
        issue VARCHAR NOT NULL""",
    "graph_maintenance": f"{_PARTITION}, {_COST_COLUMNS}",
    # The Governed design's graph: nothing is deleted; rows are retracted and superseded (governed.py).
    "governed_facts": f"""{_PARTITION}, id INTEGER NOT NULL, entity_id INTEGER NOT NULL,
        entity VARCHAR NOT NULL, predicate VARCHAR NOT NULL, object VARCHAR NOT NULL, source VARCHAR NOT NULL,
        source_version INTEGER NOT NULL, rank INTEGER NOT NULL, extractor VARCHAR NOT NULL,
        valid_from TIMESTAMP NOT NULL, valid_to TIMESTAMP, recorded_at TIMESTAMP NOT NULL, retracted_at TIMESTAMP,
        audience VARCHAR NOT NULL, value VARCHAR NOT NULL""",
    "governed_names": f"""{_PARTITION}, entity_id INTEGER NOT NULL, name VARCHAR NOT NULL,
        valid_from TIMESTAMP NOT NULL, valid_to TIMESTAMP""",
    "answers": f"""{_PARTITION}, step INTEGER NOT NULL, design VARCHAR NOT NULL,
        question VARCHAR NOT NULL, drifted BOOLEAN NOT NULL, outcome VARCHAR NOT NULL, hedged BOOLEAN NOT NULL,
        answer VARCHAR NOT NULL, expected VARCHAR NOT NULL, why VARCHAR NOT NULL, model_flagged BOOLEAN NOT NULL,
        hedge_phrase BOOLEAN NOT NULL""",
    "maintenance_costs": f"{_WORLD}, day DATE NOT NULL, {_COST_COLUMNS}, graph_only_accuracy DOUBLE",
    "repair_costs": f"{_WORLD}, {_COST_COLUMNS}, graph_only_accuracy DOUBLE",
    # How long each timed pass of the cost tables above took, one row per pass per run: a measurement, so it
    # is kept apart from the costs (which are the same for the same inputs) and appended, never replaced.
    "pass_timings": f"""{_WORLD}, cost_table VARCHAR NOT NULL, scenario VARCHAR, day DATE, approach VARCHAR NOT NULL,
        event INTEGER NOT NULL, ms INTEGER NOT NULL, run_id VARCHAR NOT NULL, recorded_at TIMESTAMP NOT NULL""",
    # The graph the repair left behind (by the approach the repair asset was configured with).
    "repaired_extraction_log": f"""{_WORLD}, approach VARCHAR NOT NULL, page_id VARCHAR NOT NULL,
        version INTEGER NOT NULL, extracted_at TIMESTAMP NOT NULL, extractor VARCHAR NOT NULL,
        issue VARCHAR NOT NULL""",
    "repaired_facts": f"""{_WORLD}, approach VARCHAR NOT NULL, fact_id INTEGER NOT NULL, entity VARCHAR NOT NULL,
        predicate VARCHAR NOT NULL, object VARCHAR NOT NULL, source_doc VARCHAR NOT NULL,
        source_version INTEGER NOT NULL, extracted_at TIMESTAMP NOT NULL, valid_from TIMESTAMP NOT NULL,
        extractor VARCHAR NOT NULL""",
    "page_embeddings": f"""{_PARTITION}, page_id VARCHAR NOT NULL, version INTEGER NOT NULL,
        model VARCHAR NOT NULL, embedding FLOAT[] NOT NULL""",
    # The content-addressed cache of model calls: what a rerun, a backfill of another scenario over the same
    # page versions, or a replay of earlier days does not pay for again. Shared by every world.
    "model_calls": """key VARCHAR PRIMARY KEY, kind VARCHAR NOT NULL, model VARCHAR NOT NULL, content VARCHAR NOT NULL,
        input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, latency_ms DOUBLE NOT NULL""",
    # Calls whose reply came back unusable (not the expected shape): never cached, always asked again, but
    # a rerun that meets them failing again does not take it for a broken server (the streak check).
    "model_call_failures": """key VARCHAR PRIMARY KEY, model VARCHAR NOT NULL, reason VARCHAR NOT NULL""",
}

# Tables sliced by (world, scenario, day): what a world's partitions own.
PARTITION_TABLES = [t for t, cols in TABLES.items() if cols.startswith(_PARTITION)]

# The large tables, stored once per row version (versioned.py): table -> the columns its slices share. Each is a
# view over two tables, read as the table it stands for.
VERSIONED: dict[str, tuple[str, ...]] = {"pages": ("step",), "facts": (), "extraction_log": (), "governed_facts": ()}

# A versioned table's columns that say what happened to a row on its day, not what the row is: kept beside the
# slice's ids, so a page whose text did not change is the same row version on the day its `changed` flag drops.
ALIGNED: dict[str, tuple[str, ...]] = {"pages": ("changed", "renamed_from")}


def _definitions(columns: str) -> list[tuple[str, str]]:
    """A table's (column, definition) pairs, in order, from its column definitions."""
    pairs = [" ".join(c.split()) for c in columns.replace("\n", " ").split(",")]
    return [(pair.split()[0], pair) for pair in pairs]


# The tables the file holds: every table but the versioned ones, and the two behind each versioned one.
STORAGE: dict[str, str] = {t: cols for t, cols in TABLES.items() if t not in VERSIONED}
for _table, _shared in VERSIONED.items():
    STORAGE.update(versioned.storage_tables(_table, _definitions(TABLES[_table]), _shared, ALIGNED.get(_table, ())))

# The LEFT JOIN that makes patching possible: per partition, pages newer than what the graph last read.
VIEWS = {
    "pages_ahead_of_graph": """
        SELECT p.world, p.world_version, p.scenario, p.day, p.page_id, p.version AS page_version,
               x.version AS version_read
        FROM pages p LEFT JOIN extraction_log x USING (world, world_version, scenario, day, page_id)
        WHERE x.version IS NULL OR x.version < p.version""",
}

def ensure_schema(conn: duckdb.DuckDBPyConnection) -> None:
    """Create what is missing, move the large tables of a file written before they were versioned into their
    versioned layout, and refuse tables another version of DriftLab wrote otherwise. Every asset step opens the
    file, so this reads the catalogue once and writes only what is missing (and the views, whose text may
    have changed with the code)."""
    existing: dict[str, list[str]] = {}
    for table, column in conn.execute("""SELECT table_name, column_name FROM duckdb_columns()
                                         WHERE schema_name = 'main' AND table_name IN (SELECT unnest(?))
                                           AND table_oid IN (SELECT table_oid FROM duckdb_tables())
                                         ORDER BY table_name, column_index""", [[*STORAGE, *VERSIONED]]).fetchall():
        existing.setdefault(table, []).append(column)
    for table, aligned in ALIGNED.items():
        rows = existing.get(versioned.rows_table(table), [])
        if aligned and set(aligned) <= set(rows):  # a file from before the aligned columns left the row versions
            with transaction(conn):
                versioned.move_beside_ids(conn, table, VERSIONED[table], aligned)
            for moved in (versioned.rows_table(table), versioned.slices_table(table)):
                existing[moved] = [name for name, _ in _definitions(STORAGE[moved])]
    for table, columns in STORAGE.items():
        if table not in existing:
            conn.execute(f"CREATE TABLE IF NOT EXISTS {table} ({columns})")
        elif existing[table] != [name for name, _ in _definitions(columns)]:
            _written_by_another_version(conn, table, existing[table])
    for table, shared in VERSIONED.items():
        aligned = ALIGNED.get(table, ())
        if table in existing:  # a table where this version keeps a view: an earlier DriftLab's file
            if existing[table] != table_columns(table):
                _written_by_another_version(conn, table, existing[table])
            with transaction(conn):  # its rows, and the model calls beside them, are kept
                versioned.adopt(conn, table, table_columns(table), shared, aligned)
        conn.execute(f"CREATE OR REPLACE VIEW {table} AS "
                     f"{versioned.view_sql(table, table_columns(table), shared, aligned)}")
    for view, sql in VIEWS.items():
        conn.execute(f"CREATE OR REPLACE VIEW {view} AS {sql}")


def _written_by_another_version(conn: duckdb.DuckDBPyConnection, table: str, columns: list[str]) -> None:
    raise WarehouseError(
        f"table {table} in {_one_row(conn.execute('PRAGMA database_list'))[2]} was written by another "
        f"version of DriftLab (columns {columns}); it holds derived data only: move the file "
        "aside or delete it and run again"
    )


def _one_row(result: duckdb.DuckDBPyConnection) -> tuple[Any, ...]:
    """The row of a statement that always returns exactly one (a PRAGMA, a DELETE's count)."""
    return cast("tuple[Any, ...]", result.fetchone())


def table_columns(table: str) -> list[str]:
    return [name for name, _ in _definitions(TABLES[table])]


@contextmanager
def transaction(conn: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    conn.execute("BEGIN TRANSACTION")
    try:
        yield conn
    except BaseException:
        try:
            conn.execute("ROLLBACK")
        except duckdb.Error:
            pass  # a write that failed (a full disk) may have aborted the transaction already: its error is the news
        raise
    conn.execute("COMMIT")


def replace_slice(conn: duckdb.DuckDBPyConnection, table: str, where: Mapping[str, Any], rows: pd.DataFrame) -> int:
    """Delete `table`'s rows matching `where` and insert `rows` by column name. Call inside `transaction`."""
    return replace_slices(conn, table, [where], rows)


def replace_slices(conn: duckdb.DuckDBPyConnection, table: str, wheres: Sequence[Mapping[str, Any]],
                   rows: pd.DataFrame) -> int:
    """Replace several partitions' slices of `table` at once (a run over many partitions): one DELETE per
    slice, then one INSERT ... BY NAME of all their rows. Call inside `transaction`. A versioned table's row
    versions that no slice holds any more are deleted too (a batch of many slices does that once, at its end:
    `SliceBatch`)."""
    if table not in TABLES:
        raise KeyError(f"unknown table {table!r}")
    columns = table_columns(table)
    missing = set(columns) - set(rows.columns)
    if missing and len(rows):
        raise ValueError(f"rows for {table} lack columns {sorted(missing)}")
    if table in VERSIONED:
        replaced = versioned.delete_slices(conn, table, wheres)
        versioned.insert(conn, table, rows, columns, VERSIONED[table], ALIGNED.get(table, ()))
        if replaced:
            versioned.collect_garbage(conn, table)
        return len(rows)
    for names in {tuple(w) for w in wheres}:
        clause = " AND ".join(f"{column} = ?" for column in names) or "TRUE"
        params = [list(w.values()) for w in wheres if tuple(w) == names]
        if names:
            conn.executemany(f"DELETE FROM {table} WHERE {clause}", params)
        else:
            conn.execute(f"DELETE FROM {table}")
    if len(rows):
        conn.register("_incoming", rows[columns])
        # Not in a `finally`: after a failed insert the transaction is aborted and unregistering would raise
        # over the real error (a constraint the rows broke, a full disk). A view left registered is replaced
        # by the next register() of the same name.
        conn.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _incoming")
        conn.unregister("_incoming")
    return len(rows)


def slice_frame(constants: Mapping[str, Any], columns: Sequence[str], rows: Sequence[tuple]) -> pd.DataFrame:
    """Rows (tuples of `columns`) plus the values every row of the slice shares, as a frame for
    `replace_slices`. The columns stay plain Python objects: DuckDB casts them to the table's types on
    insert, three times faster than pandas inferring types from a dict per row."""
    frame = pd.DataFrame(list(rows), columns=list(columns), dtype=object)
    for name, value in constants.items():
        frame[name] = value
    return frame


def read(conn: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] = ()) -> pd.DataFrame:
    return conn.execute(sql, list(params)).df()


def records(conn: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] = ()) -> list[dict]:
    cursor = conn.execute(sql, list(params))
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


# ---------------------------------------------------------------------------------------------------------
# Reading the study's own tables back.


class MissingUpstream(WarehouseError):
    """A partition's input is not in the file yet."""


@dataclass(frozen=True)
class Slice:
    """One (world, scenario, day) partition of the world-scoped tables, at one version of the world file."""

    world: str
    world_version: str
    scenario: str
    day: str

    @property
    def key(self) -> dict[str, str]:
        """What identifies the slice: a rewrite replaces it whatever version wrote it before."""
        return {"world": self.world, "scenario": self.scenario, "day": self.day}

    @property
    def columns(self) -> dict[str, str]:
        """The values every row of the slice carries."""
        return {"world": self.world, "world_version": self.world_version, "scenario": self.scenario, "day": self.day}

    def __str__(self) -> str:
        return f"{self.scenario} on {self.day}"


# The columns of a stored row in the order of the object it becomes (StoredPage, Fact, ExtractionEntry).
_PAGE_COLUMNS = "page_id, title, body, version, updated_at, audience"


def _field_columns(cls: type[DataclassInstance]) -> str:
    return ", ".join(f'"{name}"' for name in cls.__dataclass_fields__)


# table -> the columns that tell its rows apart within a slice: the order its rows are read back in, and what a
# day written as its changes compares with the day before (slice_batch: a row whose key holds the same row as
# the day before is copied from it). A table not named here is always written whole.
ROW_KEYS: dict[str, tuple[str, ...]] = {
    "pages": ("page_id",),
    "entities": ("entity_id",),
    "aliases": ("alias",),
    "facts": ("fact_id",),
    "extraction_log": ("page_id",),
    "governed_facts": ("id",),
    "governed_names": ("entity_id", "valid_from"),
}

# table -> the columns of a row read back, in the order of the object it becomes.
_READ_COLUMNS = {
    "pages": _PAGE_COLUMNS,
    "entities": "entity_id, name",
    "aliases": "alias, entity_id",
    "facts": "fact_id, entity_id, predicate, object, source_doc, source_version, extracted_at, valid_from, extractor, "
             "audience",
    "extraction_log": "page_id, version, extracted_at, extractor, issue",
    "governed_facts": _field_columns(GovernedFact),
    "governed_names": _field_columns(EntityName),
}

# Where a key may hold two rows of a slice (an entity given two names on one day), what orders them after it.
_THEN_BY = {"governed_names": ("name",)}

# table -> (its columns read back, its order: the key first).
READ_BACK: dict[str, tuple[str, str]] = {
    table: (columns, ", ".join(ROW_KEYS[table] + _THEN_BY.get(table, ()))) for table, columns in _READ_COLUMNS.items()
}


def slice_tuples(conn: duckdb.DuckDBPyConnection, table: str, where: Slice, what: str | None = None,
                 asset: str | None = None) -> list[tuple]:
    """A slice's rows computed from this version of the world file, as tuples of `columns` (a dict per row
    would cost more than the query). Given `what` and `asset`, a slice with no such rows is an error that
    names the partition to materialise."""
    columns, order = READ_BACK[table]
    rows = conn.execute(f"""SELECT {columns} FROM {table}
                            WHERE world = ? AND world_version = ? AND scenario = ? AND day = ? ORDER BY {order}""",
                        [where.world, where.world_version, where.scenario, where.day]).fetchall()
    if rows or what is None:
        return rows
    # A slice is replaced whole, so its rows share one version: any row tells which.
    other = conn.execute(f"SELECT world_version FROM {table} WHERE world = ? AND scenario = ? AND day = ? LIMIT 1",
                         [where.world, where.scenario, where.day]).fetchone()
    if other is None:
        raise MissingUpstream(f"no {what} for {where}: materialise that `{asset}` partition first")
    raise MissingUpstream(f"the {what} for {where} were computed from another version of the world file "
                          f"({other[0]}, now {where.world_version}): materialise that `{asset}` partition again")


def stored_store(conn: duckdb.DuckDBPyConnection, where: Slice) -> Store:
    """One partition's pages, graph and extraction log, as the study's store."""
    return Store.from_rows(*_store_rows(conn, where))


def stored_governed_store(conn: duckdb.DuckDBPyConnection, world: World, where: Slice, store: Store) -> GovernedStore:
    """One partition's governed graph; `store` is the same partition's (its extraction log is shared)."""
    return _governed_store(world, _governed_rows(conn, where), store)


def _store_rows(conn: duckdb.DuckDBPyConnection, where: Slice) -> tuple[list[tuple], ...]:
    return (slice_tuples(conn, "pages", where, "pages", "pages"), slice_tuples(conn, "entities", where),
            slice_tuples(conn, "aliases", where), slice_tuples(conn, "facts", where),
            slice_tuples(conn, "extraction_log", where, "graph", "fact_graph"))


def _governed_rows(conn: duckdb.DuckDBPyConnection, where: Slice) -> tuple[list[tuple], list[tuple]]:
    return slice_tuples(conn, "governed_facts", where), slice_tuples(conn, "governed_names", where)


def _governed_store(world: World, rows: tuple[list[tuple], list[tuple]], store: Store) -> GovernedStore:
    return GovernedStore.from_rows(world, rows[0], rows[1], store.versions_read())  # the log is shared


def stored_layer(conn: duckdb.DuckDBPyConnection, world: World, where: Slice) -> KnowledgeLayer:
    """One partition's knowledge layer as stored: its pages, both graphs and the extraction log."""
    store = Store.from_rows(*_store_rows(conn, where))
    return KnowledgeLayer(store, _governed_store(world, _governed_rows(conn, where), store))


def record_timings(conn: duckdb.DuckDBPyConnection, world: World, cost_table: str, run_id: str,
                   timings: Sequence[tuple[str | None, str | None, dict]]) -> None:
    """Append this run's (scenario, day, `CostSample.timing()`) rows for `cost_table`. Call inside the
    `transaction` that writes the costs they time."""
    if not timings:
        return
    conn.executemany(
        """INSERT INTO pass_timings (world, world_version, cost_table, scenario, day, approach, event, ms, run_id,
                                     recorded_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, now()::TIMESTAMP)""",
        [(world.id, world.version, cost_table, scenario, day, t["approach"], t["event"], t["ms"], run_id)
         for scenario, day, t in timings])


def latest_timings(conn: duckdb.DuckDBPyConnection, world: World, cost_tables: Sequence[str]) -> list[dict]:
    """The most recent run's milliseconds for each (approach, event) of `cost_tables`, this world version."""
    return records(conn, """SELECT approach, event, ms FROM pass_timings
                            WHERE world = ? AND world_version = ? AND cost_table IN (SELECT unnest(?))
                            QUALIFY row_number() OVER (PARTITION BY cost_table, approach, event
                                                       ORDER BY recorded_at DESC) = 1""",
                   [world.id, world.version, list(cost_tables)])


def prune_world(conn: duckdb.DuckDBPyConnection, world: str, partitions: Sequence[tuple[str, str]],
                event_days: Sequence[str]) -> int:
    """Delete a world's rows of partitions its world file no longer has (a moved event day, a renamed
    scenario). Call inside `transaction`. Returns the number of rows deleted."""
    conn.register("_keep", pd.DataFrame(list(partitions) or [("", "1970-01-01")], columns=["scenario", "day"]))
    conn.register("_keep_days", pd.DataFrame({"day": list(event_days) or ["1970-01-01"]}))
    deleted = 0
    try:
        for table in VERSIONED:
            held = [{"world": world, "scenario": scenario, "day": day} for scenario, day in conn.execute(
                f"""SELECT DISTINCT scenario, day FROM {versioned.slices_table(table)} t
                    WHERE world = ? AND NOT EXISTS (
                        SELECT 1 FROM _keep k WHERE k.scenario = t.scenario AND k.day::DATE = t.day)""",
                [world]).fetchall()]
            deleted += versioned.delete_slices(conn, table, held)
            versioned.collect_garbage(conn, table)
        for table in (t for t in PARTITION_TABLES if t not in VERSIONED):
            deleted += _one_row(conn.execute(
                f"""DELETE FROM {table} t WHERE world = ? AND NOT EXISTS (
                        SELECT 1 FROM _keep k WHERE k.scenario = t.scenario AND k.day::DATE = t.day)""",
                [world]))[0]
        deleted += _one_row(conn.execute(
            """DELETE FROM maintenance_costs t WHERE world = ?
               AND NOT EXISTS (SELECT 1 FROM _keep_days k WHERE k.day::DATE = t.day)""", [world]))[0]
    finally:
        conn.unregister("_keep")
        conn.unregister("_keep_days")
    return deleted
