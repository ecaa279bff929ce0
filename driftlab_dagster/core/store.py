"""The versioned store: pages with versions, entities with aliases, facts with provenance, extraction log.

The study's hot loop (hundreds of maintenance steps and thousands of look-ups) runs against this in-memory
store; `warehouse.py` persists its `rows()` into DuckDB, one slice per (scenario, day) partition, and
`from_rows` loads them back. The semantics follow the seed post's SQLite store exactly, down to how a
new row id is chosen (max + 1, so ids restart after the graph is cleared), because the majority-vote merge
breaks ties on the newest fact id.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from operator import attrgetter
from typing import Any, TypeVar, cast

from .ontology import Triple


@dataclass(frozen=True)
class StoredPage:
    """One page's current text and version: the version bumps whenever the text (or who may read it)
    changes."""

    id: str
    title: str
    body: str
    version: int
    updated_at: dt.datetime
    audience: str = "public"  # who may read it: retrieval and graph look-ups filter on it


@dataclass(frozen=True)
class Fact:
    """One claim in the graph, with where and when it came from."""

    id: int
    entity_id: int
    predicate: str
    object: str
    source_doc: str  # the page id, or "record:..." for a system-of-record patch
    source_version: int  # which version of that page
    extracted_at: dt.datetime  # when the graph read it
    valid_from: dt.datetime  # when the world says it became true (the page's updated_at)
    extractor: str = ""  # which extractor (kind, model, prompt version) wrote it; "" for a record patch
    audience: str = "public"  # the audience of the page it came from: who may be told it


@dataclass(frozen=True)
class ExtractionEntry:
    """Which version of a page the graph last read, and when."""

    page_id: str
    version: int
    extracted_at: dt.datetime
    extractor: str = ""
    issue: str = ""  # why the extractor dropped some or all of the page's facts


class Store:
    """Pages, entity graph and extraction log for one scenario's knowledge layer: the post's graph, where a
    page's new reading replaces what it said, and a rebuild starts from nothing. It implements the graph
    contract (layer.GraphBackend); its graph keeps no time, so the `when` and `at` it is handed where only
    the governed graph needs them are ignored."""

    def __init__(self) -> None:
        self.pages: dict[str, StoredPage] = {}
        self.entities: dict[int, str] = {}
        self.aliases: dict[str, tuple[str, int]] = {}  # casefolded alias -> (alias as written, entity id)
        self.facts: dict[int, Fact] = {}
        self.extractions: dict[str, ExtractionEntry] = {}
        self.graph_writes = 0  # every insert, update or delete on entities, aliases or facts
        self._entity_by_name: dict[str, int] = {}
        # Indexes, so that a patch and a look-up cost what they touch, not the size of the graph. New ids
        # are still max + 1 of what exists (see the module docstring): the maxima are kept, not counted.
        self._facts_by_source: dict[str, set[int]] = {}
        self._facts_by_slot: dict[tuple[int, str], set[int]] = {}
        self._max_fact_id = 0
        self._max_entity_id = 0

    # ---------- pages ----------
    def upsert_page(self, page_id: str, title: str, body: str, at: dt.datetime, audience: str = "public") -> bool:
        """Store a page's text; True when the page is new or its text changed (its version bumps)."""
        old = self.pages.get(page_id)
        if old is None:
            self.pages[page_id] = StoredPage(page_id, title, body, 1, at, audience)
            return True
        if old.body == body and old.audience == audience:
            return False
        self.pages[page_id] = replace(old, title=title, body=body, version=old.version + 1, updated_at=at,
                                      audience=audience)
        return True

    def rename_page(self, old_id: str, new_id: str) -> None:
        """A page moved (a rename in git): the same page under a new id. Its facts and the version the graph
        read move with it, so it is read again only if its text changed too."""
        page = self.pages.pop(old_id, None)
        if page is None or new_id in self.pages:
            return
        self.pages[new_id] = replace(page, id=new_id)
        if old_id in self.extractions:
            self.extractions[new_id] = replace(self.extractions.pop(old_id), page_id=new_id)
            moved = [self.facts[i] for i in sorted(self._facts_by_source.get(old_id, ()))]
            for f in moved:
                self._put(replace(f, source_doc=new_id))
            self.graph_writes += len(moved)

    def delete_page(self, page_id: str) -> None:
        """A page removed from the wiki. The graph still holds what it said until a patch drops it (it shows
        among the pages changed since extraction)."""
        self.pages.pop(page_id, None)

    def forget_page(self, page_id: str, at: dt.datetime | None = None) -> None:
        """Drop a deleted page's facts and its line of the extraction log."""
        self._delete_facts(self._facts_by_source.get(page_id, ()))
        self.extractions.pop(page_id, None)

    def sorted_pages(self, ids: Iterable[str] | None = None) -> list[StoredPage]:
        wanted = None if ids is None else set(ids)
        return [p for pid, p in sorted(self.pages.items()) if wanted is None or pid in wanted]

    def pages_changed_since_extraction(self) -> list[str]:
        """Pages whose version is newer than the one the graph last read, or never read, and pages the graph
        read that no longer exist: the LEFT JOIN of pages on the extraction log, both ways. This is the
        change log that makes patching possible at all."""
        changed = [pid for pid, page in self.pages.items()
                   if (seen := self.extractions.get(pid)) is None or seen.version < page.version]
        deleted = [pid for pid in self.extractions if pid not in self.pages]
        return sorted(changed + deleted)

    # ---------- entities ----------
    def resolve(self, name: str) -> int | None:
        """An entity by name, then by alias; case-insensitive."""
        key = name.strip().casefold()
        if key in self._entity_by_name:
            return self._entity_by_name[key]
        alias = self.aliases.get(key)
        return alias[1] if alias else None

    def ensure_entity(self, name: str) -> int:
        existing = self.resolve(name)
        if existing is not None:
            return existing
        new_id = self._max_entity_id + 1
        self._max_entity_id = new_id
        self.entities[new_id] = name.strip()
        self._entity_by_name[name.strip().casefold()] = new_id
        self.graph_writes += 1
        return new_id

    def entity_name(self, entity_id: int) -> str:
        return self.entities[entity_id]

    def aliases_of(self, entity_id: int) -> list[str]:
        # ORDER BY alias under NOCASE collation
        return sorted((a for a, eid in self.aliases.values() if eid == entity_id), key=str.casefold)

    def _rename_entity(self, entity_id: int, name: str) -> None:
        old = self.entities[entity_id]
        del self._entity_by_name[old.casefold()]
        self.entities[entity_id] = name
        self._entity_by_name[name.casefold()] = entity_id
        self.graph_writes += 1

    def apply_rename(self, new_name: str, old_name: str, when: dt.datetime | None = None) -> None:
        """"new was formerly called old": rename in place, keep the old name as an alias, and merge if
        extraction already created a separate node for the new name."""
        old_id, new_id = self.resolve(old_name), self.resolve(new_name)
        if old_id is None and new_id is None:
            new_id = self.ensure_entity(new_name)
        elif old_id is not None and new_id is None:
            self._rename_entity(old_id, new_name)
            new_id = old_id
        elif old_id is not None and new_id is not None and old_id != new_id:
            moved = [f for f in self.facts.values() if f.entity_id == new_id]  # rare: one per rename
            for f in moved:
                self._put(replace(f, entity_id=old_id))
            self.graph_writes += max(len(moved), 1)
            moved_aliases = [k for k, (_, eid) in self.aliases.items() if eid == new_id]
            for k in moved_aliases:
                self.aliases[k] = (self.aliases[k][0], old_id)
            self.graph_writes += max(len(moved_aliases), 1)
            dropped = self.entities.pop(new_id)
            self._max_entity_id = max(self.entities, default=0)
            del self._entity_by_name[dropped.casefold()]
            self.graph_writes += 1
            self._rename_entity(old_id, new_name)
            new_id = old_id
        if old_name.casefold() != new_name.casefold():
            # INSERT OR IGNORE: counts as a write whether or not the alias was new
            # every branch above leaves new_id set
            self.aliases.setdefault(old_name.strip().casefold(), (old_name.strip(), cast(int, new_id)))
            self.graph_writes += 1

    # ---------- facts ----------
    def _insert_fact(self, entity_id: int, predicate: str, obj: str, source: str, version: int,
                     extracted_at: dt.datetime, valid_from: dt.datetime, extractor: str = "",
                     audience: str = "public") -> None:
        fact_id = self._max_fact_id + 1
        self._put(Fact(fact_id, entity_id, predicate, obj, source, version, extracted_at, valid_from, extractor,
                       audience))
        self.graph_writes += 1

    def _put(self, fact: Fact) -> None:
        """Insert or replace one fact, keeping the indexes true."""
        old = self.facts.get(fact.id)
        if old is not None:
            self._unindex(old)
        self.facts[fact.id] = fact
        self._facts_by_source.setdefault(fact.source_doc, set()).add(fact.id)
        self._facts_by_slot.setdefault(slot_of(fact), set()).add(fact.id)
        self._max_fact_id = max(self._max_fact_id, fact.id)

    def _unindex(self, fact: Fact) -> None:
        _discard(self._facts_by_source, fact.source_doc, fact.id)
        _discard(self._facts_by_slot, slot_of(fact), fact.id)

    def _delete_facts(self, fact_ids: Iterable[int]) -> None:
        """Delete these facts; like the post's DELETE, it counts as one write even when nothing matched."""
        doomed = sorted(fact_ids)
        for fid in doomed:
            self._unindex(self.facts.pop(fid))
        if self._max_fact_id in doomed:
            self._max_fact_id = max(self.facts, default=0)
        self.graph_writes += max(len(doomed), 1)

    def apply_page(self, page: StoredPage, triples: Iterable[Triple], extracted_at: dt.datetime, extractor: str = "",
                   issue: str = "") -> None:
        """Delete what this page contributed, store what it says now (renames excluded: they come through
        `apply_rename`), and log the version read."""
        self._delete_facts(self._facts_by_source.get(page.id, ()))
        for t in triples:
            entity_id = self.ensure_entity(t.subject)
            self._insert_fact(entity_id, t.predicate, t.object.strip(), page.id, page.version, extracted_at,
                              page.updated_at, extractor, page.audience)
        self.extractions[page.id] = ExtractionEntry(page.id, page.version, extracted_at, extractor, issue)

    def apply_record(self, entity: str, predicate: str, obj: str, source: str, at: dt.datetime) -> None:
        """System-of-record patch: the new value supersedes every extracted value for that slot."""
        entity_id = self.ensure_entity(entity)
        self._delete_facts(self._facts_by_slot.get((entity_id, predicate), ()))
        self._insert_fact(entity_id, predicate, obj, source, 1, at, at)

    def facts_about(self, entity_id: int, predicate: str) -> list[Fact]:
        """Facts on one (entity, predicate) slot, oldest id first."""
        return [self.facts[i] for i in sorted(self._facts_by_slot.get((entity_id, predicate), ()))]

    def begin_rebuild(self) -> None:
        """A full re-extraction starts from an empty graph and an empty extraction log (pages stay)."""
        for table in (self.facts, self.aliases, self.entities):
            self.graph_writes += max(len(table), 1)
            table.clear()
        self._entity_by_name.clear()
        self.extractions.clear()
        self._facts_by_source.clear()
        self._facts_by_slot.clear()
        self._max_fact_id = self._max_entity_id = 0

    def versions_read(self) -> dict[str, tuple[int, dt.datetime]]:
        """Page id -> (version read, when): the extraction log as the governed graph shares it."""
        return {e.page_id: (e.version, e.extracted_at) for e in self.extractions.values()}

    # ---------- snapshots ----------
    def copy(self) -> Store:
        other = Store()
        other.pages = dict(self.pages)
        other.entities = dict(self.entities)
        other.aliases = dict(self.aliases)
        other.facts = dict(self.facts)
        other.extractions = dict(self.extractions)
        other._entity_by_name = dict(self._entity_by_name)
        other._facts_by_source = {k: set(v) for k, v in self._facts_by_source.items()}
        other._facts_by_slot = {k: set(v) for k, v in self._facts_by_slot.items()}
        other._max_fact_id, other._max_entity_id = self._max_fact_id, self._max_entity_id
        return other

    # The columns of `rows()`'s tables, in order.
    ROW_COLUMNS = {
        "pages": ("id", "title", "body", "version", "updated_at", "audience"),
        "entities": ("entity_id", "name"),
        "aliases": ("alias", "entity_id"),
        "facts": ("fact_id", "entity_id", "entity", "predicate", "object", "source_doc", "source_version",
                  "extracted_at", "valid_from", "extractor", "audience"),
        "extraction_log": ("page_id", "version", "extracted_at", "extractor", "issue"),
    }

    def rows(self, tables: Iterable[str] = ROW_COLUMNS) -> dict[str, list[tuple]]:
        """The store as rows, one list of tuples (ROW_COLUMNS) per table asked for, in a stable order: what is
        written to DuckDB, without a dict per row. (The graph step writes no pages: the pages step does.)"""
        return {table: self._row_builders[table](self) for table in tables}

    def _page_rows(self) -> list[tuple]:
        return [(p.id, p.title, p.body, p.version, p.updated_at, p.audience) for p in self.sorted_pages()]

    def _alias_rows(self) -> list[tuple]:
        return sorted(((a, e) for a, e in self.aliases.values()), key=lambda r: (r[0].casefold(), r[1]))

    def fact_row(self, f: Fact) -> tuple:
        """One fact's row (ROW_COLUMNS["facts"]): its fields and its entity's name."""
        return (f.id, f.entity_id, self.entities[f.entity_id], f.predicate, f.object, f.source_doc,
                f.source_version, f.extracted_at, f.valid_from, f.extractor, f.audience)

    @staticmethod
    def log_row(e: ExtractionEntry) -> tuple:
        return (e.page_id, e.version, e.extracted_at, e.extractor, e.issue)

    def _fact_rows(self) -> list[tuple]:
        return [self.fact_row(f) for _, f in sorted(self.facts.items())]

    def _log_rows(self) -> list[tuple]:
        return [self.log_row(e) for _, e in sorted(self.extractions.items())]

    _row_builders: dict[str, Callable[[Store], list[tuple]]] = {
        "pages": _page_rows, "entities": lambda store: sorted(store.entities.items()), "aliases": _alias_rows,
        "facts": _fact_rows, "extraction_log": _log_rows}

    def snapshot(self) -> dict[str, list[dict]]:
        """The store as rows, one list of dicts per table, in a stable order."""
        return {table: [dict(zip(self.ROW_COLUMNS[table], row)) for row in rows] for table, rows in self.rows().items()}

    @classmethod
    def from_rows(cls, pages: Iterable[tuple], entities: Iterable[tuple], aliases: Iterable[tuple],
                  facts: Iterable[tuple], extraction_log: Iterable[tuple]) -> Store:
        """The store from rows as tuples, as a database hands them over without a dict per row: pages, facts
        and log entries in their dataclass's field order, entities as (entity_id, name), aliases as (alias,
        entity_id). Rows are applied in the order given (the tables' key order)."""
        return cls.from_objects((StoredPage(*p) for p in pages), entities, aliases, (Fact(*f) for f in facts),
                                (ExtractionEntry(*x) for x in extraction_log))

    @classmethod
    def from_objects(cls, pages: Iterable[StoredPage], entities: Iterable[tuple], aliases: Iterable[tuple],
                     facts: Iterable[Fact], extraction_log: Iterable[ExtractionEntry]) -> Store:
        """As `from_rows`, from pages, facts and log entries already built (a layer read as the changes from
        the day before keeps the objects of the rows that did not change)."""
        store = cls()
        for page in pages:
            store.pages[page.id] = page
        for entity_id, name in entities:
            store.entities[entity_id] = name
            store._entity_by_name[name.casefold()] = entity_id
            store._max_entity_id = max(store._max_entity_id, entity_id)
        for alias, entity_id in aliases:
            store.aliases[alias.casefold()] = (alias, entity_id)
        for fact in facts:
            store._put(fact)
        for entry in extraction_log:
            store.extractions[entry.page_id] = entry
        return store

    @classmethod
    def from_changes(cls, before: Store, pages: Iterable[StoredPage], entities: Iterable[tuple],
                     aliases: Iterable[tuple], facts: dict[int, Fact], removed: Iterable[Fact], added: Iterable[Fact],
                     extraction_log: Iterable[ExtractionEntry]) -> Store:
        """As `from_objects` with `facts` (id -> fact, in id order), its fact indexes carried from `before` (the
        day read before) instead of built from every fact: only `removed` (before's facts gone or replaced)
        and `added` are indexed again. An index entry the changes left alone is `before`'s own set, so neither
        store may be changed afterwards (a layer read back is only read)."""
        store = cls.from_objects(pages, entities, aliases, (), extraction_log)
        store.facts, removed, added = facts, list(removed), list(added)
        store._facts_by_source = carried_index(before._facts_by_source, removed, added, attrgetter("source_doc"), set)
        store._facts_by_slot = carried_index(before._facts_by_slot, removed, added, slot_of, set)
        store._max_fact_id = max(facts, default=0)
        return store


_Key = TypeVar("_Key")
_Ids = TypeVar("_Ids", set[int], list[int])
slot_of = attrgetter("entity_id", "predicate")  # a fact's (entity, predicate), in either graph


def carried_index(index: dict[_Key, _Ids], removed: Sequence[Any], added: Sequence[Any], key: Callable[[Any], _Key],
                  make: Callable[[list[int]], _Ids]) -> dict[_Key, _Ids]:
    """A new key -> fact ids index: `index` without the facts `removed`, then with the facts `added` (each fact
    filed under `key(fact)` by its `id`). An entry touched is made anew by `make` from its ids in ascending
    order (and dropped once empty); every other entry is `index`'s own object, so the cost is the changes' and
    one dict copy, not the index's."""
    touched: dict[_Key, set[int]] = {}
    for fact in removed:
        ids = touched.get(k := key(fact))
        if ids is None:
            ids = touched[k] = set(index[k])
        ids.discard(fact.id)
    for fact in added:
        ids = touched.get(k := key(fact))
        if ids is None:
            ids = touched[k] = set(index.get(k, ()))
        ids.add(fact.id)
    carried = dict(index)
    for k, ids in touched.items():
        if ids:
            carried[k] = make(sorted(ids))
        else:
            del carried[k]
    return carried


def _discard(index: dict[_Key, set[int]], key: _Key, fact_id: int) -> None:
    """Drop a fact id from one index entry, and the entry once it is empty."""
    ids = index[key]
    ids.discard(fact_id)
    if not ids:
        del index[key]
