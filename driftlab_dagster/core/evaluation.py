"""Asking every question of every design at a checkpoint, and scoring the answers."""

from __future__ import annotations

import copy

from .call_cache import CachedClient
from .clients import ChatReply
from .designs import DESIGNS, Agent, Design
from .extraction import Extractor
from .governed_resolver import GovernedResolver
from .layer import KnowledgeLayer
from .readers import Reader
from .retrieval import Bm25Retriever, Retriever
from .scoring import outcome_of
from .store import Store, StoredPage
from .world import World

RESULT_COLUMNS = ["scenario", "design", "step", "question", "drifted", "outcome", "hedged", "answer", "expected", "why"]
# Ours, after the post's: a model reader's possibly_stale flag and hedge phrases, recorded apart.
RESULT_EXTRA_COLUMNS = ["model_flagged", "hedge_phrase"]


def evaluate(layer: KnowledgeLayer, world: World, scenario: str, step: int, reader: Reader,
             designs: list[Design] = DESIGNS, retriever: Retriever | None = None,
             extractor: Extractor | None = None, governed_when_silent: str = "auto") -> list[dict]:
    """One row per (design, question): the answer, whether it is right, hedged, and why. The Governed design
    is asked when the layer keeps a governed graph; pages it has not read yet are read at question time by
    `extractor` (the run's own), and where its graph holds nothing it abstains or reads the pages
    (`governed_when_silent`, settings.StudySettings).

    A row is "drifted" when the event that flips its answer (or the name in it) has already happened.
    """
    store = layer.store
    retriever = retriever or _BuiltWhenAsked(store)
    read = (lambda page: extractor.extract(page).triples) if extractor is not None else None
    resolver = GovernedResolver(layer.governed, store.sorted_pages(), read) if layer.governed is not None else None
    rows = []
    for design in designs:
        if design is Design.GOVERNED and resolver is None:
            continue
        agent = Agent(store, retriever, reader, design, world.ontology,
                      resolver if design is Design.GOVERNED else None,
                      naming=(tuple(world.naming.drop_prefixes), tuple(world.naming.drop_suffixes)),
                      read_page=read, governed_when_silent=governed_when_silent)
        for q in world.questions_at(step):
            answer = agent.ask(q.text, q.entity, q.hops, q.caller)
            rows.append({
                "scenario": scenario, "design": design.value, "step": step, "question": q.id,
                "drifted": q.drifted, "outcome": outcome_of(answer.value, q), "hedged": answer.hedged,
                "answer": answer.value or "", "expected": q.expected, "why": answer.why,
                "model_flagged": answer.flagged, "hedge_phrase": answer.phrase,
            })
    return rows


class _BuiltWhenAsked:
    """The store's BM25 index, built on the first query: the graph designs never ask one, and a graph-only
    accuracy (each maintenance pass's) would otherwise index every page for nothing (half the maintenance
    comparison's time at 40,000 pages)."""

    def __init__(self, store: Store):
        self.store = store
        self.built: Bm25Retriever | None = None

    def top(self, query: str, k: int = 3, caller: frozenset[str] | None = None) -> list[StoredPage]:
        if self.built is None:
            self.built = Bm25Retriever(self.store.sorted_pages())
        return self.built.top(query, k, caller)


class _CallRecorder:
    """Stands in for the model during a dry pass of `evaluate`: notes every call and answers as a model
    that finds nothing would (no relation stated, "unknown"), so the pass goes on without the server."""

    def __init__(self, model: str):
        self.model = model
        self.calls: list[tuple[str, str, dict | None, int | None]] = []

    def chat_json(self, system: str, user: str, schema: dict | None, max_tokens: int | None = None,
                  validate: object = None) -> ChatReply:
        self.calls.append((system, user, schema, max_tokens))
        content = '{"states": false, "subject": "", "object": ""}' if schema else "unknown"
        return ChatReply(content, 0, 0, 0.0, cached=True)


def read_ahead(layer: KnowledgeLayer, world: World, scenario: str, step: int, reader: Reader,
               designs: list[Design] = DESIGNS, retriever: Retriever | None = None,
               extractor: Extractor | None = None, concurrency: int = 1, governed_when_silent: str = "auto") -> int:
    """Ask the server now, `concurrency` calls at a time, for what `evaluate` with the same arguments will
    ask a model reader (and the extractor, for pages read at question time); returns how many calls were
    noted. A dry pass notes the calls: every first hop, and every later hop the dry answers reach. The
    replies wait in the client until `evaluate` asks for them in its own order, so the rows, the cache and
    the accounting are those of one call at a time; a call the dry pass could not foresee (a second hop
    after a real answer) is simply asked then."""
    client = getattr(reader, "client", None)
    if concurrency <= 1 or not isinstance(client, CachedClient):
        return 0
    recorder = _CallRecorder(client.model)
    dry_reader = copy.copy(reader)
    dry_reader.client = recorder  # type: ignore[attr-defined]
    dry_extractor = extractor
    if extractor is not None and hasattr(extractor, "with_client"):  # a model extractor: its calls too
        dry_extractor = extractor.with_client(recorder)
    evaluate(layer, world, scenario, step, dry_reader, designs, retriever, dry_extractor, governed_when_silent)
    client.prefetch(recorder.calls, concurrency)
    return len(recorder.calls)


def accuracy(rows: list[dict]) -> float:
    return sum(r["outcome"] == "correct" for r in rows) / len(rows) if rows else 0.0
