"""The model-backed extractor: a page's statements, each asked about the relations it speaks of.

A page is cut into units (the world's `text_units`: sentences of a templated page, or the statements of a
markdown page with their heading trail, units.py). A unit is shown with its section and asked only about
the relations whose cues it or its section uses (grounding.relations_to_ask), one call per relation, and a
triple is kept only when the unit or its section writes its subject and the unit its object (grounding.ground). A
subject taken from a chapter heading is the unit's own heading, and a value given in the subject's place is the
value (headings.py). Units repeat across pages and days, so each (relation, unit) call is asked once, ever: the
call cache serves the repeat. A reply that is not usable is a recorded issue on the page, never a crash.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .call_cache import CachedClient, call_key
from .clients import ChatReply, ModelCallFailed, ModelServerDown
from .extraction import Extraction
from .grounding import enumeration, ground, overlap, relations_to_ask
from .headings import nearest_topic, subject_from_own_heading
from .measures import broad
from .ontology import MAX_SENTENCE_CHARS, Ontology, Predicate, Triple
from .prompts import (
    DEFAULT_EXTRACTION_PROMPT,
    EXTRACTION_PROMPTS,
    extraction_prompt_text,
    model_extractor_id,
    relation_schema,
)
from .replies import parse_relation, validate_relation_reply
from .store import StoredPage
from .units import Unit, sentence_units
from .values import written_whole


@dataclass
class _Tally:
    """What one page's extraction found and cost, across its calls."""

    triples: list[Triple] = field(default_factory=list)
    issues: list[str] = field(default_factory=list)
    tokens_in: int = 0
    tokens_out: int = 0
    cached: bool = True


class ModelExtractor:
    """Reads a page with a local model; tokens come from the server's usage fields."""

    kind = "model"
    MAX_RELATION_TOKENS = 80  # one relation's two parts

    def __init__(self, ontology: Ontology, client: CachedClient, prompt_version: str = DEFAULT_EXTRACTION_PROMPT,
                 extractor_id: str | None = None, world_text: str = "",
                 units: Callable[[str, str], list[Unit]] = sentence_units, concurrency: int = 1):
        if prompt_version not in EXTRACTION_PROMPTS:
            raise ValueError(f"unknown extraction prompt {prompt_version!r}: use one of "
                             f"{', '.join(EXTRACTION_PROMPTS)}")
        self.ontology, self.client, self.prompt_version = ontology, client, prompt_version
        self.prompt = extraction_prompt_text(ontology, prompt_version, world_text)
        self.relations = EXTRACTION_PROMPTS[prompt_version](ontology, world_text)
        self.units = units  # how a page splits into what one call reads: the world's text_units
        self.concurrency = concurrency  # calls in flight during read_ahead; never changes a reply or its order
        # The id the run was configured with (the graph's code version), stored on every fact it writes.
        self.id = extractor_id or model_extractor_id(client.model, prompt_version, ontology, world_text)
        self._ahead: dict[tuple[str, str], ChatReply | ModelCallFailed] = {}  # see read_ahead

    def with_client(self, client: Any) -> ModelExtractor:
        """The same extractor asking another client (a dry pass that notes calls), with nothing read ahead."""
        other = copy.copy(self)
        other.client, other._ahead = client, {}
        return other

    def read_ahead(self, pages: list[StoredPage]) -> None:
        """Ask, now, every relation call that extracting `pages` will make, grouped by relation: a model
        server reuses the evaluated prompt it shares with the call before (llama.cpp's prefix match), and
        calls for one relation share its whole prompt but the unit. Page order alternates relations, so
        each call re-reads the worked examples; in this order, only the first of each relation does. The
        replies wait in `_ahead` for `extract`, which takes each one once, so cost and cache accounting are
        the same as asking page by page."""
        self.read_ahead_units([unit for page in pages for unit in readable_units(self.units, page.body, page.title)])

    def read_ahead_units(self, units: list[Unit]) -> None:
        """`read_ahead` for reading units themselves (a benchmark's labelled units)."""
        wanted: dict[tuple[str, str], Predicate] = {}
        for unit in units:
            for p in relations_of(self.ontology, unit):
                wanted.setdefault((p.name, unit.render()), p)
        order = {p.name: i for i, p in enumerate(self.ontology.predicates)}
        calls = sorted(wanted.items(), key=lambda item: order[item[0][0]])  # stable sort
        # With k calls in flight, a window of 4k is fetched at once and then taken in order: a dead server
        # meets at most one window before the failure streak stops the run.
        window = max(1, 4 * self.concurrency)
        for start in range(0, len(calls), window):
            chunk = calls[start:start + window]
            self.client.prefetch([(self.relations[name], shown, relation_schema(p), self.MAX_RELATION_TOKENS)
                                  for (name, shown), p in chunk], self.concurrency)
            for (name, shown), p in chunk:
                try:
                    self._ahead[(name, shown)] = self.client.chat_json(
                        self.relations[name], shown, relation_schema(p), self.MAX_RELATION_TOKENS,
                        validate=validate_relation_reply)
                except ModelServerDown:
                    self._ahead.clear()
                    self.client.prefetched.clear()
                    raise
                except ModelCallFailed as e:
                    self._ahead[(name, shown)] = e

    def call_keys(self, units: list[Unit]) -> set[str]:
        """The cache key of every call reading `units` makes (what a replay file of them must hold)."""
        return {self.call_key(p, unit) for unit in units for p in relations_of(self.ontology, unit)}

    def call_key(self, p: Predicate, unit: Unit) -> str:
        """The cache key of the call asking the model whether `unit` states relation `p`."""
        return call_key(self.client.model, self.relations[p.name], unit.render(), relation_schema(p),
                        self.MAX_RELATION_TOKENS)

    def extract(self, page: StoredPage) -> Extraction:
        tally = _Tally()
        for unit in readable_units(self.units, page.body, page.title):
            self._read(unit, tally)
        return Extraction(tuple(tally.triples), tally.tokens_in, tally.tokens_out, estimated=False,
                          issue="; ".join(dict.fromkeys(tally.issues)), cached=tally.cached)

    def extract_unit(self, unit: Unit) -> list[Triple]:
        """What one statement yields, grounded (for measuring extraction against hand-labelled units)."""
        tally = _Tally()
        self._read(unit, tally)
        return tally.triples

    def _read(self, unit: Unit, tally: _Tally) -> None:
        for t in self._relations(unit, tally):
            predicate = self.ontology[t.predicate]
            kept = ground(t, predicate, unit.text, unit.context)
            if kept is None and (swapped := value_given_as_subject(t, predicate, unit)) is not None:
                kept = ground(swapped, predicate, unit.text, unit.context)
            if kept is None:
                continue
            if predicate.fixed_subject is None:  # a chapter heading taken for the subject: the own heading is it
                kept = Triple(subject_from_own_heading(kept.subject, unit.trail, unit.text), kept.predicate,
                              kept.object)
            # A value written in a list brings the list's other values: one reply names one of them.
            for obj in enumeration(kept.object, predicate.object_pattern, unit.text):
                triple = kept if obj == kept.object else Triple(kept.subject, kept.predicate, obj)
                if triple not in tally.triples and (triple is kept or not overlap(kept.subject, obj)):
                    tally.triples.append(triple)

    def _ask(self, p: Predicate, unit: Unit, tally: _Tally) -> ChatReply | None:
        shown = unit.render()
        try:
            ahead = self._ahead.pop((p.name, shown), None)
            if isinstance(ahead, ModelCallFailed):
                raise ahead
            reply = ahead or self.client.chat_json(self.relations[p.name], shown, relation_schema(p),
                                                   self.MAX_RELATION_TOKENS, validate=validate_relation_reply)
        except ModelCallFailed as e:
            tally.issues.append(f"model call failed: {e}")
            return None
        tally.tokens_in += reply.input_tokens
        tally.tokens_out += reply.output_tokens
        tally.cached = tally.cached and reply.cached
        return reply

    def _relations(self, unit: Unit, tally: _Tally) -> list[Triple]:
        """One call per relation whose cues the unit or its section uses: a unit that speaks of no relation
        is not asked about any, and one that speaks of prices is not asked about uptime."""
        found = []
        for p in relations_of(self.ontology, unit):
            reply = self._ask(p, unit, tally)
            if reply is None:
                continue
            states, subject, obj, issue = parse_relation(reply.content)
            if issue:
                tally.issues.append(issue)
            elif states and (obj or subject) and (subject or p.fixed_subject):
                # an empty object stays: the reply may have put the value in the subject (value_given_as_subject)
                found.append(Triple(subject or p.fixed_subject or "", p.name, obj))
        return found


def value_given_as_subject(t: Triple, predicate: Predicate, unit: Unit) -> Triple | None:
    """A reply that put the value in the subject's place ("subject": "inquiries18f@gsa.gov", "object": "" for
    "Please email us at inquiries18f@gsa.gov"): the subject, when it is wholly a value of the relation's narrow
    kind (an address, an amount, a duration, a person...) written in the statement and the object is not
    written there, is the value, and the statement is about its nearest heading that names a topic."""
    subject, obj = t.subject.strip(), t.object.strip()
    if (predicate.fixed_subject is not None or broad(predicate.object_pattern) or not subject
            or not re.fullmatch(predicate.object_pattern, subject)
            or not written_whole(subject, unit.text) or obj and written_whole(obj, unit.text)):
        return None
    topic = nearest_topic(unit.trail)
    return Triple(topic, t.predicate, subject) if topic else None


def readable_units(units: Callable[[str, str], list[Unit]], body: str, title: str) -> list[Unit]:
    """The units of a page the extractor reads. No fact sentence is longer (the ontology never matches one)."""
    return [u for u in units(body, title) if len(u.text) <= MAX_SENTENCE_CHARS]


def relations_of(ontology: Ontology, unit: Unit) -> list[Predicate]:
    """The relations a unit is asked about: those with a cue in the statement's own section (not a chapter
    heading above it) and a value of their kind in the statement (grounding.relations_to_ask)."""
    return relations_to_ask(unit.text, ontology.predicates, unit.own_section)


def extraction_calls(ontology: Ontology, units: Callable[[str, str], list[Unit]],
                     pages: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
    """The distinct calls (relation, what the model is shown) the extractor makes reading these pages (body,
    title): what a run with an empty call cache pays for them, counted before any model is asked."""
    return {(p.name, u.render()) for body, title in pages for u in readable_units(units, body, title)
            for p in relations_of(ontology, u)}
