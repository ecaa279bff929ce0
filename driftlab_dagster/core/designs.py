"""The four designs: what evidence each hands the reader, and how a multi-hop question is walked.

| design          | evidence for one hop                                                          |
|-----------------|-------------------------------------------------------------------------------|
| Rag             | top 3 pages from BM25                                                         |
| Graph           | one graph fact: the value most sources agree on                               |
| Hybrid          | that graph fact first, then the top 3 pages                                   |
| HybridVersioned | every distinct graph value with its dates, then the top 3 pages with theirs   |
|                 | and a flag on pages that changed since the graph last read them                |
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum

from . import permissions
from .governed_resolver import GovernedResolver
from .ontology import Ontology, Triple
from .readers import DeterministicReader, Evidence, HopAnswer, Reader, claims, doubts
from .retrieval import Retriever
from .store import Store, StoredPage
from .values import answers_when_asked, normalise, states


class Design(str, Enum):
    RAG = "Rag"
    GRAPH = "Graph"
    HYBRID = "Hybrid"
    HYBRID_VERSIONED = "HybridVersioned"
    GOVERNED = "Governed"

    @property
    def uses_graph(self) -> bool:
        return self is not Design.RAG

    @property
    def uses_pages(self) -> bool:
        return self not in (Design.GRAPH, Design.GOVERNED)

    @property
    def versioned(self) -> bool:
        return self is Design.HYBRID_VERSIONED


DESIGNS = [Design.RAG, Design.GRAPH, Design.HYBRID, Design.HYBRID_VERSIONED]  # the post's four
ALL_DESIGNS = DESIGNS + [Design.GOVERNED]  # and the fifth, governed one (governed.py)
TOP_K = 3
# The rules by which the designs answer, beside the reader that reads for them: part of the answers' code version
# (session.reader_id), so stored answers go stale in Dagster when a rule changes. Name the change when you make one.
ANSWER_RULES_VERSION = "a-page-that-is-gone-states-nothing"


@dataclass(frozen=True)
class Answer:
    value: str | None
    hedged: bool
    why: str
    flagged: bool = False
    phrase: bool = False


def clean(value: str, drop_prefixes: tuple[str, ...] = ("the ",), drop_suffixes: tuple[str, ...] = (" team",)) -> str:
    """A hop's answer as the next hop's entity: no trailing dot, and without the world's naming prefixes and
    suffixes ("the Lynx squad" -> "Lynx" where the world drops "the " and " squad"), case kept."""
    value = value.strip().rstrip(".")
    for prefix in drop_prefixes:
        if value[: len(prefix)].casefold() == prefix.casefold() and len(value) > len(prefix):
            value = value[len(prefix):]
    for suffix in drop_suffixes:
        if value[-len(suffix):].casefold() == suffix.casefold() and len(value) > len(suffix):
            value = value[: -len(suffix)]
    return value.strip()


def pages_when_silent(policy: str, ontology: Ontology) -> bool:
    """Whether Governed reads the pages where its graph holds nothing: `policy` "pages" or "abstain", or "auto":
    where the relations are read from prose (declared by description, `Predicate.open`), the graph lacks what
    the model could not extract, which the pages still say; a templated world's sentences are parsed exactly,
    so there the graph's silence is the answer."""
    return policy == "pages" or policy == "auto" and ontology.described_count > 0


class Agent:
    """Answers questions hop by hop against one store snapshot with one design and one reader."""

    def __init__(self, store: Store, retriever: Retriever, reader: Reader, design: Design, ontology: Ontology,
                 governed: GovernedResolver | None = None,
                 naming: tuple[tuple[str, ...], tuple[str, ...]] | None = None,
                 read_page: Callable[[StoredPage], Iterable[Triple]] | None = None,
                 governed_when_silent: str = "auto"):
        if design is Design.GOVERNED and governed is None:
            raise ValueError("the Governed design needs a governed store")
        self.governed = governed
        self.store = store
        self.retriever = retriever
        self.reader = reader
        self.design = design
        self.ontology = ontology
        # Where the governed graph holds nothing: abstain, or read the pages and keep what one of them states.
        self.reads_pages_when_silent = design is Design.GOVERNED and pages_when_silent(governed_when_silent, ontology)
        self._ahead = (set(store.pages_changed_since_extraction()) if design.uses_pages or self.reads_pages_when_silent
                       else set())
        self._naming = naming or (("the ",), (" team",))  # the world's (drop_prefixes, drop_suffixes)
        self.read_page = read_page  # the run's extractor, for code's reasons to doubt a model's answer
        self.caller: frozenset[str] | None = None  # set per question by ask()

    def may_read(self, audience: str) -> bool:
        """Whether the asker may see what a page with this audience says (None: no permissions in play)."""
        return permissions.may_read(self.caller, audience)

    def ask(self, question: str, entity: str, hops: tuple[str, ...], caller: frozenset[str] | None = None) -> Answer:
        """Answer hop by hop as `caller` (the audiences the asker holds): retrieval and graph look-ups drop
        what the caller may not read before any evidence reaches the reader."""
        self.caller = caller
        current, hedged, flagged, phrase, why = entity, False, False, False, []
        for i, predicate in enumerate(hops):
            query = question if i == 0 else f"{current} {self.ontology[predicate].query}"
            # The first hop is the question a person asked; later hops are the relation's own question.
            asked = question if i == 0 else ""
            hop = (self.governed_hop(current, predicate, asked, query) if self.governed is not None else
                   self.read_hop(current, predicate, self.gather(query, current, predicate), asked))
            hedged, flagged, phrase = hedged or hop.hedged, flagged or hop.flagged, phrase or hop.phrase
            if hop.why:
                why.append(hop.why)
            if hop.value is None:
                return Answer(None, hedged, "; ".join(why), flagged, phrase)
            current = clean(hop.value, *self._naming)
        return Answer(current, hedged, "; ".join(why), flagged, phrase)

    def read_hop(self, entity: str, predicate: str, evidence: list[Evidence], asked: str = "") -> HopAnswer:
        """The reader's answer. For the versioned design, a reader that takes them also gets code's reasons to
        doubt (sources that disagree, no graph fact, a page changed after extraction), read from the same
        evidence with the run's own extractor: the model answers, code says whether to trust it."""
        signals = None
        if self.design.versioned and getattr(self.reader, "takes_signals", False):
            names, candidates = claims(entity, predicate, evidence, self.ontology, self.read_page)
            signals = doubts(names, candidates, evidence)
        return self.reader.read(entity, predicate, evidence, self.design.versioned, signals, asked)

    def governed_hop(self, entity: str, predicate: str, asked: str = "", query: str = "") -> HopAnswer:
        """Code resolves authority, recency inside a rank and fact-level staleness; the reader only reads the
        winning claim (a model reader gets it as its evidence). The hedge is code's, never the model's."""
        assert self.governed is not None
        resolution = self.governed.resolve(entity, predicate, self.may_read, asked)
        if resolution.value is None and self.reads_pages_when_silent:
            return self.pages_hop(entity, predicate, query or entity, asked, resolution.why)
        if resolution.value is None:
            return HopAnswer(None, resolution.hedged, resolution.why)  # "I don't know", no model call
        if isinstance(self.reader, DeterministicReader):
            return HopAnswer(resolution.value, resolution.hedged, resolution.why)
        # A name the graph never saw (answered from newer pages only) is shown to the reader as it was asked.
        entity_id = self.governed.linked(entity, predicate)
        name = entity if entity_id is None else self.governed.store.current_name(entity_id)
        governed_value = resolution.value  # a str from here on (the lambda below would not see the narrowing)
        top = sorted((c for c in resolution.candidates if c.rank == min(x.rank for x in resolution.candidates)),
                     key=lambda c: normalise(c.value) != normalise(governed_value))
        evidence = [Evidence(self.ontology.render(predicate, name, c.value), c.source, c.date, True) for c in top]
        hop = self.reader.read(entity, predicate, evidence, versioned=False, asked=asked)
        hedged, why, value = resolution.hedged, [resolution.why, hop.why], hop.value
        if value is not None and not any(states(value, c.value) for c in top):
            # The reader answered what no claim it was shown says ("tool" for "Purchase requests uses tool C2"):
            # a misreading, not a judgement. Code's governed value stands, hedged.
            hedged, why, value = True, why + ["the reader's answer is in none of the claims; the governed value "
                                              "stands"], governed_value
        elif value is not None and not states(value, governed_value):
            # The reader chose another claim of the top rank: code knows the governed value, so not plainly.
            hedged, why = True, why + ["the reader's answer differs from the governed value"]
        return HopAnswer(value, hedged, "; ".join(w for w in why if w), flagged=hop.flagged, phrase=hop.phrase)

    def pages_hop(self, entity: str, predicate: str, query: str, asked: str, silent: str) -> HopAnswer:
        """Where the governed graph holds nothing: the reader reads the pages Rag is shown (the same call), and
        its answer stands only where one of them states it of `entity` as the extractor would read it, so a
        neighbouring statement's value is not taken for an answer the pages do not give, and only where it has the
        shape the question asks for (a time of day for "At what time ...?": `values.answers_when_asked`); hedged,
        since no governed fact backs it. Else "I don't know", as without pages."""
        assert self.governed is not None
        pages = self.retriever.top(query, TOP_K, self.caller)
        hop = self.read_hop(entity, predicate, self.page_evidence(pages), asked)  # Governed is no versioned design
        if hop.value is not None and not answers_when_asked(asked, hop.value):
            return HopAnswer(None, False, f"{silent}; the reader's answer is not of the shape the question asks for")
        source = self.governed.stated_by(pages, entity, predicate, hop.value) if hop.value is not None else None
        if source is None:
            return HopAnswer(None, False, f"{silent}; no page read states the reader's answer" if hop.value else silent)
        return HopAnswer(hop.value, True, f"{silent}; read from the pages, stated on {source}", hop.flagged, hop.phrase)

    def gather(self, query: str, entity: str, predicate: str) -> list[Evidence]:
        evidence = self.graph_evidence(entity, predicate) if self.design.uses_graph else []
        if self.design.uses_pages:
            evidence += self.page_evidence(self.retriever.top(query, TOP_K, self.caller))
        return evidence

    def page_evidence(self, pages: list[StoredPage]) -> list[Evidence]:
        return [Evidence(f"{page.title}\n{page.body}", f"{page.id}@v{page.version}", page.updated_at, False, None,
                         page.id in self._ahead, page) for page in pages]

    def graph_evidence(self, entity: str, predicate: str) -> list[Evidence]:
        entity_id = self.store.resolve(entity)
        if entity_id is None:
            return []
        name = self.store.entity_name(entity_id)
        rename = next(iter(self.ontology.rename_predicates()), None)
        evidence = [
            Evidence(self.ontology.render(rename, name, alias), "graph:alias", dt.datetime.min, True)
            for alias in self.store.aliases_of(entity_id)
        ] if rename else []
        facts = [f for f in self.store.facts_about(entity_id, predicate) if self.may_read(f.audience)]
        if not facts:
            return evidence
        groups: dict[str, list] = {}  # case-insensitive object -> facts, in order of first appearance
        for f in facts:
            groups.setdefault(f.object.casefold(), []).append(f)
        if not self.design.versioned:
            # The usual merge: most sources win, ties go to the latest write. No dates reach the reader.
            top = max(groups.values(), key=lambda g: (len(g), max(f.id for f in g)))
            f = max(top, key=lambda x: x.id)
            evidence.append(Evidence(self.ontology.render(predicate, name, f.object), "graph", f.valid_from, True,
                                     f.extracted_at))
            return evidence
        # Versioned: every distinct value, each with its newest valid_from and its extraction date.
        for group in groups.values():
            f = max(group, key=lambda x: x.valid_from)
            evidence.append(Evidence(self.ontology.render(predicate, name, f.object),
                                     f"graph:{f.source_doc}@v{f.source_version}", f.valid_from, True, f.extracted_at))
        return evidence


