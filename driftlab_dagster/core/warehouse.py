"""The DuckDB file that holds the study: one table per asset, each partition a (scenario, day) slice.

Writes are idempotent: a partition's slice of every table it owns is deleted and re-inserted in one
transaction, by column name, with values bound as parameters. A failure rolls the whole partition back,
so no partition is ever half-written and every other partition's rows stay as they were.
"""

from __future__ import annotations

import re
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import duckdb
import pandas as pd

_COST_COLUMNS = """
    approach VARCHAR NOT NULL, event INTEGER NOT NULL, docs INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, graph_writes INTEGER NOT NULL,
    ms INTEGER NOT NULL, estimated BOOLEAN NOT NULL, spent_input_tokens INTEGER NOT NULL,
    spent_output_tokens INTEGER NOT NULL"""

# table -> column definitions. Every partitioned table starts with its partition columns.
TABLES: dict[str, str] = {
    "world": "world_sha256 VARCHAR NOT NULL, company VARCHAR NOT NULL, source VARCHAR NOT NULL, spec_json VARCHAR NOT NULL",
    "pages": """scenario VARCHAR NOT NULL, day DATE NOT NULL, step INTEGER NOT NULL, page_id VARCHAR NOT NULL,
        title VARCHAR NOT NULL, body VARCHAR NOT NULL, version INTEGER NOT NULL, updated_at TIMESTAMP NOT NULL,
        changed BOOLEAN NOT NULL""",
    "entities": "scenario VARCHAR NOT NULL, day DATE NOT NULL, entity_id INTEGER NOT NULL, name VARCHAR NOT NULL",
    "aliases": "scenario VARCHAR NOT NULL, day DATE NOT NULL, alias VARCHAR NOT NULL, entity_id INTEGER NOT NULL",
    "facts": """scenario VARCHAR NOT NULL, day DATE NOT NULL, fact_id INTEGER NOT NULL, entity_id INTEGER NOT NULL,
        entity VARCHAR NOT NULL, predicate VARCHAR NOT NULL, object VARCHAR NOT NULL, source_doc VARCHAR NOT NULL,
        source_version INTEGER NOT NULL, extracted_at TIMESTAMP NOT NULL, valid_from TIMESTAMP NOT NULL,
        extractor VARCHAR NOT NULL""",
    "extraction_log": """scenario VARCHAR NOT NULL, day DATE NOT NULL, page_id VARCHAR NOT NULL,
        version INTEGER NOT NULL, extracted_at TIMESTAMP NOT NULL, extractor VARCHAR NOT NULL, issue VARCHAR NOT NULL""",
    "graph_maintenance": f"scenario VARCHAR NOT NULL, day DATE NOT NULL, {_COST_COLUMNS}",
    # The Governed design's graph: nothing is deleted; rows are retracted and superseded (governed.py).
    "governed_facts": """scenario VARCHAR NOT NULL, day DATE NOT NULL, id INTEGER NOT NULL, entity_id INTEGER NOT NULL,
        entity VARCHAR NOT NULL, predicate VARCHAR NOT NULL, object VARCHAR NOT NULL, source VARCHAR NOT NULL,
        source_version INTEGER NOT NULL, rank INTEGER NOT NULL, extractor VARCHAR NOT NULL,
        valid_from TIMESTAMP NOT NULL, valid_to TIMESTAMP, recorded_at TIMESTAMP NOT NULL, retracted_at TIMESTAMP""",
    "governed_names": """scenario VARCHAR NOT NULL, day DATE NOT NULL, entity_id INTEGER NOT NULL, name VARCHAR NOT NULL,
        valid_from TIMESTAMP NOT NULL, valid_to TIMESTAMP""",
    "answers": """scenario VARCHAR NOT NULL, day DATE NOT NULL, step INTEGER NOT NULL, design VARCHAR NOT NULL,
        question VARCHAR NOT NULL, drifted BOOLEAN NOT NULL, outcome VARCHAR NOT NULL, hedged BOOLEAN NOT NULL,
        answer VARCHAR NOT NULL, expected VARCHAR NOT NULL, why VARCHAR NOT NULL, model_flagged BOOLEAN NOT NULL,
        hedge_phrase BOOLEAN NOT NULL""",
    "maintenance_costs": f"day DATE NOT NULL, {_COST_COLUMNS}, graph_only_accuracy DOUBLE",
    "repair_costs": f"{_COST_COLUMNS}, graph_only_accuracy DOUBLE",
    "page_embeddings": """scenario VARCHAR NOT NULL, day DATE NOT NULL, page_id VARCHAR NOT NULL, version INTEGER NOT NULL,
        model VARCHAR NOT NULL, embedding FLOAT[] NOT NULL""",
    # The content-addressed cache of model calls: what a rerun, a backfill of another scenario over the same
    # page versions, or a replay of earlier days does not pay for again.
    "model_calls": """key VARCHAR PRIMARY KEY, kind VARCHAR NOT NULL, model VARCHAR NOT NULL, content VARCHAR NOT NULL,
        input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, latency_ms DOUBLE NOT NULL""",
}

# The LEFT JOIN that makes patching possible: per partition, pages newer than what the graph last read.
VIEWS = {
    "pages_ahead_of_graph": """
        SELECT p.scenario, p.day, p.page_id, p.version AS page_version, x.version AS version_read
        FROM pages p LEFT JOIN extraction_log x USING (scenario, day, page_id)
        WHERE x.version IS NULL OR x.version < p.version""",
}

_LOCK_HOLDER = re.compile(r"Conflicting lock is held in (.+?) \(PID (\d+)\)")


class WarehouseError(RuntimeError):
    """The DuckDB file cannot be used. The message is one line that says what to do."""


def check_database_path(database: str) -> None:
    if database == ":memory:":
        return
    parent = Path(database).expanduser().resolve().parent
    if not parent.is_dir():
        raise WarehouseError(
            f"DuckDB directory {parent} does not exist: create it (mkdir -p {parent}) or point --database / "
            "the warehouse resource's `database` at a file in an existing directory"
        )


def connect(database: str, lock_timeout_seconds: float = 10.0, config: Mapping[str, Any] | None = None,
            read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open the file, waiting up to `lock_timeout_seconds` for another process to let go of it."""
    check_database_path(database)
    deadline = time.monotonic() + lock_timeout_seconds
    delay = 0.05
    while True:
        try:
            return duckdb.connect(database, read_only=read_only, config=dict(config or {}))
        except duckdb.IOException as e:
            holder = _LOCK_HOLDER.search(str(e))
            if holder is None:
                raise WarehouseError(f"cannot open DuckDB file {database}: {str(e).splitlines()[0]}") from None
            if time.monotonic() >= deadline:
                raise WarehouseError(
                    f"DuckDB file {database} is locked by another process (PID {holder.group(2)}, "
                    f"{Path(holder.group(1)).name}) and stayed locked for {lock_timeout_seconds:g}s: close it "
                    "(a DuckDB shell, a notebook, another run) and retry; nothing was written"
                ) from None
            time.sleep(delay)
            delay = min(delay * 2, 1.0)


def ensure_schema(conn: duckdb.DuckDBPyConnection) -> None:
    existing = {t: [c for (c,) in conn.execute(
        "SELECT column_name FROM duckdb_columns() WHERE table_name = ? AND schema_name = 'main' ORDER BY column_index",
        [t]).fetchall()] for t in TABLES}
    for table, columns in TABLES.items():
        if existing[table] and existing[table] != table_columns(table):
            raise WarehouseError(
                f"table {table} in {conn.execute('PRAGMA database_list').fetchone()[2]} was written by another "
                f"version of DriftLab (columns {existing[table]}); it holds derived data only: move the file "
                "aside or delete it and run again"
            )
        conn.execute(f"CREATE TABLE IF NOT EXISTS {table} ({columns})")
    for view, sql in VIEWS.items():
        conn.execute(f"CREATE OR REPLACE VIEW {view} AS {sql}")


def table_columns(table: str) -> list[str]:
    return [c.strip().split()[0] for c in TABLES[table].replace("\n", " ").split(",")]


@contextmanager
def transaction(conn: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    conn.execute("BEGIN TRANSACTION")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def replace_slice(conn: duckdb.DuckDBPyConnection, table: str, where: Mapping[str, Any], rows: pd.DataFrame) -> int:
    """Delete `table`'s rows matching `where` and insert `rows` by column name. Call inside `transaction`."""
    return replace_slices(conn, table, [where], rows)


def replace_slices(conn: duckdb.DuckDBPyConnection, table: str, wheres: Sequence[Mapping[str, Any]],
                   rows: pd.DataFrame) -> int:
    """Replace several partitions' slices of `table` at once (a run over many partitions): one DELETE per
    slice, then one INSERT ... BY NAME of all their rows. Call inside `transaction`."""
    if table not in TABLES:
        raise KeyError(f"unknown table {table!r}")
    columns = table_columns(table)
    missing = set(columns) - set(rows.columns)
    if missing and len(rows):
        raise ValueError(f"rows for {table} lack columns {sorted(missing)}")
    for names in {tuple(w) for w in wheres}:
        clause = " AND ".join(f"{column} = ?" for column in names) or "TRUE"
        params = [list(w.values()) for w in wheres if tuple(w) == names]
        if names:
            conn.executemany(f"DELETE FROM {table} WHERE {clause}", params)
        else:
            conn.execute(f"DELETE FROM {table}")
    if len(rows):
        conn.register("_incoming", rows[columns])
        try:
            conn.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _incoming")
        finally:
            conn.unregister("_incoming")
    return len(rows)


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


def load_call_cache(conn: duckdb.DuckDBPyConnection) -> dict:
    from .models import CacheEntry

    rows = conn.execute("SELECT key, kind, model, content, input_tokens, output_tokens, latency_ms FROM model_calls").fetchall()
    return {r[0]: CacheEntry(*r) for r in rows}


def save_call_cache(conn: duckdb.DuckDBPyConnection, entries: list) -> int:
    if not entries:
        return 0
    frame = pd.DataFrame([vars(e) for e in entries])
    conn.register("_calls", frame)
    try:
        with transaction(conn):
            conn.execute("INSERT OR IGNORE INTO model_calls BY NAME SELECT * FROM _calls")
    finally:
        conn.unregister("_calls")
    return len(entries)


def stored_world_json(conn: duckdb.DuckDBPyConnection) -> str:
    row = conn.execute("SELECT spec_json FROM world").fetchone()
    if row is None:
        raise MissingUpstream("the world table is empty: materialise the `world` asset first")
    return row[0]


def stored_pages(conn: duckdb.DuckDBPyConnection, scenario: str, day: str) -> list[dict]:
    """The pages of one (scenario, day) partition, as Store.from_snapshot wants them."""
    rows = records(conn, """SELECT page_id AS id, title, body, version, updated_at, changed FROM pages
                            WHERE scenario = ? AND day = ? ORDER BY page_id""", [scenario, day])
    if not rows:
        raise MissingUpstream(f"no pages for {scenario} on {day}: materialise that `pages` partition first")
    return rows


def stored_governed(conn: duckdb.DuckDBPyConnection, scenario: str, day: str) -> dict[str, list[dict]]:
    """The governed graph of one (scenario, day) partition, as GovernedStore.from_snapshot wants it."""
    params = [scenario, day]
    return {
        "facts": records(conn, "SELECT * EXCLUDE (scenario, day, entity) FROM governed_facts "
                               "WHERE scenario = ? AND day = ? ORDER BY id", params),
        "names": records(conn, "SELECT * EXCLUDE (scenario, day) FROM governed_names WHERE scenario = ? AND day = ? "
                               "ORDER BY entity_id, valid_from, name", params),
    }


def stored_graph(conn: duckdb.DuckDBPyConnection, scenario: str, day: str) -> dict[str, list[dict]]:
    """The graph tables of one (scenario, day) partition."""
    where = "WHERE scenario = ? AND day = ?"
    params = [scenario, day]
    snapshot = {
        "entities": records(conn, f"SELECT entity_id, name FROM entities {where} ORDER BY entity_id", params),
        "aliases": records(conn, f"SELECT alias, entity_id FROM aliases {where} ORDER BY alias", params),
        "facts": records(conn, f"""SELECT fact_id, entity_id, predicate, object, source_doc, source_version,
                                   extracted_at, valid_from, extractor FROM facts {where} ORDER BY fact_id""", params),
        "extraction_log": records(conn, f"""SELECT page_id, version, extracted_at, extractor, issue
                                            FROM extraction_log {where} ORDER BY page_id""", params),
    }
    if not snapshot["extraction_log"]:
        raise MissingUpstream(f"no graph for {scenario} on {day}: materialise that `fact_graph` partition first")
    return snapshot
