"""Drift as data: what a graph partition's extraction log says about how stale it is. Plain SQL over the
study's DuckDB file; the Dagster asset checks are thin over these."""

from __future__ import annotations

from collections import defaultdict
from typing import Callable

import duckdb

from .warehouse import records


def pages_ahead(conn: duckdb.DuckDBPyConnection, scenario: str, day: str) -> list[dict]:
    """Pages whose current version is newer than the version the graph last read (or never read)."""
    return records(conn, """SELECT page_id, page_version, version_read FROM pages_ahead_of_graph
                            WHERE scenario = ? AND day = ? ORDER BY page_id""", [scenario, day])


def superseded_facts(conn: duckdb.DuckDBPyConnection, scenario: str, day: str) -> list[dict]:
    """Facts read from a page version that is no longer the page's current version."""
    return records(conn, """
        SELECT f.entity, f.predicate, f.object, f.source_doc, f.source_version, p.version AS page_version
        FROM facts f JOIN pages p ON p.scenario = f.scenario AND p.day = f.day AND p.page_id = f.source_doc
        WHERE f.scenario = ? AND f.day = ? AND p.version > f.source_version
        ORDER BY f.source_doc, f.entity, f.predicate""", [scenario, day])


def spelling_splits(conn: duckdb.DuckDBPyConnection, scenario: str, day: str,
                    name_key: Callable[[str], str]) -> list[dict]:
    """Entities that differ only by spelling ("Pro" and "Pro plan"): one thing stored as several nodes.
    `name_key` is the world's naming rule (World.name_key)."""
    names = [r["name"] for r in records(conn, "SELECT name FROM entities WHERE scenario = ? AND day = ? ORDER BY name",
                                        [scenario, day])]
    groups: dict[str, list[str]] = defaultdict(list)
    for name in names:
        groups[name_key(name)].append(name)
    return [{"canonical": key, "spellings": ", ".join(group)} for key, group in sorted(groups.items()) if len(group) > 1]
