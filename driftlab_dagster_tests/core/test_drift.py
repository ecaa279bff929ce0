"""The drift checks' findings do not depend on the order a slice's rows were written in (a day written as its
changes puts its rows in another order than a whole write)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from driftlab_dagster.core import drift
from driftlab_dagster.core.duckdb_file import connect
from driftlab_dagster.core.warehouse import Slice, ensure_schema, replace_slices, slice_frame, transaction

WHERE = Slice("w1", "v1", "StaleGraph", "2026-09-02")
AT = datetime(2026, 9, 1, 9)
FACT_COLUMNS = ("fact_id", "entity_id", "entity", "predicate", "object", "source_doc", "source_version",
                "extracted_at", "valid_from", "extractor", "audience")
PAGE_COLUMNS = ("step", "page_id", "title", "body", "version", "updated_at", "changed", "audience", "renamed_from")

# Two facts of one page version, same entity and relation, different values; the page has moved on since.
FACTS = [(1, 1, "Pro plan", "price", "$10", "pricing", 1, AT, AT, "rules", "public"),
         (2, 1, "Pro plan", "price", "$12", "pricing", 1, AT, AT, "rules", "public")]
PAGES = [(1, "pricing", "Pricing", "Pro costs $14.", 2, AT, True, "public", None)]


def _findings(path: Path, facts: list[tuple]) -> list[dict]:
    conn = connect(str(path))
    ensure_schema(conn)
    with transaction(conn):
        replace_slices(conn, "facts", [WHERE.key], slice_frame(WHERE.columns, FACT_COLUMNS, facts))
        replace_slices(conn, "pages", [WHERE.key], slice_frame(WHERE.columns, PAGE_COLUMNS, PAGES))
    found = drift.superseded_facts(conn, WHERE)
    conn.close()
    return found


def test_superseded_facts_come_in_one_order_whatever_order_they_were_written_in(tmp_path: Path):
    written = _findings(tmp_path / "a.duckdb", FACTS)
    assert [f["object"] for f in written] == ["$10", "$12"]
    assert _findings(tmp_path / "b.duckdb", FACTS[::-1]) == written
