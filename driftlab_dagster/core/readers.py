"""Readers turn one hop's evidence into an answer. The deterministic reader calls no model, so every
wrong answer it gives is the knowledge layer's fault."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from .ontology import Ontology, Triple
from .store import StoredPage

SOURCES_DISAGREE = "sources disagree"
NOT_IN_GRAPH = "not in graph"
PAGE_CHANGED = "page changed after extraction"


@dataclass(frozen=True)
class Evidence:
    """One piece of context handed to the reader.

    `date` is the page's updated_at or the fact's valid_from; `page_ahead_of_graph` marks a page whose
    current version is newer than the version the graph was extracted from; `page` is the page itself
    (for reading its claims with the run's extractor), None for graph facts.
    """

    text: str
    source: str
    date: dt.datetime
    from_graph: bool
    extracted_at: dt.datetime | None = None
    page_ahead_of_graph: bool = False
    page: StoredPage | None = None


@dataclass(frozen=True)
class HopAnswer:
    value: str | None
    hedged: bool
    why: str
    flagged: bool = False  # a model reader set possibly_stale
    phrase: bool = False  # a model reader's answer text carries a hedge phrase


class Reader(Protocol):
    def read(self, entity: str, predicate: str, evidence: list[Evidence], versioned: bool,
             signals: list[str] | None = None, asked: str = "") -> HopAnswer: ...


Claims = list[tuple[Triple, Evidence]]


def claims(entity: str, predicate: str, evidence: list[Evidence], ontology: Ontology,
           read_page: Callable[[StoredPage], Iterable[Triple]] | None = None) -> tuple[set[str], Claims]:
    """The names the entity goes by in this evidence, and every claim about (entity, predicate) in it.

    Graph facts are our own renderings of stored facts, so the ontology parses them exactly; pages are read
    by `read_page` (the run's extractor) when given, else by the ontology's patterns.
    """
    parsed = [(t, e) for e in evidence
              for t in (read_page(e.page) if read_page and e.page is not None else ontology.parse(e.text))]
    # Follow "X was formerly called Y" in both directions, like a careful human reader would.
    renames = ontology.rename_predicates()
    names = {entity.casefold()}
    for _ in range(2):
        for t, _e in parsed:
            if t.predicate in renames:
                if t.subject.casefold() in names:
                    names.add(t.object.casefold())
                if t.object.casefold() in names:
                    names.add(t.subject.casefold())
    return names, [(t, e) for t, e in parsed if t.predicate == predicate and t.subject.casefold() in names]


def doubts(names: set[str], candidates: Claims, evidence: list[Evidence]) -> list[str]:
    """The versioned design's reasons to hedge: sources that disagree, no graph fact, a page about the
    entity that changed after the graph last read it."""
    reasons = []
    if len({t.object.casefold() for t, _ in candidates}) > 1:
        reasons.append(SOURCES_DISAGREE)
    if candidates and not any(e.from_graph for _, e in candidates):
        reasons.append(NOT_IN_GRAPH)
    if any(e.page_ahead_of_graph and any(n in e.text.casefold() for n in names) for e in evidence):
        reasons.append(PAGE_CHANGED)
    return reasons


class DeterministicReader:
    """Parses candidates out of the evidence with the ontology's patterns and applies the design's rule."""

    def __init__(self, ontology: Ontology):
        self.ontology = ontology

    def read(self, entity: str, predicate: str, evidence: list[Evidence], versioned: bool,
             signals: list[str] | None = None, asked: str = "") -> HopAnswer:
        names, candidates = claims(entity, predicate, evidence, self.ontology)
        if not candidates:
            return HopAnswer(None, False, "no evidence")
        if not versioned:
            return HopAnswer(candidates[0][0].object, False, "first candidate")
        # Versioned rule: the newest dated claim wins (a graph fact before a page on the same date);
        # hedge when the sources give a reason for doubt.
        pick = max(candidates, key=lambda c: (c[1].date, c[1].from_graph))
        reasons = doubts(names, candidates, evidence)
        return HopAnswer(pick[0].object, bool(reasons), ", ".join(reasons))
