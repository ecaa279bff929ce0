"""Asking every question of every design at a checkpoint, and scoring the answers."""

from __future__ import annotations

import re

from .designs import DESIGNS, Agent, Design
from .extraction import Extractor
from .governed import GovernedResolver, GovernedStore
from .readers import Reader
from .retrieval import Bm25Retriever
from .store import Store
from .world import Question, World

RESULT_COLUMNS = ["scenario", "design", "step", "question", "drifted", "outcome", "hedged", "answer", "expected", "why"]
# Ours, after the post's: a model reader's possibly_stale flag and hedge phrases, recorded apart.
RESULT_EXTRA_COLUMNS = ["model_flagged", "hedge_phrase"]


def _normalise(text: str) -> str:
    return text.lower().replace("€", "").replace("%", "").strip().rstrip(".")


def matches(answer: str | None, expected: str) -> bool:
    """The expected value appears in the answer as a whole word, ignoring case, € and %."""
    if answer is None:
        return False
    return re.search(rf"(^|\W){re.escape(_normalise(expected))}($|\W)", _normalise(answer)) is not None


def outcome_of(answer: str | None, question: Question) -> str:
    """correct, wrong or abstain. When the knowledge base does not say ("none"), abstaining is right."""
    if question.expects_none:
        return "correct" if answer is None else "wrong"
    if answer is None:
        return "abstain"
    return "correct" if any(matches(answer, a) for a in question.accepted or (question.expected,)) else "wrong"


def evaluate(store: Store, world: World, scenario: str, step: int, reader: Reader,
             designs: list[Design] = DESIGNS, retriever: Bm25Retriever | None = None,
             governed: GovernedStore | None = None, extractor: Extractor | None = None) -> list[dict]:
    """One row per (design, question): the answer, whether it is right, hedged, and why. Pages the
    Governed graph has not read yet are read at question time by `extractor` (the run's own).

    A row is "drifted" when the event that flips its answer (or the name in it) has already happened.
    """
    retriever = retriever or Bm25Retriever(store.sorted_pages())
    read = (lambda page: extractor.extract(page).triples) if extractor is not None else None
    resolver = GovernedResolver(governed, store.sorted_pages(), read) if governed is not None else None
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
