"""A calls file: the paid replies and the calls known unusable, carried from one DuckDB file to another."""

from __future__ import annotations

import json
from contextlib import closing

import pytest

from driftlab_dagster.core.call_cache import CachedClient, CacheEntry, call_key
from driftlab_dagster.core.clients import ModelServerDown, ReplyInvalid
from driftlab_dagster.core.duckdb_file import connect
from driftlab_dagster.core.replay import ReplayClient
from driftlab_dagster.core.stored_calls import (
    CallsFileError,
    export_calls,
    failures_path,
    import_calls,
    load_call_cache,
    load_call_failures,
    save_call_cache,
    save_call_failures,
)
from driftlab_dagster.core.warehouse import ensure_schema


def must_be_json(content: str) -> None:
    if not content.startswith("{"):
        raise ValueError("reply is not JSON")


def babbles(system: str, user: str) -> str:
    """The model as the study meets it: most sentences read well, a few never do."""
    return "not json" if user.startswith("hard") else '{"facts": []}'


def database(path) -> closing:
    conn = connect(str(path))
    ensure_schema(conn)
    return closing(conn)


def paid_run(conn, sentences: list[str]) -> CachedClient:
    """One run's calls through the cache, persisted as a step persists them."""
    client = CachedClient(ReplayClient(babbles), known_invalid=load_call_failures(conn),
                          entries=load_call_cache(conn))
    for sentence in sentences:
        try:
            client.chat_json("s", sentence, None, validate=must_be_json)
        except ReplyInvalid:
            pass
    save_call_cache(conn, client.new_entries)
    save_call_failures(conn, client.new_failures, answered=[e.key for e in client.new_entries])
    return client


# Nine sentences the model never reads, each after a sentence it reads: the order a study's first run meets.
SENTENCES = [s for n in range(9) for s in (f"easy {n}", f"hard {n}")]


def test_a_calls_file_carries_replies_and_failures_to_a_new_database_byte_for_byte(tmp_path):
    calls = tmp_path / "calls.jsonl"
    with database(tmp_path / "first.duckdb") as conn:
        paid_run(conn, SENTENCES)
        save_call_cache(conn, [CacheEntry("e1", "embed", "m", "[0.5]", 1, 0, 1.0)])  # embeddings stay behind
        assert export_calls(conn, calls) == (9, 9)
    replies, failures = calls.read_text(), failures_path(calls).read_text()
    assert failures_path(calls).name == "calls.failures.jsonl"

    with database(tmp_path / "second.duckdb") as conn:
        assert import_calls(conn, calls) == (9, 9)
        assert {e.key for e in load_call_cache(conn).values()} == {call_key("replay", "s", f"easy {n}", None)
                                                                   for n in range(9)}
        assert load_call_failures(conn) == {call_key("replay", "s", f"hard {n}", None) for n in range(9)}
        again = tmp_path / "again" / "calls.jsonl"  # a new file: only what the import put in the database
        export_calls(conn, again)
    assert (again.read_text(), failures_path(again).read_text()) == (replies, failures)


def test_a_failure_answered_since_leaves_the_failures_file(tmp_path):
    calls = tmp_path / "calls.jsonl"
    with database(tmp_path / "first.duckdb") as conn:
        paid_run(conn, SENTENCES)
        export_calls(conn, calls)
    with database(tmp_path / "second.duckdb") as conn:
        import_calls(conn, calls)
        fixed = call_key("replay", "s", "hard 0", None)
        save_call_cache(conn, [CacheEntry(fixed, "chat", "replay", "{}", 1, 1, 1.0)])
        save_call_failures(conn, {}, answered=[fixed])
        assert export_calls(conn, calls) == (10, 8)
    assert fixed in calls.read_text() and fixed not in failures_path(calls).read_text()


@pytest.mark.parametrize("failures_kept", [True, False])
def test_a_run_resumed_from_a_calls_file_is_not_stopped_by_its_old_failures(tmp_path, failures_kept):
    """The bug this file fixes: resumed from the replies alone, every new call the run meets until it passes
    the old run's end is an old failure (the replies between them come from the cache, and a cached reply is
    no news about the server), so nine in a row stopped the run as if the server were down."""
    calls = tmp_path / "calls.jsonl"
    with database(tmp_path / "first.duckdb") as conn:
        paid_run(conn, SENTENCES)
        export_calls(conn, calls)
    if not failures_kept:
        failures_path(calls).unlink()
    with database(tmp_path / "second.duckdb") as conn:
        import_calls(conn, calls)
        if failures_kept:
            resumed = paid_run(conn, SENTENCES + ["easy 9"])
            assert resumed.spend.invalid == 9 and len(resumed.new_entries) == 1
        else:
            with pytest.raises(ModelServerDown, match="the last 8 model calls"):
                paid_run(conn, SENTENCES + ["easy 9"])


def test_a_reply_in_the_file_answers_a_failure_the_database_knew(tmp_path):
    calls = tmp_path / "calls.jsonl"
    fixed = call_key("replay", "s", "hard 0", None)
    with database(tmp_path / "first.duckdb") as conn:
        save_call_cache(conn, [CacheEntry(fixed, "chat", "replay", "{}", 1, 1, 1.0)])
        assert export_calls(conn, calls) == (1, 0)
    assert not failures_path(calls).exists()  # no failures, no failures file
    with database(tmp_path / "second.duckdb") as conn:
        paid_run(conn, ["hard 0"])
        assert load_call_failures(conn) == {fixed}
        import_calls(conn, calls)
        assert load_call_failures(conn) == set() and fixed in load_call_cache(conn)


@pytest.mark.parametrize("name, line, message", [
    ("calls.jsonl", "{not json", r"calls.jsonl:2: not JSON"),
    ("calls.jsonl", '{"key": "k"}', r"calls.jsonl:2: not a row with key, kind, model, content"),
    ("calls.jsonl", "[1, 2]", r"calls.jsonl:2: not a row"),
    ("calls.json", "", r"calls.json: a calls file is named x.jsonl"),
    ("calls.failures.jsonl", "", r"pass the replies' file, not the failures'"),
])
def test_a_calls_file_that_is_not_one_says_where(tmp_path, name, line, message):
    good = json.dumps({"key": "a", "kind": "chat", "model": "m", "content": "{}", "input_tokens": 1,
                       "output_tokens": 1, "latency_ms": 1.0})
    calls = tmp_path / name
    calls.write_text(f"{good}\n{line}\n")
    with database(tmp_path / "d.duckdb") as conn, pytest.raises(CallsFileError, match=message):
        import_calls(conn, calls)
