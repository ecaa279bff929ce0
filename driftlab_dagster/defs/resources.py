"""Resources: the DuckDB warehouse, the world file, where reports go, and the study's extractor and reader."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import dagster as dg
import duckdb
from dagster_duckdb import DuckDBResource
from pydantic import Field

from driftlab_dagster.core.extraction import Extractor, RegexExtractor
from driftlab_dagster.core.readers import DeterministicReader, Reader
from driftlab_dagster.core.warehouse import connect, ensure_schema
from driftlab_dagster.core.world import World, load_world
from driftlab_dagster.project import DEFAULT_DATABASE, DEFAULT_OUTPUT_DIR, world_path


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
    """How the knowledge layer is built and read: the extractor that fills the graph and the reader that
    answers. The deterministic pair (regex extractor, deterministic reader) calls no model."""

    extractor: str = Field(default="regex", description="Graph extractor: 'regex'.")
    reader: str = Field(default="deterministic", description="Answer reader: 'deterministic'.")

    def build_extractor(self, world: World) -> Extractor:
        if self.extractor == "regex":
            return RegexExtractor(world.ontology)
        raise ValueError(f"unknown extractor {self.extractor!r}: use 'regex'")

    def build_reader(self, world: World) -> Reader:
        if self.reader == "deterministic":
            return DeterministicReader(world.ontology)
        raise ValueError(f"unknown reader {self.reader!r}: use 'deterministic'")


def default_resources(database: str | None = None, world: str | None = None, output_dir: str | None = None,
                      lock_timeout_seconds: float = 10.0) -> dict:
    return {
        "warehouse": WarehouseResource(database=str(database or DEFAULT_DATABASE),
                                       lock_timeout_seconds=lock_timeout_seconds),
        "world_file": WorldFileResource(path=str(world or world_path())),
        "reports_dir": ReportsResource(output_dir=str(output_dir or DEFAULT_OUTPUT_DIR)),
        "study": StudyResource(),
    }


@dg.definitions
def resources() -> dg.Definitions:
    # One in-process executor: a run's steps share one process, so a run over many partitions pays
    # Dagster's start-up once, and DuckDB sees one writer.
    return dg.Definitions(resources=default_resources(), executor=dg.in_process_executor)
