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
import os
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


class CallsFileError(ValueError):
    """A calls file that is not one: named so that its failures file could not sit beside it, or a line that
    is not a row. Says which file and line, and what to do."""


def failures_path(calls: Path) -> Path:
    """Where a calls file's unusable calls are kept: `x.jsonl` -> `x.failures.jsonl`."""
    if calls.name.endswith(".failures.jsonl") or not calls.name.endswith(".jsonl"):
        raise CallsFileError(f"{calls}: a calls file is named x.jsonl (its unusable calls go to x.failures.jsonl "
                             "beside it); pass the replies' file, not the failures'")
    return calls.with_name(calls.name.removesuffix(".jsonl") + ".failures.jsonl")


def _rows(path: Path, fields: tuple[str, ...]) -> list[dict]:
    """A JSON-lines file's rows, each an object with at least `fields`; none if the file is missing."""
    if not path.exists():
        return []
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise CallsFileError(f"{path}:{n}: not JSON ({e.msg}); mend or remove that line (the file is written "
                                 "by bench/handbook_study.py --calls; git restores a committed one)") from None
        if not isinstance(row, dict) or any(f not in row for f in fields):
            raise CallsFileError(f"{path}:{n}: not a row with {', '.join(fields)}; mend or remove that line (the "
                                 "file is written by bench/handbook_study.py --calls; git restores a committed one)")
        rows.append(row)
    return rows


_REPLY_FIELDS = ("key", "kind", "model", "content", "input_tokens", "output_tokens", "latency_ms")
_FAILURE_FIELDS = ("key", "model", "reason")


def read_calls_file(calls: Path) -> tuple[dict[str, CacheEntry], dict[str, dict]]:
    """A calls file's replies and its known unusable calls, by key (either file may be missing)."""
    entries = {row["key"]: CacheEntry(**{f: row[f] for f in _REPLY_FIELDS}) for row in _rows(calls, _REPLY_FIELDS)}
    failures = {row["key"]: {f: row[f] for f in _FAILURE_FIELDS}
                for row in _rows(failures_path(calls), _FAILURE_FIELDS) if row["key"] not in entries}
    return entries, failures


def import_calls(conn: duckdb.DuckDBPyConnection, calls: Path) -> tuple[int, int]:
    """Seed the DuckDB file's call cache and known failures from a calls file. What the DuckDB file already
    holds stays as it is (a reply, or a failure with its own reason); a failure it holds that the calls file
    has a reply for is answered. Returns (replies, failures) the calls file holds."""
    entries, failures = read_calls_file(calls)
    cached, known = load_call_cache(conn), load_call_failures(conn)
    save_call_cache(conn, [e for key, e in entries.items() if key not in cached])
    save_call_failures(conn, {key: (row["model"], row["reason"]) for key, row in failures.items()
                              if key not in cached and key not in known}, answered=list(entries))
    return len(entries), len(failures)


def _write_atomically(path: Path, rows: list[dict]) -> None:
    """Write JSON lines to a temporary file and move it into place: an interrupted write (a second Ctrl-C in
    the study's `finally`, a full disk) leaves the old file whole, never a half-written one."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text("".join(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n" for row in rows),
                         encoding="utf-8")
    os.replace(temporary, path)


def export_calls(conn: duckdb.DuckDBPyConnection, calls: Path) -> tuple[int, int]:
    """Write back every chat reply the calls file or the DuckDB file holds, and every call still unusable
    (one answered since is dropped; no failures file when none is), each file sorted by key so that its diff
    shows only what is new. Returns (replies, failures) written."""
    entries, failures = read_calls_file(calls)
    entries.update((e.key, e) for e in load_call_cache(conn).values() if e.kind == "chat")
    failures.update((row["key"], row) for row in load_call_failure_rows(conn))
    failures = {key: row for key, row in failures.items() if key not in entries}
    calls.parent.mkdir(parents=True, exist_ok=True)
    _write_atomically(calls, [vars(entries[k]) for k in sorted(entries)])
    if failures:
        _write_atomically(failures_path(calls), [failures[k] for k in sorted(failures)])
    else:
        failures_path(calls).unlink(missing_ok=True)
    return len(entries), len(failures)
