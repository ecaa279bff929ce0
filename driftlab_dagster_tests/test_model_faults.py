"""Faults of the model server are outcomes, never poison: the headless command against a loopback server
that misbehaves on purpose (poisoned, truncated, HTML, empty, huge, slow, 500 and dropped replies; embeddings
of different lengths or HTTP 500 through both APIs; HTML for its list of models). After each, the run ends with a
clear line, the call cache holds no unusable reply, and a rerun against a
healthy server completes. The command runs in this process (its `main`, as the console script calls it),
with the real `openai` client, a real Dagster run and a real DuckDB file; one test runs it as a separate
process, for the exit code a shell sees."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass

import duckdb
import pytest

from driftlab_dagster import cli
from driftlab_dagster.core import clients
from driftlab_dagster.core.replies import (
    UnreadableReply,
    validate_answer_reply,
    validate_plain_answer,
    validate_relation_reply,
)
from driftlab_dagster.core.world.loader import load_world
from driftlab_dagster.loopback_server import LoopbackModelServer
from driftlab_dagster.project import DEFAULT_WORLD, PROJECT_ROOT

pytestmark = pytest.mark.dagster

SLICE = ["--scenario", "Fresh", "--until", "2026-09-08"]


@dataclass
class Done:
    """What a run of the command left: its exit code and what it printed."""

    returncode: int
    stdout: str
    stderr: str


def _argv(url: str, database, out, *extra: str) -> list[str]:
    return ["run", "--extractor", "model", "--reader", "model", "--api", "openai", "--url", url, "--model",
            "fake-model", "--timeout", "1", "--database", str(database), "--out", str(out), *SLICE, *extra]


@pytest.fixture
def run_command(capsys, monkeypatch):
    """Runs `driftlab run ...` in this process against the given server, with the environment a user's shell
    would have (no DAGSTER_HOME, no settings overrides); the process's own garbage-collector pacing is left
    alone (the command paces the process it owns)."""
    for name in ("DAGSTER_HOME", "DRIFTLAB_WORLD", "DRIFTLAB_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(cli, "pace_for_batch", lambda: None)
    monkeypatch.setattr(clients, "BACKOFF_SECONDS", 0.01)  # the retries are the same; only their waits shrink

    def run(url: str, database, out, *extra: str) -> Done:
        capsys.readouterr()
        code = cli.main(_argv(url, database, out, *extra))
        printed = capsys.readouterr()
        return Done(code, printed.out, printed.err)

    return run


def _cached_replies_are_all_usable(database) -> int:
    with duckdb.connect(str(database), read_only=True) as conn:
        contents = [c for (c,) in conn.execute("SELECT content FROM model_calls WHERE kind = 'chat'").fetchall()]
    for content in contents:
        if not content.lstrip().startswith("{"):
            validate_plain_answer(content)  # the reader's plain-text reply; raises if it is unusable
            continue
        try:
            validate_relation_reply(content)
        except UnreadableReply:
            validate_answer_reply(content)  # raises if the cache kept something unusable
    return len(contents)


@pytest.fixture(scope="module")
def ontology():
    return load_world(DEFAULT_WORLD).ontology


@pytest.mark.parametrize("mode, complaint", [
    ("poisoned", "reply nested more than 16 deep"),
    ("truncated", "reply is not JSON"),
    ("html", "reply has no choices"),  # the client cannot read an HTML page as a completion
    ("empty", "reply has no choices"),
    ("huge", "reply of 10,000,"),
    ("error500", "HTTP 500"),
])
def test_a_server_that_keeps_failing_stops_the_run_in_one_line_and_poisons_nothing(ontology, tmp_path, mode,
                                                                                   complaint, run_command):
    database = tmp_path / "d.duckdb"
    with LoopbackModelServer(ontology, mode) as server:
        done = run_command(server.url, database, tmp_path)
        requests = server.chat_requests
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "model calls to" in done.stderr and complaint in done.stderr
    # It stopped: a streak of 8 failed calls, each tried once in two reply formats the server may reject and
    # at most 3 times in the plain one.
    assert requests <= 8 * (2 + 3)
    assert _cached_replies_are_all_usable(database) == 0

    with LoopbackModelServer(ontology, "healthy") as healthy:
        rerun = run_command(healthy.url, database, tmp_path)
    assert rerun.returncode == 0, rerun.stderr
    assert _cached_replies_are_all_usable(database) > 0
    with duckdb.connect(str(database), read_only=True) as conn:
        assert conn.execute("SELECT count(*) FROM answers").fetchone()[0] == 200


@pytest.mark.parametrize("mode", ["slow", "dropped"])
def test_a_slow_reply_or_a_dropped_connection_is_retried_and_the_run_completes(ontology, tmp_path, mode, run_command):
    with LoopbackModelServer(ontology, mode) as server:
        done = run_command(server.url, tmp_path / "d.duckdb", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1].startswith("model calls: ")
    assert ", 0 failed or came back unusable" in done.stdout
    assert _cached_replies_are_all_usable(tmp_path / "d.duckdb") > 0


def test_a_run_with_too_many_unusable_replies_says_so_last_and_exits_non_zero(ontology, tmp_path, run_command):
    with LoopbackModelServer(ontology, "flaky") as server:
        done = run_command(server.url, tmp_path / "d.duckdb", tmp_path)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert "failed or came back unusable" in last and "--max-failed-share 0.02" in last
    assert _cached_replies_are_all_usable(tmp_path / "d.duckdb") > 0
    with LoopbackModelServer(ontology, "flaky") as server:  # a threshold the user chose lets it pass
        done = run_command(server.url, tmp_path / "d2.duckdb", tmp_path, "--max-failed-share", "0.5")
    assert done.returncode == 0, done.stderr


def test_credentials_come_from_the_environment_and_never_reach_a_log_or_the_database(ontology, tmp_path, run_command,
                                                                                    monkeypatch):
    with LoopbackModelServer(ontology, "healthy") as server:
        with monkeypatch.context() as env:
            env.setenv("OPENAI_API_KEY", "sk-test-123456")
            with_key = run_command(server.url, tmp_path / "d.duckdb", tmp_path)
        sent = set(server.authorizations)
        # A password in the URL (basic auth through a proxy) is used, and never printed.
        with_password = run_command(server.url.replace("http://", "http://reader:s3cret-pass@"),
                                    tmp_path / "d2.duckdb", tmp_path)
    assert with_key.returncode == 0 and with_password.returncode == 0, with_key.stderr + with_password.stderr
    assert sent == {"Bearer sk-test-123456"}  # bound from $OPENAI_API_KEY when the run started
    printed = with_key.stdout + with_key.stderr + with_password.stdout + with_password.stderr
    assert "s3cret-pass" not in printed and "sk-test-123456" not in printed
    assert "***@127.0.0.1" in with_password.stdout
    for database in (tmp_path / "d.duckdb", tmp_path / "d2.duckdb"):
        dump = database.read_bytes()
        assert b"s3cret-pass" not in dump and b"sk-test-123456" not in dump


@pytest.mark.system
def test_as_a_separate_process_a_failing_server_exits_2_with_one_line(ontology, tmp_path):
    """The exit code and the one line a shell (or a scheduler) sees, from the command as its own process."""
    env = {k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", "DRIFTLAB_WORLD", "DRIFTLAB_CONFIG")}
    with LoopbackModelServer(ontology, "poisoned") as server:
        done = subprocess.run([sys.executable, "-m", "driftlab_dagster", *_argv(server.url, tmp_path / "d.duckdb",
                                                                                  tmp_path)],
                              capture_output=True, text=True, cwd=PROJECT_ROOT, env=env, timeout=600)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "reply nested more than 16 deep" in done.stderr
    assert _cached_replies_are_all_usable(tmp_path / "d.duckdb") == 0


@pytest.mark.parametrize("api", ["openai", "ollama"])
@pytest.mark.parametrize("mode, complaint", [
    ("embed_ragged", "embeddings of different lengths"),
    ("embed_error500", "HTTP 500"),
])
def test_embeddings_that_fail_stop_the_run_in_one_line_naming_the_server_and_the_model(ontology, tmp_path, api, mode,
                                                                                     complaint, run_command):
    """Issue 21, items 1-3: `ReplyInvalid: embeddings of different lengths` and `ModelCallFailed ... (after 3
    attempts)` escaped from the `answers` asset as tracebacks (retrieval cannot go on without embeddings)."""
    from driftlab_dagster.loopback_server import EMBED_MODEL

    with LoopbackModelServer(ontology, mode) as server:
        done = run_command(server.url, tmp_path / "d.duckdb", tmp_path, "--extractor", "regex", "--reader",
                           "deterministic", "--retrieval", "embed", "--api", api, "--embed-model", EMBED_MODEL)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert f"embeddings from {api} server {server.url} (embedding model '{EMBED_MODEL}') failed" in done.stderr
    assert complaint in done.stderr and "--embed-model" in done.stderr

    with LoopbackModelServer(ontology, "healthy") as healthy:  # the same run against a healthy server completes
        rerun = run_command(healthy.url, tmp_path / "d.duckdb", tmp_path, "--extractor", "regex", "--reader",
                            "deterministic", "--retrieval", "embed", "--api", api, "--embed-model", EMBED_MODEL)
    assert rerun.returncode == 0, rerun.stderr


def test_a_server_that_answers_html_for_its_list_of_models_is_named_as_not_openai_compatible(ontology, tmp_path,
                                                                                            run_command):
    """Issue 21, item 15: it said "unreadable reply (AttributeError: 'str' object has no attribute
    '_set_private_attributes')"."""
    with LoopbackModelServer(ontology, "html_models") as server:
        done = run_command(server.url, tmp_path / "d.duckdb", tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert f"the server at {server.url} answered {server.url}/v1/models with HTML" in done.stderr
    assert "is it an OpenAI-compatible server?" in done.stderr and "AttributeError" not in done.stderr


def test_a_call_that_keeps_the_run_waiting_is_said_without_progress(ontology, tmp_path, run_command, monkeypatch):
    """Issue 21, item 19: a server answering every call after 30 s kept the run silent for minutes without
    --progress. Here the first replies take 0.9 s and the notice threshold is lowered to 0.3 s."""
    from driftlab_dagster.core import progress

    monkeypatch.setattr(progress, "WAIT_NOTICE_SECONDS", 0.3)
    with LoopbackModelServer(ontology, "sluggish", delay=0.9) as server:
        done = run_command(server.url, tmp_path / "d.duckdb", tmp_path, "--extractor", "regex")
    assert done.returncode == 0, done.stderr
    notices = [line for line in done.stderr.splitlines() if line.startswith("still waiting for ")]
    assert notices and notices[0].startswith(f"still waiting for {server.url} (model fake-model), call 1, ")
    assert notices[0].endswith(" s") and len(notices) <= 2 * 3 + 2  # each slow call said at 0.3 s and 0.6 s
    assert "Traceback" not in done.stderr
