"""A scenario's knowledge layer: its pages, the graphs kept from reading them, and the one contract every
graph implements.

`Store` (store.py) holds the pages, the post's graph and its extraction log; `GovernedStore` (governed.py)
keeps the Governed design's bi-temporal graph from the same readings. Extraction and the study hand
readings, renames, deletions and system-of-record changes to the layer, and the layer hands them to every
graph it holds: a new kind of graph implements `GraphBackend` and joins the layer, and nothing that
maintains the layer changes.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from .governed import GovernedStore
from .ontology import Triple
from .store import Store, StoredPage
from .world import RecordChange


class GraphBackend(Protocol):
    """What a graph does when pages are read, moved or deleted, or the system of record speaks."""

    def begin_rebuild(self) -> None:
        """A full re-extraction is about to read every page."""

    def apply_rename(self, new: str, old: str, when: dt.datetime) -> None:
        """"`new` was formerly called `old`", true from `when` on."""

    def apply_page(self, page: StoredPage, triples: Iterable[Triple], at: dt.datetime, extractor: str,
                   issue: str = "") -> None:
        """What the page's current version says (renames excluded), read at `at` by `extractor`."""

    def apply_record(self, subject: str, predicate: str, obj: str, source: str, at: dt.datetime) -> None:
        """The system of record's value for (subject, predicate), from `at` on."""

    def forget_page(self, page_id: str, at: dt.datetime) -> None:
        """The page was deleted: what it said no longer holds."""

    def rename_page(self, old_id: str, new_id: str) -> None:
        """The page moved (a rename in git): what it said moves with it."""

    def rows(self) -> dict[str, list[tuple]]:
        """The graph as rows, one list of tuples per table: what the warehouse stores."""


@dataclass
class KnowledgeLayer:
    """One scenario's knowledge layer. `store` is the pages, the post's graph and the extraction log (what
    maintenance costs count); `governed` is the Governed design's graph, kept from the same readings when
    the run asks for it (the cost comparisons and the repair weigh the post's graph alone)."""

    store: Store
    governed: GovernedStore | None = None

    @property
    def graphs(self) -> tuple[GraphBackend, ...]:
        return (self.store,) if self.governed is None else (self.store, self.governed)

    @property
    def graph_writes(self) -> int:
        """Writes to the post's graph: what a maintenance pass's cost counts, as in the post."""
        return self.store.graph_writes

    def begin_rebuild(self) -> None:
        for graph in self.graphs:
            graph.begin_rebuild()

    def apply_readings(self, readings: Sequence[tuple[StoredPage, Sequence[Triple], str]], at: dt.datetime,
                       extractor: str, renames: set[str]) -> None:
        """Pages read at `at`, each with its triples and the extractor's issue ("" when none): the renames
        they state first, so facts that use a new name land on the existing entity, then each page's facts."""
        for graph in self.graphs:
            for page, triples, _ in readings:
                for t in triples:
                    if t.predicate in renames:
                        graph.apply_rename(t.subject, t.object, page.updated_at)
            for page, triples, issue in readings:
                graph.apply_page(page, [t for t in triples if t.predicate not in renames], at, extractor, issue)

    def apply_record_change(self, change: RecordChange, at: dt.datetime) -> None:
        kind, parts, source = change
        for graph in self.graphs:
            if kind == "rename":
                new_name, old_name = parts
                graph.apply_rename(new_name, old_name, at)
            else:
                subject, predicate, obj = parts
                graph.apply_record(subject, predicate, obj, source, at)

    def forget_page(self, page_id: str, at: dt.datetime) -> None:
        for graph in self.graphs:
            graph.forget_page(page_id, at)

    def rename_page(self, old_id: str, new_id: str) -> None:
        for graph in self.graphs:
            graph.rename_page(old_id, new_id)
