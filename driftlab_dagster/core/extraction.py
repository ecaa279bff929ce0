"""Turning pages into graph facts, and the three ways of keeping the graph current.

- full re-extraction: clear the graph and read every page;
- patch the changed pages: read only the pages whose version is newer than the extraction log says;
- patch from the system of record: read no page, write what the owning system says.

Each returns a `CostSample`: pages read, tokens, graph writes and wall-clock milliseconds.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from dataclasses import dataclass, replace
from typing import Protocol

from .layer import KnowledgeLayer
from .ontology import Ontology, Triple
from .store import StoredPage
from .world import World


@dataclass(frozen=True)
class Extraction:
    """What one page yielded, and what reading it cost."""

    triples: tuple[Triple, ...]
    input_tokens: int
    output_tokens: int
    estimated: bool  # True when no model was called and the tokens are a 4-characters-a-token estimate
    issue: str = ""  # why some or all of the page's facts were dropped ("" when nothing went wrong)
    cached: bool = False  # the reply came from the call cache: a live system would have paid, this run did not


class Extractor(Protocol):
    kind: str
    id: str  # kind, model and prompt version: stored on every fact it produces
    ontology: Ontology

    def extract(self, page: StoredPage) -> Extraction: ...


def extraction_prompt(ontology: Ontology) -> str:
    """The extraction instructions, written from the ontology so a new predicate needs no prompt edit."""
    lines = [
        'Extract facts from the document. Reply with JSON only: {"facts":[{"subject":"","predicate":"","object":""}]}.',
        "Allowed predicates:",
        *(f"- {p.name}: {p.meaning}" for p in ontology.predicates),
        "Copy names exactly as written. Skip anything that does not fit these predicates.",
    ]
    return "\n".join(lines)


class RegexExtractor:
    """Parses the ontology's own sentence patterns: the best case for extraction on a templated corpus.

    No model is called. Token counts are what an LLM extractor would roughly be sent and return
    (4 characters a token), so the patch-versus-rebuild comparison still has a cost axis.
    """

    kind = "regex"
    id = "regex"

    def __init__(self, ontology: Ontology):
        self.ontology = ontology
        self._prompt_chars = len(extraction_prompt(ontology))

    def extract(self, page: StoredPage) -> Extraction:
        triples = self.ontology.parse(page.body)
        reply = json.dumps([t._asdict() for t in triples], separators=(",", ":"), ensure_ascii=False)
        return Extraction(triples, (self._prompt_chars + len(page.body)) // 4, len(reply) // 4, estimated=True)


@dataclass(frozen=True)
class CostSample:
    """The cost of one maintenance pass over one store."""

    approach: str
    event: int
    docs: int
    input_tokens: int
    output_tokens: int
    graph_writes: int
    ms: int
    estimated: bool
    spent_input_tokens: int = 0  # what this run paid: cache hits and estimates cost nothing
    spent_output_tokens: int = 0

    def as_row(self) -> dict:
        """What the pass cost in pages, tokens and writes: the same for the same inputs, byte for byte. The
        milliseconds are a measurement of one run and travel apart (`timing`)."""
        return {"approach": self.approach, "event": self.event, "docs": self.docs,
                "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "graph_writes": self.graph_writes, "estimated": self.estimated,
                "spent_input_tokens": self.spent_input_tokens, "spent_output_tokens": self.spent_output_tokens}

    def timing(self) -> dict:
        """How long this run's pass took: one row of `timings.csv` and of the `pass_timings` table."""
        return {"approach": self.approach, "event": self.event, "ms": self.ms}


FULL = "full re-extract"
PATCH_PAGES = "patch changed pages"
PATCH_RECORD = "patch from record"


def extract_pages(layer: KnowledgeLayer, extractor: Extractor, pages: list[StoredPage], at: dt.datetime,
                  approach: str, event: int) -> CostSample:
    started = time.perf_counter()
    writes_before = layer.graph_writes
    read_ahead = getattr(extractor, "read_ahead", None)  # a model extractor's call order (see ModelExtractor)
    if read_ahead is not None:
        read_ahead(pages)
    results = [(page, extractor.extract(page)) for page in pages]
    layer.apply_readings([(page, r.triples, r.issue) for page, r in results], at, extractor.id,
                         extractor.ontology.rename_predicates())
    paid = [r for _, r in results if not r.estimated and not r.cached]
    return CostSample(
        approach, event, len(pages),
        sum(r.input_tokens for _, r in results), sum(r.output_tokens for _, r in results),
        layer.graph_writes - writes_before, _ms_since(started), any(r.estimated for _, r in results),
        sum(r.input_tokens for r in paid), sum(r.output_tokens for r in paid),
    )


def full_reextract(layer: KnowledgeLayer, extractor: Extractor, at: dt.datetime, event: int) -> CostSample:
    """Clear the graph and read every page. As in the post, the cost counts the extraction pass; clearing
    the old graph is not counted as writes. (The governed graph is never cleared: every page's new reading
    supersedes its old one.)"""
    layer.begin_rebuild()
    return extract_pages(layer, extractor, layer.store.sorted_pages(), at, FULL, event)


def patch_changed_pages(layer: KnowledgeLayer, extractor: Extractor, at: dt.datetime, event: int) -> CostSample:
    """Re-read the pages changed since the last extraction; drop what deleted pages said."""
    store = layer.store
    pending = store.pages_changed_since_extraction()
    writes_before = layer.graph_writes
    for gone in [pid for pid in pending if pid not in store.pages]:
        layer.forget_page(gone, at)
    forgotten = layer.graph_writes - writes_before
    sample = extract_pages(layer, extractor, store.sorted_pages(pending), at, PATCH_PAGES, event)
    return replace(sample, graph_writes=sample.graph_writes + forgotten)


def patch_from_record(layer: KnowledgeLayer, world: World, step: int) -> CostSample:
    """No pages are read: the change comes from the system that owns the fact (HR, billing, CMDB)."""
    started = time.perf_counter()
    writes_before = layer.graph_writes
    at = world.checkpoints[step].at
    for change in world.record_changes(step):
        layer.apply_record_change(change, at)
    return CostSample(PATCH_RECORD, step, 0, 0, 0, layer.graph_writes - writes_before, _ms_since(started), False)


def _ms_since(started: float) -> int:
    return int((time.perf_counter() - started) * 1000)
