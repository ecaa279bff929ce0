"""Drift as data: what a graph partition's extraction log says about how stale it is. Plain SQL over the
study's DuckDB file; the graph assets evaluate their checks with these, from the rows they just wrote."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

import duckdb

from .store import Store
from .warehouse import Slice, records

_SCOPE = "world = ? AND world_version = ? AND scenario = ? AND day = ?"


def _params(where: Slice) -> list[str]:
    return [where.world, where.world_version, where.scenario, where.day]


def pages_ahead(conn: duckdb.DuckDBPyConnection, where: Slice) -> list[dict]:
    """Pages whose current version is newer than the version the graph last read (or never read)."""
    return records(conn, f"""SELECT page_id, page_version, version_read FROM pages_ahead_of_graph
                             WHERE {_SCOPE} ORDER BY page_id""", _params(where))


def pages_ahead_of(store: Store) -> list[dict]:
    """The same as `pages_ahead`, for a graph held in memory."""
    return [{"page_id": pid, "page_version": store.pages[pid].version,
             "version_read": store.extractions[pid].version if pid in store.extractions else None}
            for pid in store.pages_changed_since_extraction()]


def superseded_facts(conn: duckdb.DuckDBPyConnection, where: Slice) -> list[dict]:
    """Facts read from a page version that is no longer the page's current version, ordered by every column: the
    order the rows were written in (a day written as its changes differs from a whole write) never shows."""
    return records(conn, f"""
        SELECT f.entity, f.predicate, f.object, f.source_doc, f.source_version, p.version AS page_version
        FROM facts f JOIN pages p USING (world, world_version, scenario, day)
        WHERE p.page_id = f.source_doc AND f.{_SCOPE.replace(' AND ', ' AND f.')}
          AND p.version > f.source_version
        ORDER BY f.source_doc, f.entity, f.predicate, f.object, f.source_version""", _params(where))


def spelling_splits(conn: duckdb.DuckDBPyConnection, where: Slice, name_key: Callable[[str], str]) -> list[dict]:
    """Entities that differ only by spelling ("Pro" and "Pro plan"): one thing stored as several nodes.
    `name_key` is the world's naming rule (World.name_key)."""
    names = [r["name"] for r in records(conn, f"SELECT name FROM entities WHERE {_SCOPE} ORDER BY name",
                                        _params(where))]
    return spelling_groups(names, name_key)


def spelling_groups(names: list[str], name_key: Callable[[str], str]) -> list[dict]:
    groups: dict[str, list[str]] = defaultdict(list)
    for name in names:
        groups[name_key(name)].append(name)
    return [{"canonical": key, "spellings": ", ".join(group)}
            for key, group in sorted(groups.items()) if len(group) > 1]
