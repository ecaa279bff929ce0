"""The model-call cache and the calls known to come back unusable, as the DuckDB file keeps them (tables
`model_calls` and `model_call_failures`): one row per call key. Replies are paid for once, so a step saves
what it fetched even when it fails.

A calls file carries both past one DuckDB file (and one machine): the chat replies as JSON lines, a
`model_calls` row each, sorted by key (also a `--api replay --replay-file` file), and beside it, in the same
name with `.failures` before `.jsonl`, the calls still unusable, a `model_call_failures` row each. The
failures travel too because a run resumed from the replies alone meets exactly the old failures as its first
new calls, one after another (every paid reply between them comes from the cache), and would stop on the
failure streak as if the server were down; known, they are asked again without counting against it.
"""

from __future__ import annotations

import json
from pathlib import Path

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


def load_call_failure_rows(conn: duckdb.DuckDBPyConnection) -> list[dict]:
    """Every call known to come back unusable, as a row {key, model, reason}, by key."""
    rows = conn.execute("SELECT key, model, reason FROM model_call_failures ORDER BY key").fetchall()
    return [{"key": key, "model": model, "reason": reason} for key, model, reason in rows]


def failures_path(calls: Path) -> Path:
    """Where a calls file's unusable calls are kept: `x.jsonl` -> `x.failures.jsonl`."""
    return calls.with_name(calls.name.removesuffix(".jsonl") + ".failures.jsonl")


def _json_lines(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def read_calls_file(calls: Path) -> tuple[dict[str, CacheEntry], dict[str, dict]]:
    """A calls file's replies and its known unusable calls, by key (either file may be missing)."""
    entries = {row["key"]: CacheEntry(**row) for row in _json_lines(calls)}
    failures = {row["key"]: row for row in _json_lines(failures_path(calls)) if row["key"] not in entries}
    return entries, failures


def import_calls(conn: duckdb.DuckDBPyConnection, calls: Path) -> tuple[int, int]:
    """Seed the DuckDB file's call cache and known failures from a calls file; a reply the DuckDB file
    already holds stays as it is, and is no failure. Returns (replies, failures) the calls file holds."""
    entries, failures = read_calls_file(calls)
    cached = load_call_cache(conn)
    save_call_cache(conn, [e for key, e in entries.items() if key not in cached])
    save_call_failures(conn, {key: (row["model"], row["reason"]) for key, row in failures.items()
                              if key not in cached}, answered=[])
    return len(entries), len(failures)


def export_calls(conn: duckdb.DuckDBPyConnection, calls: Path) -> tuple[int, int]:
    """Write back every chat reply the calls file or the DuckDB file holds, and every call still unusable
    (one answered since is dropped), each file sorted by key so that its diff shows only what is new.
    Returns (replies, failures) written."""
    entries, failures = read_calls_file(calls)
    entries.update((e.key, e) for e in load_call_cache(conn).values() if e.kind == "chat")
    failures.update((row["key"], row) for row in load_call_failure_rows(conn))
    failures = {key: row for key, row in failures.items() if key not in entries}
    calls.parent.mkdir(parents=True, exist_ok=True)
    for path, rows in ((calls, [vars(entries[k]) for k in sorted(entries)]),
                       (failures_path(calls), [failures[k] for k in sorted(failures)])):
        path.write_text("".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in rows),
                        encoding="utf-8")
    return len(entries), len(failures)
