"""The drift checks' findings do not depend on the order a slice's rows were written in (a day written as its
changes puts its rows in another order than a whole write), nor on how DuckDB would plan a join of two views."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from driftlab_dagster.core import drift
from driftlab_dagster.core.duckdb_file import connect
from driftlab_dagster.core.slice_batch import SliceBatch
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


def test_the_checks_read_each_table_for_the_partition_before_joining_them(tmp_path: Path):
    """A file whose partitions were all written twice (a rerun), 3,000 pages and 3,600 facts a partition, read
    with 16 MB of memory: DuckDB cannot tell how many ids a partition's list holds, and joining the `facts`
    and `pages` views by their partition columns alone pairs every fact with every page of it (10 million
    pairs), out of memory; each read for the partition first, then joined by page, the checks need little."""
    pages_n, facts_n = 3000, 3600
    days = [Slice("w1", "v1", scenario, f"2026-09-0{d}") for scenario in ("Fresh", "StaleGraph") for d in (1, 2)]
    path = str(tmp_path / "rerun.duckdb")
    conn = connect(path)
    ensure_schema(conn)
    for _ in range(2):
        with transaction(conn):
            batch = SliceBatch(conn, ["pages"])
            for step, where in enumerate(days):
                pages = [(f"p{j:05}", "T", f"body {j}", 1 + (j == step), AT, False, "public", None)
                         for j in range(pages_n)]
                batch.add(where, {"pages": (PAGE_COLUMNS[1:], pages)}, constants={"step": step % 2})
            batch.finish()
            batch = SliceBatch(conn, ["facts"])
            for where in days:
                facts = [(j, j, f"E{j}", "price", str(j), f"p{j % pages_n:05}", 1, AT, AT, "rules", "public")
                         for j in range(facts_n)]
                batch.add(where, {"facts": (FACT_COLUMNS, facts)})
            batch.finish()
    conn.close()
    conn = connect(path, config={"memory_limit": "16MB"})
    for step, where in enumerate(days):
        # Page p{step} moved to version 2 on this day: its two facts (j = step and j = step + 3,000) are stale.
        assert [f["source_doc"] for f in drift.superseded_facts(conn, where)] == [f"p{step:05}"] * 2
        assert len(drift.pages_ahead(conn, where)) == pages_n  # no page was read by a graph here
    conn.close()
