"""Writing a knowledge layer into DuckDB as the graph asset does, for tests of reading it back."""

from __future__ import annotations

import duckdb
import pandas as pd

from driftlab_dagster.core.layer import KnowledgeLayer
from driftlab_dagster.core.warehouse import Slice, replace_slices, transaction


def write_layer(conn: duckdb.DuckDBPyConnection, where: Slice, step: int, layer: KnowledgeLayer) -> None:
    """One partition's pages, graph, extraction log and governed graph, each table's slice replaced."""
    assert layer.governed is not None
    written, written_governed = layer.store.snapshot(), layer.governed.snapshot()
    tables = {t: pd.DataFrame([{**where.columns, **r} for r in written[t]])
              for t in ("entities", "aliases", "facts", "extraction_log")}
    tables.update({t: pd.DataFrame([{**where.columns, **r} for r in rows]) for t, rows in written_governed.items()})
    tables["pages"] = pd.DataFrame([{**where.columns, "step": step, "page_id": p["id"], "title": p["title"],
                                     "body": p["body"], "version": p["version"], "updated_at": p["updated_at"],
                                     "changed": False, "audience": p["audience"], "renamed_from": None}
                                    for p in written["pages"]])
    with transaction(conn):
        for table, rows in tables.items():
            replace_slices(conn, table, [where.key], rows)
