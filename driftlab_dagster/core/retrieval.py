"""BM25 retrieval over page title + body, on rank-bm25.

rank-bm25 does no preprocessing, so tokenising is ours (`tokenize`). Its `BM25Okapi` clamps negative
idf with an epsilon; the post scores with the non-negative Lucene idf, log(1 + (N - df + 0.5) / (df + 0.5)),
so `_LuceneIdfBM25` swaps in that one formula and keeps rank-bm25's scoring loop.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Protocol

import numpy as np
from rank_bm25 import BM25Okapi

from .permissions import may_read
from .store import StoredPage

if TYPE_CHECKING:
    from .call_cache import CachedClient

_WORD = re.compile(r"[a-z0-9]+")
K1 = 1.2
B = 0.75


def tokenize(text: str) -> list[str]:
    """Lower-case ASCII letters and digits; everything else separates tokens ("€49" -> ["49"])."""
    return _WORD.findall(text.lower())


class _LuceneIdfBM25(BM25Okapi):
    _postings: dict[str, tuple[np.ndarray, np.ndarray]] | None = None

    def _calc_idf(self, nd: dict[str, int]) -> None:
        n = self.corpus_size
        self.idf = {word: math.log(1 + (n - df + 0.5) / (df + 0.5)) for word, df in nd.items()}

    def get_scores(self, query: list[str]) -> np.ndarray:
        """rank-bm25's scores with rank-bm25's arithmetic, from postings: a term touches only the pages that
        contain it instead of every page (rank-bm25 loops over the whole corpus in Python for each term, ~50 ms
        a query at 40,000 pages). A page without the term adds exactly 0.0 either way, so the floats, and the
        rankings, are identical."""
        if self._postings is None:
            by_term: dict[str, tuple[list[int], list[int]]] = {}
            for i, freqs in enumerate(self.doc_freqs):
                for term, tf in freqs.items():
                    docs, tfs = by_term.setdefault(term, ([], []))
                    docs.append(i)
                    tfs.append(tf)
            self._postings = {t: (np.asarray(d, dtype=np.int64), np.asarray(f)) for t, (d, f) in by_term.items()}
            doc_len = np.array(self.doc_len)
            self._norm = self.k1 * (1 - self.b + self.b * doc_len / self.avgdl)
        score = np.zeros(self.corpus_size)
        for q in query:
            found = self._postings.get(q)
            if found is None:
                continue
            rows, tf = found
            score[rows] += (self.idf.get(q) or 0) * (tf * (self.k1 + 1) / (tf + self._norm[rows]))
        return score


class Retriever(Protocol):
    """What the designs ask of retrieval (Bm25Retriever, EmbeddingRetriever)."""

    def top(self, query: str, k: int = 3, caller: frozenset[str] | None = None) -> list[StoredPage]: ...


class Bm25Retriever:
    """Top-k pages for a query: BM25 score descending, ties broken by page id, zero scores dropped."""

    def __init__(self, pages: list[StoredPage]):
        self.pages = sorted(pages, key=lambda p: p.id)
        self.readable = _Readable(self.pages)
        # Never pass rank-bm25 a tokenizer: it would open a process pool it never closes.
        corpus = [tokenize(f"{p.title} {p.body}") for p in self.pages]
        self._bm25 = _LuceneIdfBM25(corpus, k1=K1, b=B) if any(corpus) else None
        self._cache: dict[tuple[str, int, frozenset[str] | None], list[StoredPage]] = {}

    def top(self, query: str, k: int = 3, caller: frozenset[str] | None = None) -> list[StoredPage]:
        """The k best pages the caller may read (its audiences): pages it may not are dropped before the
        ranking is cut to k, so a restricted page never takes a place, nor reaches the reader."""
        key = (query, k, caller)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        terms = list(dict.fromkeys(tokenize(query)))  # each distinct term once, in order
        if self._bm25 is None or not terms:
            return []
        scores = self._bm25.get_scores(terms)
        hits = [self.pages[i] for i in _best(scores, self.readable(caller), k)]
        self._cache[key] = hits
        return hits

    def scores(self, query: str) -> np.ndarray:
        terms = list(dict.fromkeys(tokenize(query)))
        if self._bm25 is None or not terms:
            return np.zeros(len(self.pages))
        return self._bm25.get_scores(terms)


class EmbeddingRetriever:
    """Top-k pages by cosine similarity of embeddings; ties broken by page id.

    Page vectors come through the caching client, keyed by the page's text, so a page is embedded again
    only when its version (its text) changes. Similarity is one matrix-vector product in numpy.
    """

    def __init__(self, pages: list[StoredPage], client: CachedClient) -> None:
        self.pages = sorted(pages, key=lambda p: p.id)
        self.readable = _Readable(self.pages)
        self.client = client
        vectors = client.embed([f"{p.title}\n{p.body}" for p in self.pages]) if self.pages else []
        self.matrix = _unit_rows(np.asarray(vectors, dtype=np.float32)) if vectors else np.zeros((0, 0), np.float32)
        self._cache: dict[tuple[str, int, frozenset[str] | None], list[StoredPage]] = {}

    def top(self, query: str, k: int = 3, caller: frozenset[str] | None = None) -> list[StoredPage]:
        key = (query, k, caller)
        if key in self._cache:
            return self._cache[key]
        if not self.pages or not query.strip():
            return []
        q = _unit_rows(np.asarray(self.client.embed([query]), dtype=np.float32))[0]
        scores = self.matrix @ q
        order = sorted(self.readable(caller), key=lambda i: (-float(scores[i]), self.pages[i].id))
        hits = [self.pages[i] for i in order[:k]]
        self._cache[key] = hits
        return hits

    def vectors(self) -> list[tuple[StoredPage, list[float]]]:
        return [(p, row.tolist()) for p, row in zip(self.pages, self.matrix)]


class _Readable:
    """Indexes of the pages a caller with these audiences may read (permissions.may_read): all of them,
    without looking at each page, when the caller may read every audience the corpus has (the usual case)."""

    def __init__(self, pages: list[StoredPage]):
        self.pages = pages
        self.audiences = {p.audience for p in pages}
        self._by_caller: dict[frozenset[str], list[int]] = {}

    def __call__(self, caller: frozenset[str] | None) -> range | list[int]:
        if caller is None or all(may_read(caller, audience) for audience in self.audiences):
            return range(len(self.pages))
        if caller not in self._by_caller:
            self._by_caller[caller] = [i for i, p in enumerate(self.pages) if may_read(caller, p.audience)]
        return self._by_caller[caller]


def _best(scores: np.ndarray, readable: range | list[int], k: int) -> list[int]:
    """Indexes of the k highest positive scores among `readable`, best first, ties by index (the pages are
    sorted by id, so by page id). Sorts only the scored candidates, in numpy: a query touches a few pages
    of a large corpus, and sorting every page per query grew faster than the corpus."""
    candidates = np.flatnonzero(scores > 0)
    if not isinstance(readable, range) or len(readable) != len(scores):
        candidates = np.intersect1d(candidates, np.asarray(readable, dtype=np.int64), assume_unique=True)
    order = np.lexsort((candidates, -scores[candidates]))  # last key first: score descending, then index
    return [int(i) for i in candidates[order[:k]]]


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.maximum(norms, 1e-9)
