"""Asking every question of every design at a checkpoint, and scoring the answers."""

from __future__ import annotations

from .designs import DESIGNS, Agent, Design
from .extraction import Extractor
from .governed import GovernedResolver
from .layer import KnowledgeLayer
from .readers import Reader
from .retrieval import Bm25Retriever, Retriever
from .scoring import outcome_of
from .world import World

RESULT_COLUMNS = ["scenario", "design", "step", "question", "drifted", "outcome", "hedged", "answer", "expected", "why"]
# Ours, after the post's: a model reader's possibly_stale flag and hedge phrases, recorded apart.
RESULT_EXTRA_COLUMNS = ["model_flagged", "hedge_phrase"]


def evaluate(layer: KnowledgeLayer, world: World, scenario: str, step: int, reader: Reader,
             designs: list[Design] = DESIGNS, retriever: Retriever | None = None,
             extractor: Extractor | None = None) -> list[dict]:
    """One row per (design, question): the answer, whether it is right, hedged, and why. The Governed design
    is asked when the layer keeps a governed graph; pages it has not read yet are read at question time by
    `extractor` (the run's own).

    A row is "drifted" when the event that flips its answer (or the name in it) has already happened.
    """
    store = layer.store
    retriever = retriever or Bm25Retriever(store.sorted_pages())
    read = (lambda page: extractor.extract(page).triples) if extractor is not None else None
    resolver = GovernedResolver(layer.governed, store.sorted_pages(), read) if layer.governed is not None else None
    rows = []
    for design in designs:
        if design is Design.GOVERNED and resolver is None:
            continue
        agent = Agent(store, retriever, reader, design, world.ontology,
                      resolver if design is Design.GOVERNED else None,
                      naming=(tuple(world.naming.drop_prefixes), tuple(world.naming.drop_suffixes)),
                      read_page=read)
        for q in world.questions_at(step):
            answer = agent.ask(q.text, q.entity, q.hops, q.caller)
            rows.append({
                "scenario": scenario, "design": design.value, "step": step, "question": q.id,
                "drifted": q.drifted, "outcome": outcome_of(answer.value, q), "hedged": answer.hedged,
                "answer": answer.value or "", "expected": q.expected, "why": answer.why,
                "model_flagged": answer.flagged, "hedge_phrase": answer.phrase,
            })
    return rows


def accuracy(rows: list[dict]) -> float:
    return sum(r["outcome"] == "correct" for r in rows) / len(rows) if rows else 0.0
