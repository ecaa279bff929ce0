"""BM25 over title + body: our tokeniser, the post's idf, ties broken by page id, empty corpus guarded."""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from driftlab_dagster.core.retrieval import K1, B, Bm25Retriever, _best, tokenize
from driftlab_dagster.core.store import StoredPage

T = dt.datetime(2026, 9, 1)


def page(pid: str, title: str, body: str) -> StoredPage:
    return StoredPage(pid, title, body, 1, T)


@pytest.mark.parametrize("text, tokens", [
    ("The Pro plan costs €49 per user per month.",
     ["the", "pro", "plan", "costs", "49", "per", "user", "per", "month"]),
    ("FAQ: billing", ["faq", "billing"]),
    ("99.95% uptime", ["99", "95", "uptime"]),
    ("real-time", ["real", "time"]),
    ("08:00 to 20:00", ["08", "00", "to", "20", "00"]),
    ("", []),
    ("€ — …", []),
])
def test_tokenize(text, tokens):
    assert tokenize(text) == tokens


def test_scores_follow_the_posts_bm25_formula():
    pages = [page("a", "Pricing", "pro plan pro"), page("b", "Team", "atlas team"), page("c", "Other", "plan")]
    retriever = Bm25Retriever(pages)
    docs = [tokenize(f"{p.title} {p.body}") for p in pages]
    avg = sum(map(len, docs)) / len(docs)

    def expected(doc: list[str], query: list[str]) -> float:
        score = 0.0
        for term in dict.fromkeys(query):
            f = doc.count(term)
            if not f:
                continue
            df = sum(term in d for d in docs)
            idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
            score += idf * f * (K1 + 1) / (f + K1 * (1 - B + B * len(doc) / avg))
        return score

    scores = retriever.scores("pro plan plan")
    for i, doc in enumerate(docs):
        assert scores[i] == pytest.approx(expected(doc, ["pro", "plan", "plan"]))


def test_equal_scores_are_ordered_by_page_id_and_zero_scores_are_dropped():
    pages = [page("d2", "x", "refund"), page("d1", "x", "refund"), page("d3", "x", "nothing here")]
    assert [p.id for p in Bm25Retriever(pages).top("refund", 3)] == ["d1", "d2"]


def test_an_empty_corpus_or_query_returns_nothing():
    assert Bm25Retriever([]).top("anything") == []
    assert Bm25Retriever([page("a", "", "")]).top("anything") == []
    assert Bm25Retriever([page("a", "t", "body")]).top("€!") == []


def test_the_pricing_page_answers_a_price_question(world):
    pages = [StoredPage(p.id, p.title, p.body, 1, T) for p in world.pages_at("Fresh", 0)]
    top = Bm25Retriever(pages).top("How much does the Pro plan cost per user per month?", 3)
    assert "d02" in [p.id for p in top]


@pytest.mark.parametrize("copies", [1, 25])
def test_scores_from_postings_are_rank_bm25s_own_floats(copies):
    from rank_bm25 import BM25Okapi

    from driftlab_dagster.core.generate import dump_world, scale_world
    from driftlab_dagster.core.world.loader import load_world, parse_world
    from driftlab_dagster.project import DEFAULT_WORLD

    world = parse_world(dump_world(scale_world(load_world(DEFAULT_WORLD), copies, seed=2)), "scaled")
    pages = [StoredPage(p.id, p.title, p.body, 1, world.start) for p in world.pages_at("Fresh", 4)]
    retriever = Bm25Retriever(pages)
    bm25 = retriever._bm25
    queries = [q.text for q in world.questions_at(4)] + ["no such words at all", "plan plan plan", ""]
    for query in queries:
        terms = list(dict.fromkeys(tokenize(query)))
        ours, theirs = bm25.get_scores(terms), BM25Okapi.get_scores(bm25, terms)
        assert ours.tobytes() == theirs.tobytes(), query


@given(st.lists(st.sampled_from([0.0, 0.7, 1.5, 2.0, 3.25]), max_size=40), st.integers(1, 6), st.data())
def test_top_k_is_the_full_ranking_cut_to_k(scores, k, data):
    """The top-k cut equals sorting every readable page by (score descending, page id) and keeping the first
    k positive ones, whatever the ties and whichever pages the caller may read."""
    everyone = data.draw(st.booleans())
    readable = range(len(scores)) if everyone else sorted(data.draw(st.sets(st.integers(0, max(len(scores) - 1, 0)))
                                                                     if scores else st.just(set())))
    full = sorted((i for i in readable if scores[i] > 0), key=lambda i: (-scores[i], i))
    assert _best(np.array(scores, dtype=float), readable, k) == full[:k]
