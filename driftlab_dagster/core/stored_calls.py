"""The model-call cache and the calls known to come back unusable, as the DuckDB file keeps them (tables
`model_calls` and `model_call_failures`): one row per call key. Replies are paid for once, so a step saves
what it fetched even when it fails."""

from __future__ import annotations

import duckdb
import pandas as pd

from .call_cache import CacheEntry
from .warehouse import transaction


def load_call_cache(conn: duckdb.DuckDBPyConnection) -> dict:
    rows = conn.execute("SELECT key, kind, model, content, input_tokens, output_tokens, latency_ms "
                        "FROM model_calls").fetchall()
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


def load_call_failures(conn: duckdb.DuckDBPyConnection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT key FROM model_call_failures").fetchall()}


def save_call_failures(conn: duckdb.DuckDBPyConnection, failures: dict[str, tuple[str, str]],
                       answered: list[str]) -> None:
    """Record this run's unusable replies (key -> (model, reason)) and forget keys answered well since."""
    with transaction(conn):
        for key, (model, reason) in sorted(failures.items()):
            conn.execute("INSERT OR REPLACE INTO model_call_failures VALUES (?, ?, ?)", [key, model, reason[:300]])
        if answered:
            conn.execute("DELETE FROM model_call_failures WHERE key IN (SELECT unnest(?))", [answered])
