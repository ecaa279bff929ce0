"""Scoring: whether an answer states the expected value, and how well an extractor's triples match the
ones a page really states."""

from __future__ import annotations

from dataclasses import dataclass

from .ontology import Triple
from .values import states
from .world import Question


def matches(answer: str | None, expected: str) -> bool:
    """The expected value appears in the answer as a whole phrase, both in the one normalisation the graph
    uses too (values.normalise: case, currency signs, thousands separators, number words, units)."""
    return states(answer, expected)


def outcome_of(answer: str | None, question: Question) -> str:
    """correct, wrong or abstain. When the knowledge base does not say ("none"), abstaining is right."""
    if question.expects_none:
        return "correct" if answer is None else "wrong"
    if answer is None:
        return "abstain"
    return "correct" if any(matches(answer, a) for a in question.accepted or (question.expected,)) else "wrong"


@dataclass(frozen=True)
class TripleScore:
    """Extraction quality of one run against the true triples."""

    true_positives: int
    extracted: int
    expected: int

    @property
    def precision(self) -> float:
        return self.true_positives / self.extracted if self.extracted else 0.0

    @property
    def recall(self) -> float:
        return self.true_positives / self.expected if self.expected else 0.0


def score_triples(extracted: list[Triple], truth: list[Triple]) -> TripleScore:
    """Exact triples, compared case-insensitively after trimming (a multiset match)."""
    norm = lambda t: (t.subject.strip().casefold(), t.predicate, t.object.strip().casefold())  # noqa: E731
    remaining = [norm(t) for t in truth]
    hits = 0
    for t in extracted:
        key = norm(t)
        if key in remaining:
            remaining.remove(key)
            hits += 1
    return TripleScore(hits, len(extracted), len(truth))
