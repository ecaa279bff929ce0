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
    """Pages whose current version is newer than the version the graph last read (or never read): the rows of
    the view `pages_ahead_of_graph` for the slice."""
    return records(conn, f"""WITH {_one_slice("p", "pages", "page_id, version")},
                                  {_one_slice("x", "extraction_log", "page_id, version")}
                             SELECT p.page_id, p.version AS page_version, x.version AS version_read
                             FROM p LEFT JOIN x USING (page_id)
                             WHERE x.version IS NULL OR x.version < p.version ORDER BY page_id""",
                   _params(where) * 2)


# Two of the versioned tables joined: each read for the slice first (its ids unnested and joined to its row
# versions), then joined by page. Left to itself, DuckDB cannot estimate how many ids a slice's list unnests
# to, and has been seen to join the two slices' ids on the slice's columns before either met its rows: a
# product of 40,000 by 48,000 rows at 40,000 pages, tens of gigabytes.
def _one_slice(name: str, table: str, columns: str) -> str:
    """A CTE of `table`'s `columns` for the slice (its four parameters in `_SCOPE`'s order), read on its own."""
    return f"{name} AS MATERIALIZED (SELECT {columns} FROM {table} WHERE {_SCOPE})"


def pages_ahead_of(store: Store) -> list[dict]:
    """The same as `pages_ahead`, for a graph held in memory."""
    return [{"page_id": pid, "page_version": store.pages[pid].version,
             "version_read": store.extractions[pid].version if pid in store.extractions else None}
            for pid in store.pages_changed_since_extraction()]


def superseded_facts(conn: duckdb.DuckDBPyConnection, where: Slice) -> list[dict]:
    """Facts read from a page version that is no longer the page's current version, ordered by every column: the
    order the rows were written in (a day written as its changes differs from a whole write) never shows."""
    return records(conn, f"""
        WITH {_one_slice("f", "facts", "entity, predicate, object, source_doc, source_version")},
             {_one_slice("p", "pages", "page_id, version")}
        SELECT f.entity, f.predicate, f.object, f.source_doc, f.source_version, p.version AS page_version
        FROM f JOIN p ON p.page_id = f.source_doc
        WHERE p.version > f.source_version
        ORDER BY f.source_doc, f.entity, f.predicate, f.object, f.source_version""", _params(where) * 2)


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
