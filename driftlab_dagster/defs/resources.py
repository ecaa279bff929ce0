"""Resources: the DuckDB warehouse, the world file, where reports go, and the study's extractor and reader."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

import dagster as dg
import duckdb
from dagster_duckdb import DuckDBResource
from pydantic import Field

from driftlab_dagster.core.progress import Progress
from driftlab_dagster.core.session import Session, StudyConfig, open_session
from driftlab_dagster.core.warehouse import connect, ensure_schema, load_call_cache, save_call_cache
from driftlab_dagster.core.world import World, load_world
from driftlab_dagster.defs.settings import STUDY
from driftlab_dagster.project import database_path, world_path
from driftlab_dagster.project import output_dir as default_output_dir


class WarehouseResource(DuckDBResource):
    """The study's DuckDB file. Unlike the stock resource, a lock or a missing directory fails within
    `lock_timeout_seconds` with one line that says what to do, and the connection is always closed."""

    lock_timeout_seconds: float = Field(
        default=10.0, description="How long to wait for another process to release the file before failing."
    )

    @contextmanager
    def get_connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        conn = connect(self.database, self.lock_timeout_seconds, self.connection_config)
        try:
            ensure_schema(conn)
            yield conn
        finally:
            conn.close()


class WorldFileResource(dg.ConfigurableResource):
    """The world file (company, ontology, events, pages, questions, scenarios)."""

    path: str = Field(description="Path of the world YAML file; the partitions are read from the same file.")

    def load(self) -> World:
        return load_world(self.path)


class ReportsResource(dg.ConfigurableResource):
    """Where the report assets write results.csv, costs.csv and the accuracy plot."""

    output_dir: str = Field(description="Directory for results.csv, costs.csv and accuracy.png.")

    def path(self, name: str) -> Path:
        return Path(self.output_dir) / name


class StudyResource(dg.ConfigurableResource):
    """How the knowledge layer is built and read: the extractor that fills the graph, the reader that answers,
    the retrieval, and the local model server behind them. The default (regex extractor, deterministic
    reader, BM25) calls no model."""

    extractor: str = Field(default="regex", description="Graph extractor: 'regex' or 'model'.")
    reader: str = Field(default="deterministic", description="Answer reader: 'deterministic' or 'model'.")
    retrieval: str = Field(default="bm25", description="Page retrieval: 'bm25' or 'embed' (model embeddings).")
    api: str = Field(default="ollama", description="Model API: 'ollama' (native, official client) or 'openai' "
                                                   "(OpenAI-compatible: LM Studio, llama-server, vLLM).")
    url: Optional[str] = Field(default=None, description="Model server URL (ollama: $OLLAMA_HOST or :11434; "
                                                         "openai: http://127.0.0.1:1234).")
    model: str = Field(default="qwen2.5:7b", description="Chat model id as the server names it.")
    embed_model: str = Field(default="nomic-embed-text", description="Embedding model id.")
    extraction_prompt: str = Field(default="few-shot-v1", description="Extraction prompt: 'zero-shot-v1' (the "
                                                                      "post's) or 'few-shot-v1'.")
    timeout_seconds: float = Field(default=300.0, description="Timeout of one model call.")
    progress: bool = Field(default=False, description="Draw a progress line on stderr (the headless command).")

    def config(self) -> StudyConfig:
        return StudyConfig(self.extractor, self.reader, self.retrieval, self.api, self.url, self.model,
                           self.embed_model, self.extraction_prompt, self.timeout_seconds)

    @contextmanager
    def session(self, world: World, conn: duckdb.DuckDBPyConnection) -> Iterator[Session]:
        """A session whose model calls go through the cache stored in the same DuckDB file. New replies are
        saved even when the step fails: they were paid for."""
        config = self.config()
        cache = load_call_cache(conn) if config.uses_model else {}
        session = open_session(world, config, cache, Progress(enabled=self.progress))
        try:
            yield session
        finally:
            save_call_cache(conn, session.new_cache_entries)


def spend_metadata(session: Session) -> dict:
    """What a step's model calls cost: calls, cache hit rate, tokens a live system would pay and this run paid."""
    if session.client is None:
        return {}
    spend = session.client.spend
    return {"model_calls": spend.calls, "cache_hit_rate": round(spend.hit_rate, 4),
            "tokens_live": spend.live_input_tokens + spend.live_output_tokens,
            "tokens_spent": spend.spent_input_tokens + spend.spent_output_tokens}


def default_resources(database: str | None = None, world: str | None = None, output_dir: str | None = None,
                      lock_timeout_seconds: float = 10.0, study: StudyResource | None = None) -> dict:
    return {
        "warehouse": WarehouseResource(database=str(database or database_path()),
                                       lock_timeout_seconds=lock_timeout_seconds),
        "world_file": WorldFileResource(path=str(world or world_path())),
        "reports_dir": ReportsResource(output_dir=str(output_dir or default_output_dir())),
        "study": study or StudyResource(**vars(STUDY)),
    }


@dg.definitions
def resources() -> dg.Definitions:
    # One in-process executor: a run's steps share one process, so a run over many partitions pays
    # Dagster's start-up once, and DuckDB sees one writer.
    return dg.Definitions(resources=default_resources(), executor=dg.in_process_executor)
