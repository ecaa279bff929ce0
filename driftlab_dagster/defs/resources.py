"""Resources, one per external system: the DuckDB warehouse, the model server (Ollama, OpenAI-compatible,
or recorded replies), where reports go, and the progress line of a headless run.

`build_resources(config)` makes them from the one configuration object; the definitions factory binds
them to every world's assets.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
from dagster_duckdb import DuckDBResource
from pydantic import Field

from driftlab_dagster.config import DriftlabConfig
from driftlab_dagster.core.call_cache import Spend
from driftlab_dagster.core.clients import ModelClient, OllamaClient, OpenAICompatibleClient, pooled
from driftlab_dagster.core.duckdb_file import check_database_path, connect, disk_full_in_one_line
from driftlab_dagster.core.progress import Progress
from driftlab_dagster.core.replay import ReplayClient
from driftlab_dagster.core.session import Session, open_session
from driftlab_dagster.core.stored_calls import load_call_cache, load_call_failures, save_call_cache, save_call_failures
from driftlab_dagster.core.warehouse import ensure_schema
from driftlab_dagster.defs.context import StudyContext


class WarehouseResource(DuckDBResource):
    """The study's DuckDB file. Unlike the stock resource, a lock, a missing directory, a file that is not
    DuckDB's or a full disk fails with one line that says what to do (a lock within `lock_timeout_seconds`),
    DuckDB loads no extension on its own, and the connection is always closed."""

    lock_timeout_seconds: float = Field(
        default=10.0, description="How long to wait for another process to release the file before failing."
    )

    @contextmanager
    def get_connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with disk_full_in_one_line(self.database):
            conn = connect(self.database, self.lock_timeout_seconds, self.connection_config)
            try:
                ensure_schema(conn)
                yield conn
            finally:
                conn.close()

    @contextmanager
    def worker_folder(self) -> Iterator[str]:
        """A new folder beside the DuckDB file for worker processes' own files (on its disk: a full disk is
        this file's disk), removed afterwards."""
        check_database_path(self.database)  # a missing folder is one line, as for the file itself
        with disk_full_in_one_line(self.database):
            parent = os.path.dirname(os.path.abspath(self.database))
            with tempfile.TemporaryDirectory(prefix=".driftlab-workers-", dir=parent) as folder:
                yield folder


class ModelResource(dg.ConfigurableResource):
    """The model the study's steps call, as the study settings name it. Subclasses say how it is reached."""

    def client(self) -> ModelClient:
        raise NotImplementedError


class NoModelResource(ModelResource):
    """No model: the settings use the regex extractor and the deterministic reader with BM25, so no step
    calls one (the launchpad offers nothing to configure here). Set `extractor`, `reader` or `retrieval` in
    driftlab.yaml to use a model."""


class ServedModelResource(ModelResource):
    """A chat and embedding model on a server (or recorded replies of one)."""

    model: str = Field(description="Chat model id as the server names it.")
    embed_model: str = Field(description="Embedding model id.")
    timeout: float = Field(default=300.0, description="Seconds one call may take.")


class OllamaResource(ServedModelResource):
    """Ollama's native API through the official `ollama` client."""

    url: str | None = Field(default=None, description="Server URL, or several separated by commas (calls in "
                                                      "flight spread over them); empty: $OLLAMA_HOST, then :11434.")
    api_key: str | None = Field(default=None, description="Bearer key; bound to $OLLAMA_API_KEY when set.")

    def client(self) -> ModelClient:
        return pooled(lambda url: OllamaClient(url, self.model, self.embed_model, self.timeout, api_key=self.api_key),
                      self.url)


class OpenAICompatibleResource(ServedModelResource):
    """An OpenAI-compatible server: LM Studio, llama.cpp's llama-server, vLLM, llama-cpp-python."""

    url: str | None = Field(default=None, description="Server URL, or several separated by commas (calls in "
                                                      "flight spread over them); default http://127.0.0.1:1234.")
    api_key: str | None = Field(default=None, description="Bearer key; bound to $OPENAI_API_KEY when set.")

    def client(self) -> ModelClient:
        return pooled(lambda url: OpenAICompatibleClient(url, self.model, self.embed_model, self.timeout,
                                                         api_key=self.api_key), self.url)


class ReplayResource(ServedModelResource):
    """Recorded replies instead of a server: a call that was not recorded fails as an outcome."""

    replay_file: str = Field(description="JSON lines of {key, content}, as `write_replay_file` records them.")

    def client(self) -> ModelClient:
        return ReplayClient.from_file(self.replay_file, self.model, self.embed_model)


class ReportsResource(dg.ConfigurableResource):
    """Where the report assets write each world's results.csv, costs.csv and accuracy plot."""

    output_dir: str = Field(description="Directory under which each world gets a folder named by its id.")

    def path(self, world_id: str, name: str) -> Path:
        return Path(self.output_dir) / world_id / name


def model_resource(config: DriftlabConfig) -> ModelResource:
    study = config.study
    if not study.uses_model:
        return NoModelResource()
    common: dict[str, Any] = {"model": study.model, "embed_model": study.embed_model, "timeout": study.timeout}
    # Keys are bound, not read: resolved when a run starts, never in the definitions, a log or DuckDB.
    if study.api == "ollama":
        key = dg.EnvVar("OLLAMA_API_KEY") if os.environ.get("OLLAMA_API_KEY") else None
        return OllamaResource(url=study.url, api_key=key, **common)
    if study.api == "openai":
        key = dg.EnvVar("OPENAI_API_KEY") if os.environ.get("OPENAI_API_KEY") else None
        return OpenAICompatibleResource(url=study.url, api_key=key, **common)
    return ReplayResource(replay_file=study.replay_file or "", **common)


def build_resources(config: DriftlabConfig, progress: Progress | None = None) -> dict:
    return {
        "warehouse": WarehouseResource(database=str(config.database), lock_timeout_seconds=config.lock_timeout),
        "model": model_resource(config),
        "report_files": ReportsResource(output_dir=str(config.output_dir)),
        # A live object, not config: the headless command draws its progress line through it.
        "progress": dg.ResourceDefinition.hardcoded_resource(progress or Progress(enabled=False)),
    }


@contextmanager
def study_session(ctx: StudyContext, conn: duckdb.DuckDBPyConnection, model: ModelResource,
                  progress: Progress) -> Iterator[Session]:
    """The run's extractor and reader. Model calls go through the cache stored in the same DuckDB file;
    new replies are saved even when the step fails: they were paid for."""
    uses_model = ctx.settings.uses_model
    session = open_session(ctx.world, ctx.settings, model.client() if uses_model else None,
                           load_call_cache(conn) if uses_model else {}, progress,
                           known_invalid=load_call_failures(conn) if uses_model else set())
    try:
        yield session
    finally:
        save_call_cache(conn, session.new_cache_entries)
        if uses_model:
            save_call_failures(conn, session.new_failures, [e.key for e in session.new_cache_entries])


def spend_mark(session: Session) -> Spend | None:
    """A copy of the session's spend so far, to measure one partition's share against."""
    return replace(session.client.spend) if session.client is not None else None


def spend_metadata(session: Session, since: Spend | None = None) -> dict:
    """What model calls cost (since `since`, if given): calls, cache hit rate, tokens a live system would
    pay and this run paid."""
    if session.client is None:
        return {}
    spend = session.client.spend if since is None else session.client.spend.since(since)
    return {"model_calls": spend.calls, "cache_hit_rate": round(spend.hit_rate, 4),
            "tokens_live": spend.live_input_tokens + spend.live_output_tokens,
            "tokens_spent": spend.spent_input_tokens + spend.spent_output_tokens,
            "model_calls_failed": spend.failed + spend.invalid}
