"""A scenario's rows, day after day, as a step writes them: each day's rows name the keys that may differ
from the day before's, so that the batch writing them (`slice_batch.SliceBatch`, which writes a later day as
its changes from the day before) compares those keys only, not every row of every partition.

Graph rows (`DayRows`). At 40,000 pages a day is some 160,000 graph rows, of which a few hundred change, and
the layer's facts and log entries are frozen objects that stay in the layer while unchanged. So a row whose
object (and, for a fact, the entity name it carries) is the one the day before's row was built from is that
row again, the very tuple: a day costs only its changed rows to build, and those are the keys it names. The
rows are those `Store.rows` and `GovernedStore.rows` give, in their order (tested for every day of every
scenario).

Page rows (`PageRows`) are built afresh each day (a page's row is a few attribute reads) and name the pages
the history touched since the day before: changed, moved or gone, and those whose flags may have dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from operator import attrgetter
from typing import Any

from .governed import GovernedStore
from .layer import KnowledgeLayer
from .slice_batch import KeyedRows, Rows
from .store import Store, StoredPage

# The pages table's own columns (beside the slice's and its day's step), in the order PageRows gives them.
PAGE_COLUMNS = ("page_id", "title", "body", "version", "updated_at", "changed", "audience", "renamed_from")

# A governed fact's row is its fields and its entity's current name (GovernedStore.ROW_COLUMNS).
_GOVERNED_FACT_VALUES = attrgetter(*GovernedStore.ROW_COLUMNS["governed_facts"][:-1])
_NAME_VALUES = attrgetter(*GovernedStore.ROW_COLUMNS["governed_names"])


class DayRows:
    """One scenario's graph tables, asked day after day of one replay (the same layer, changed in place)."""

    def __init__(self) -> None:
        # table -> (the objects the rows were built from, the rows), both by key (warehouse.ROW_KEYS)
        self._before: dict[str, tuple[dict[Any, Any], dict[Any, tuple]]] = {}

    def tables(self, layer: KnowledgeLayer) -> dict[str, Rows]:
        """The layer's six graph tables: entities, aliases and governed names as lists, facts, log entries and
        governed facts by key in key order."""
        store, governed = layer.store, layer.governed
        assert governed is not None, "a replayed layer always holds its governed graph"
        tables: dict[str, Rows] = {t: (Store.ROW_COLUMNS[t], rows)
                                        for t, rows in store.rows(("entities", "aliases")).items()}
        names = store.entities
        tables["facts"] = (Store.ROW_COLUMNS["facts"], self._rows(
            "facts", store.facts, store.fact_row, lambda fact, row: row[2] is names[fact.entity_id]))
        tables["extraction_log"] = (Store.ROW_COLUMNS["extraction_log"], self._rows(
            "extraction_log", store.extractions, Store.log_row, None))
        current = {entity_id: governed.current_name(entity_id)
                   for entity_id in {f.entity_id for f in governed.facts.values()}}
        tables["governed_facts"] = (GovernedStore.ROW_COLUMNS["governed_facts"], self._rows(
            "governed_facts", governed.facts, lambda fact: (*_GOVERNED_FACT_VALUES(fact), current[fact.entity_id]),
            lambda fact, row: row[-1] == current[fact.entity_id]))
        tables["governed_names"] = (GovernedStore.ROW_COLUMNS["governed_names"],
                                    [_NAME_VALUES(name) for name in governed.names])
        return tables

    def _rows(self, table: str, objects: dict[Any, Any], build: Callable[[Any], tuple],
              still: Callable[[Any, tuple], bool] | None) -> KeyedRows:
        """`objects`' rows by key in key order: the day before's row where the object is the same (and
        `still(object, row)` holds), else built. They name the day before's rows and the keys built or gone,
        so that the batch writing them compares only those."""
        before = self._before.get(table)
        before_objects, before_rows = before or ({}, {})
        rows, built, added = {}, [], 0
        for key, obj in sorted(objects.items()):
            row = before_rows.get(key)
            if row is None or before_objects[key] is not obj or (still is not None and not still(obj, row)):
                row = build(obj)
                built.append(key)
                added += key not in before_rows
            rows[key] = row
        # Keys kept = rows - added; whatever else the day before held is gone (a set difference only then).
        gone = list(before_rows.keys() - rows.keys()) if len(before_rows) != len(rows) - added else []
        keyed = KeyedRows(rows, since=before_rows if before else None, touched=built + gone)
        self._before[table] = (dict(objects), keyed)
        return keyed


class PageRows:
    """One scenario's pages table on the days a step writes, as its history is rendered step by step: call
    `step` after every step's sync (asked for or not) and `rows` on each day asked for."""

    def __init__(self) -> None:
        self._before: KeyedRows | None = None
        self._touched: set[str] = set()  # ids changed, new or moved (either id) since the rows before
        self._flagged: set[str] = set()  # ids whose row before carries a flag: changed, or renamed_from

    def step(self, changed: Iterable[str], renames: Mapping[str, str]) -> None:
        """A step's sync: the ids it reported new or changed, and its renames (old id -> new)."""
        self._touched.update(changed, renames, renames.values())

    def rows(self, pages: Iterable[StoredPage], changed: set[str], moved_from: Mapping[str, str]) -> KeyedRows:
        """The day's rows by page id, in id order: `pages` as the store holds them (in id order), flagged
        `changed` and `renamed_from` as this day's step reported."""
        rows = {p.id: (p.id, p.title, p.body, p.version, p.updated_at, p.id in changed, p.audience,
                       moved_from.get(p.id)) for p in pages}
        before = self._before
        touched = self._touched | self._flagged
        if before is not None:
            touched.update(before.keys() - rows.keys())  # deleted since: a sync names no page it drops
        keyed = KeyedRows(rows, since=before, touched=list(touched) if before is not None else [])
        self._before, self._touched = keyed, set()
        self._flagged = set(changed) | set(moved_from)
        return keyed
