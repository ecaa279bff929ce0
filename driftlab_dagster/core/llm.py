"""The model-backed extractor and reader. Prompts are written from the world's ontology, never by hand,
and every prompt has an id and a hash that are recorded with what it produced.

A reply that is not JSON, has the wrong shape or names an unknown predicate is a recorded outcome: the
page yields the facts that were well-formed (maybe none) and the reason is kept; an answer abstains.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Callable

from driftlab_dagster.config import PROMPT_VERSIONS

from .extraction import Extraction, extraction_prompt
from .grounding import MadeUpNames, cue_words, ground, likeliest_relations, speaks_of_any
from .models import CachedClient, ChatReply, ModelCallFailed, ModelServerDown
from .ontology import MAX_SENTENCE_CHARS, Ontology, Predicate, Triple, split_sentences
from .readers import Evidence, HopAnswer
from .replies import (
    STALE_MARKER,
    parse_answer,
    parse_plain_answer,
    parse_facts,
    parse_relation,
    validate_answer_reply,
    validate_facts_reply,
    validate_plain_answer,
    validate_relation_reply,
)
from .store import StoredPage

# ---------------------------------------------------------------------------------------------------------
# Extraction

EXTRACTION_PROMPTS = PROMPT_VERSIONS  # declared once, with the settings that choose among them

# Candidate example values for few-shot examples; each predicate takes the first that fits its shape.
_EXAMPLE_VALUES = ["Basic", "Falcon", "Billing service", "Ada Lovelace", "12", "98.5", "Tessaly Widget",
                   "fleet dashboard", "Kestrel", "Grace Hopper", "Invoicing service", "7"]
_NOISE_EXAMPLE = "The office has a rooftop garden. Lunch is served at noon."


def _example_value(pattern: str | None, avoid: str = "") -> str:
    for value in _EXAMPLE_VALUES:
        if value != avoid and pattern is not None and re.fullmatch(pattern, value):
            return value
    return "Example"


def extraction_schema(ontology: Ontology, max_facts: int | None = None) -> dict:
    triple = {"type": "object", "additionalProperties": False, "required": ["subject", "predicate", "object"],
              "properties": {"subject": {"type": "string"}, "predicate": {"type": "string", "enum": ontology.names},
                             "object": {"type": "string"}}}
    facts: dict = {"type": "array", "items": triple, **({"maxItems": max_facts} if max_facts else {})}
    return {"type": "object", "additionalProperties": False, "required": ["facts"], "properties": {"facts": facts}}


def few_shot_prompt(ontology: Ontology) -> str:
    """The zero-shot prompt plus worked examples rendered from the ontology's own sentences with made-up
    names, so the model sees each predicate's wording, subject and object shape, and a noise sentence."""
    lines = [extraction_prompt(ontology), "", "Examples (made-up names):"]
    for p in ontology.predicates:
        subject = p.fixed_subject or _example_value(p.subject_pattern)
        obj = _example_value(p.object_pattern, avoid=subject)
        sentence = p.render(subject, obj)
        lines.append(f"Document: {sentence}")
        lines.append("JSON: " + json.dumps({"facts": [{"subject": subject, "predicate": p.name, "object": obj}]},
                                           ensure_ascii=False))
    lines.append(f"Document: {_NOISE_EXAMPLE}")
    lines.append('JSON: {"facts": []}')
    return "\n".join(lines)


def prompt_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def sentence_prompt(ontology: Ontology, world_text: str) -> str:
    """One sentence in, the facts it states out. Each relation is shown in its own wording with made-up
    values that the world never mentions (so no example states a false fact about a real name), followed
    by sentences that look like facts and are not."""
    names = MadeUpNames(world_text)
    lines = [
        "You read ONE sentence from a company wiki and list the facts it states, as JSON:",
        '{"facts": [{"subject": "", "predicate": "", "object": ""}]}',
        "Relations:",
        *(f"- {p.name}: {p.meaning}" for p in ontology.predicates),
        "Copy the subject and the object from the sentence, word for word, and nothing else.",
        'A sentence that states none of these relations gives {"facts": []}.',
        "",
        "Examples (made-up names):",
    ]
    for p in ontology.predicates:
        subject = p.fixed_subject or names.fit(p.subject_pattern)
        obj = names.fit(p.object_pattern)
        lines.append(f"Sentence: {p.render(subject, obj)}")
        lines.append("JSON: " + json.dumps({"facts": [{"subject": subject, "predicate": p.name, "object": obj}]},
                                           ensure_ascii=False))
    for sentence in _NOT_FACTS:
        lines.append(f"Sentence: {sentence}")
        lines.append('JSON: {"facts": []}')
    return "\n".join(lines)


def relation_schema(predicate: Predicate) -> dict:
    parts = ["states", "object"] if predicate.fixed_subject else ["states", "subject", "object"]
    props: dict = {"states": {"type": "boolean"}, "subject": {"type": "string"}, "object": {"type": "string"}}
    return {"type": "object", "additionalProperties": False, "required": parts,
            "properties": {k: v for k, v in props.items() if k in parts}}


def relation_prompts(ontology: Ontology, world_text: str) -> dict[str, str]:
    """One prompt per relation: what it means, two worked examples in its own wording with made-up values
    the world never mentions, one sentence of another relation and one of no relation. Asked about one
    relation at a time, a small model copies the parts in the right roles."""
    prompts = {}
    for i, p in enumerate(ontology.predicates):
        names = MadeUpNames(world_text)
        other = ontology.predicates[(i + 1) % len(ontology.predicates)]
        if p.open:  # a relation declared by description: its own examples, if the world gives some
            prompts[p.name] = _open_relation_prompt(p, other, i)
            continue
        fields = '"states": true, "object": ""' if p.fixed_subject else '"states": true, "subject": "", "object": ""'
        lines = [
            "You check whether ONE sentence from a company wiki states this relation, and copy its parts.",
            f"Relation {p.name}: {p.meaning}.",
            f"Reply with JSON only: {{{fields}}}; states is false when the sentence does not state it.",
            "Copy the parts from the sentence, word for word, and nothing else.",
            "",
            "Examples (made-up names):",
        ]
        for example in range(2):
            subject = p.fixed_subject or names.fit(p.subject_pattern, compound=example == 1)
            obj = names.fit(p.object_pattern, compound=example == 1)
            lines.append(f"Sentence: {p.render(subject, obj)}")
            lines.append("JSON: " + json.dumps({"states": True, **({} if p.fixed_subject else {"subject": subject}),
                                                "object": obj}, ensure_ascii=False))
        if other is not p:
            decoy = other.render(other.fixed_subject or names.fit(other.subject_pattern), names.fit(other.object_pattern))
            lines.append(f"Sentence: {decoy}")
            lines.append("JSON: " + json.dumps({"states": False, **({} if p.fixed_subject else {"subject": ""}),
                                                "object": ""}))
        lines.append(f"Sentence: {_NOT_FACTS[i % len(_NOT_FACTS)]}")
        lines.append("JSON: " + json.dumps({"states": False, **({} if p.fixed_subject else {"subject": ""}),
                                            "object": ""}))
        prompts[p.name] = "\n".join(lines)
    return prompts


def _open_relation_prompt(p: Predicate, other: Predicate, i: int) -> str:
    def reply(states: bool, subject: str = "", obj: str = "") -> str:
        return json.dumps({"states": states, **({} if p.fixed_subject else {"subject": subject}), "object": obj},
                          ensure_ascii=False)

    fields = '"states": true, "object": ""' if p.fixed_subject else '"states": true, "subject": "", "object": ""'
    lines = [
        "You check whether ONE passage from a company wiki states this relation, and copy its parts.",
        f"Relation {p.name}: {p.meaning}.",
        f"Reply with JSON only: {{{fields}}}; states is false when the passage does not state it.",
        "Copy the parts from the passage, word for word, and nothing else.",
    ]
    examples = [(s, subj, obj) for s, subj, obj in p.examples[:2]]
    decoys = [s for s, _, _ in other.examples[:1]] if other is not p else []
    if examples or decoys:
        lines += ["", "Examples:"]
    for sentence, subject, obj in examples:
        lines += [f"Passage: {sentence}", "JSON: " + reply(True, subject, obj)]
    for sentence in decoys:
        lines += [f"Passage: {sentence}", "JSON: " + reply(False)]
    lines += [f"Passage: {_NOT_FACTS[i % len(_NOT_FACTS)]}", "JSON: " + reply(False)]
    return "\n".join(lines)


# Sentences with numbers, names and durations that state none of a world's relations.
_NOT_FACTS = ["The office has a rooftop garden and lunch is served at noon.",
              "Write the incident summary within three working days.",
              "Quarterly billing gets one month free."]


def extraction_prompt_text(ontology: Ontology, prompt_version: str, world_text: str = "") -> str:
    """The prompt (for relation-v1, every relation's prompt in order): what the extractor id hashes."""
    if prompt_version == "zero-shot-v1":
        return extraction_prompt(ontology)
    if prompt_version == "few-shot-v1":
        return few_shot_prompt(ontology)
    if prompt_version == "relation-v1":
        return "\n\n".join(relation_prompts(ontology, world_text).values())
    return sentence_prompt(ontology, world_text)


def model_extractor_id(model: str, prompt_version: str, ontology: Ontology, world_text: str = "") -> str:
    """kind:model:prompt version:prompt hash. The hash changes whenever the ontology (or, for examples made
    up to avoid the world's names, the world) changes the prompt."""
    text = extraction_prompt_text(ontology, prompt_version, world_text)
    return f"model:{model}:{prompt_version}:{prompt_hash(text)}"


READER_PROMPTS = ("reader-v3", "reader-v2", "reader-v1")


def model_reader_id(model: str, version: str = "reader-v3") -> str:
    prompts = PLAIN_NAIVE_PROMPT + PLAIN_VERSIONED_PROMPT if version == "reader-v3" else NAIVE_PROMPT + VERSIONED_PROMPT
    return f"model:{model}:{version}:{prompt_hash(prompts)}"


@dataclass
class _Tally:
    """What one page's extraction found and cost, across its calls."""

    triples: list[Triple] = field(default_factory=list)
    issues: list[str] = field(default_factory=list)
    tokens_in: int = 0
    tokens_out: int = 0
    cached: bool = True


class ModelExtractor:
    """Reads a page with a local model; tokens come from the server's usage fields.

    `sentence-v1` asks about one sentence at a time, with a schema whose enum is the ontology's predicates,
    and keeps a triple only when the sentence states its subject and object (trimmed to the predicate's
    shapes): sentences repeat across pages and days, so each distinct sentence is asked once, ever. The
    page-level prompts (`zero-shot-v1`, `few-shot-v1`) send the whole page and keep what comes back.
    """

    kind = "model"
    MAX_FACT_TOKENS = 200  # a sentence states a handful of facts; a reply never needs more
    MAX_RELATION_TOKENS = 80  # one relation's two parts
    ground = True  # keep only what the sentence states (the extraction bench turns it off to measure it)

    def __init__(self, ontology: Ontology, client: CachedClient, prompt_version: str = "relation-v1",
                 extractor_id: str | None = None, world_text: str = "",
                 units: Callable[[str], list[str]] = split_sentences):
        if prompt_version not in EXTRACTION_PROMPTS:
            raise ValueError(f"unknown extraction prompt {prompt_version!r}: use one of {EXTRACTION_PROMPTS}")
        self.ontology, self.client, self.prompt_version = ontology, client, prompt_version
        self.prompt = extraction_prompt_text(ontology, prompt_version, world_text)
        self.schema = extraction_schema(ontology, max_facts=4 if prompt_version == "sentence-v1" else None)
        self.relations = (relation_prompts(ontology, world_text) if prompt_version == "relation-v1" else {})
        self.units = units  # how a page splits into what one call reads: sentences, or prose units
        # The id the run was configured with (the graph's code version), stored on every fact it writes.
        self.id = extractor_id or model_extractor_id(client.model, prompt_version, ontology, world_text)
        self._ahead: dict[tuple[str, str], ChatReply | ModelCallFailed] = {}  # see read_ahead

    def _readable_units(self, page: StoredPage) -> list[str]:
        # No fact sentence is this long (the ontology never matches one either).
        return [u for u in self.units(page.body) if len(u) <= MAX_SENTENCE_CHARS]

    def read_ahead(self, pages: list[StoredPage]) -> None:
        """Ask, now, every relation call that extracting `pages` will make, grouped by relation: a model
        server reuses the evaluated prompt it shares with the call before (llama.cpp's prefix match), and
        calls for one relation share its whole prompt but the sentence. Page order alternates relations,
        so each call re-reads the worked examples; in this order, only the first of each relation does.
        The replies wait in `_ahead` for `extract`, which takes each one once, so cost and cache accounting
        are the same as asking page by page."""
        if self.prompt_version != "relation-v1":
            return
        wanted: dict[tuple[str, str], Predicate] = {}
        for page in pages:
            for sentence in self._readable_units(page):
                for p in likeliest_relations(sentence, self.ontology.predicates):
                    wanted.setdefault((p.name, sentence), p)
        order = {p.name: i for i, p in enumerate(self.ontology.predicates)}
        for (name, sentence), p in sorted(wanted.items(), key=lambda item: order[item[0][0]]):  # stable sort
            try:
                self._ahead[(name, sentence)] = self.client.chat_json(
                    self.relations[name], sentence, relation_schema(p), self.MAX_RELATION_TOKENS,
                    validate=validate_relation_reply)
            except ModelServerDown:
                self._ahead.clear()
                raise
            except ModelCallFailed as e:
                self._ahead[(name, sentence)] = e

    def extract(self, page: StoredPage) -> Extraction:
        if self.prompt_version not in ("sentence-v1", "relation-v1"):
            return self._extract_page(page)
        tally = _Tally()
        for sentence in self._readable_units(page):
            found = (self._sentence(sentence, tally) if self.prompt_version == "sentence-v1"
                     else self._relations(sentence, tally))
            for t in found:
                kept = ground(t, self.ontology[t.predicate], sentence) if self.ground else t
                if kept is not None and kept not in tally.triples:
                    tally.triples.append(kept)
        return Extraction(tuple(tally.triples), tally.tokens_in, tally.tokens_out, estimated=False,
                          issue="; ".join(dict.fromkeys(tally.issues)), cached=tally.cached)

    def _ask(self, system: str, sentence: str, schema: dict, tokens: int, validate, tally: "_Tally",  # type: ignore[no-untyped-def]
             relation: str = ""):
        try:
            ahead = self._ahead.pop((relation, sentence), None) if relation else None
            if isinstance(ahead, ModelCallFailed):
                raise ahead
            reply = ahead or self.client.chat_json(system, sentence, schema, tokens, validate=validate)
        except ModelCallFailed as e:
            tally.issues.append(f"model call failed: {e}")
            return None
        tally.tokens_in += reply.input_tokens
        tally.tokens_out += reply.output_tokens
        tally.cached = tally.cached and reply.cached
        return reply

    def _sentence(self, sentence: str, tally: "_Tally") -> list[Triple]:
        reply = self._ask(self.prompt, sentence, self.schema, self.MAX_FACT_TOKENS, validate_facts_reply, tally)
        if reply is None:
            return []
        found, issue = parse_facts(reply.content, self.ontology)
        if issue:
            tally.issues.append(issue)
        return found

    def _relations(self, sentence: str, tally: "_Tally") -> list[Triple]:
        """One call per relation whose cue words the sentence uses most: a sentence that speaks of no
        relation is not asked about any, and one that speaks of prices is not asked about uptime."""
        found = []
        for p in likeliest_relations(sentence, self.ontology.predicates):
            reply = self._ask(self.relations[p.name], sentence, relation_schema(p), self.MAX_RELATION_TOKENS,
                              validate_relation_reply, tally, relation=p.name)
            if reply is None:
                continue
            states, subject, obj, issue = parse_relation(reply.content)
            if issue:
                tally.issues.append(issue)
            elif states and obj and (subject or p.fixed_subject):
                found.append(Triple(subject or p.fixed_subject or "", p.name, obj))
        return found

    def _extract_page(self, page: StoredPage) -> Extraction:
        try:
            reply = self.client.chat_json(self.prompt, page.body, self.schema, validate=validate_facts_reply)
        except ModelCallFailed as e:
            return Extraction((), 0, 0, estimated=False, issue=f"model call failed: {e}")
        triples, issue = parse_facts(reply.content, self.ontology)
        return Extraction(tuple(triples), reply.input_tokens, reply.output_tokens, estimated=False, issue=issue,
                          cached=reply.cached)


# ---------------------------------------------------------------------------------------------------------
# Reading

_ANSWER_SCHEMA = {"type": "object", "additionalProperties": False, "required": ["answer", "possibly_stale"],
                  "properties": {"answer": {"type": "string"}, "possibly_stale": {"type": "boolean"}}}
_REPLY_FORMAT = 'Reply with JSON only: {"answer": "", "possibly_stale": false}.'
NAIVE_PROMPT = "\n".join([
    f"Answer the question using only the evidence. {_REPLY_FORMAT}",
    'If the evidence does not contain the answer, use "unknown" as the answer.',
])
VERSIONED_PROMPT = "\n".join([
    f"Answer the question using only the evidence. {_REPLY_FORMAT}",
    "Each evidence item has a date. Graph facts also show when they were extracted.",
    "If items disagree, answer with the newest one and set possibly_stale to true.",
    "If a page about the same subject is marked as changed since the graph last read it, set possibly_stale to true.",
    'If the evidence does not contain the answer, use "unknown" as the answer.',
])
# reader-v3: the answer alone, as plain text. No JSON grammar to sample under and a reply of a few tokens:
# most of a call's time is then reading the prompt, which focused evidence keeps short.
PLAIN_NAIVE_PROMPT = "\n".join([
    "Answer the question using only the evidence.",
    "Reply with the answer alone: a number, a name or a few words. If the evidence does not say, reply unknown.",
])
PLAIN_VERSIONED_PROMPT = "\n".join([
    "Answer the question using only the evidence.",
    "Reply with the answer alone: a number, a name or a few words. If the evidence does not say, reply unknown.",
    "Each evidence item has a date; graph facts also show when they were extracted.",
    f"If items disagree, answer from the newest and end your reply with {STALE_MARKER}.",
])
_HEDGE_PHRASES = re.compile(r"\b(might|may) be (out ?dated|stale)|not sure|as of|possibly outdated|conflict",
                            re.IGNORECASE)


MAX_EVIDENCE_CHARS = 900  # one page's share of a prompt a small model reads well (and fits its context)


def focus(text: str, entity: str, limit: int = MAX_EVIDENCE_CHARS) -> str:
    """A long page cut to the passages that name the entity (then the page's start), at most `limit`
    characters, in page order. Short pages (every templated one) pass unchanged."""
    if len(text) <= limit:
        return text
    from .units import prose_units

    units = prose_units(text)
    words = [w for w in re.findall(r"\w+", entity.casefold()) if len(w) > 2]
    about = [i for i, u in enumerate(units) if any(w in u.casefold() for w in words)]
    return _keep(units, about + list(range(len(units))), limit)


def focus_on(text: str, entity: str, cues: set[str], limit: int = MAX_EVIDENCE_CHARS) -> str:
    """The page's opening line and only the statements that bear on one hop: those naming the entity and
    using the relation's words, else those naming the entity, else those using the relation's words (a
    relation about the company names no entity). A page with none of them is reduced to its opening."""
    from .units import prose_units

    units = prose_units(text)
    if not units:
        return text[:limit]
    name = entity.casefold().strip()
    names = [bool(name) and name in u.casefold() for u in units]
    speaks = [speaks_of_any(u, cues) for u in units]
    tiers = ([i for i in range(len(units)) if names[i] and speaks[i]], [i for i in range(len(units)) if names[i]],
             [i for i in range(len(units)) if speaks[i]])
    chosen = next((tier for tier in tiers if tier), [])
    return _keep(units, [0, *chosen], limit)


def _keep(units: list[str], order: list[int], limit: int) -> str:
    """Units taken in `order` while they fit in `limit` characters, written back in page order."""
    keep: list[int] = []
    for i in order:
        if i not in keep and sum(len(units[j]) + 1 for j in keep) + len(units[i]) <= limit:
            keep.append(i)
    return " ".join(units[i] for i in sorted(keep))


def evidence_block(evidence: list[Evidence], versioned: bool, entity: str = "", cues: set[str] | None = None) -> str:
    """One line per evidence item; with `cues` (reader-v3), each item cut to the statements on the hop."""
    lines = []
    for e in evidence:
        tag = ""
        if versioned:
            dated = "undated" if e.date.year < 1900 else f"dated {e.date:%Y-%m-%d}"
            extracted = f", extracted {e.extracted_at:%Y-%m-%d}" if e.extracted_at else ""
            changed = ", changed since the graph last read it" if e.page_ahead_of_graph else ""
            tag = f"[{'graph' if e.from_graph else 'page'} {e.source}, {dated}{extracted}{changed}] "
        text = focus(e.text, entity) if cues is None else focus_on(e.text, entity, cues)
        lines.append(f"- {tag}{text}")
    return "\n".join(lines)


class ModelReader:
    """Asks a local model for one hop's answer. Staleness is recorded apart three ways: the model's own
    flag (possibly_stale, or reader-v3's end marker), hedge phrases in its answer text, and (reader-v2 on)
    code's reasons to doubt.

    reader-v1 is the post's reader: JSON under a grammar. reader-v2 caps the reply at 48 tokens and takes
    code's signals for the versioned design: they are shown to the model as one more line of evidence,
    and they hedge the answer whatever the model says, because a 0.5B model never hedges itself. reader-v3
    (the default) asks for the answer alone as plain text and shows each evidence item cut to the
    statements on the hop: no grammar to sample under, a reply of a few tokens and a prompt about half as
    long, so a call costs about half as much, and a page edit elsewhere on the page leaves the prompt, and
    so its cached reply, unchanged.
    """

    ANSWER_TOKENS = 48
    PLAIN_ANSWER_TOKENS = 24  # a name, a number, or "unknown", and the marker

    def __init__(self, ontology: Ontology, client: CachedClient, reader_id: str | None = None,
                 version: str = "reader-v3"):
        if version not in READER_PROMPTS:
            raise ValueError(f"unknown reader prompt {version!r}: use one of {READER_PROMPTS}")
        self.ontology, self.client, self.version = ontology, client, version
        self.takes_signals = version != "reader-v1"
        self.plain = version == "reader-v3"
        self.id = reader_id or model_reader_id(client.model, version)

    def read(self, entity: str, predicate: str, evidence: list[Evidence], versioned: bool,
             signals: list[str] | None = None) -> HopAnswer:
        if not evidence:
            # Given nothing, small models invent numbers; "not in the graph" is an answer in itself.
            return HopAnswer(None, False, "no evidence")
        signals = signals if self.takes_signals else None
        checks = f"\nChecks by code: {'; '.join(signals)}." if signals else ""
        cues = cue_words(self.ontology[predicate]) if self.plain else None
        user = (f"Evidence:\n{evidence_block(evidence, versioned, entity, cues)}{checks}\n\n"
                f"Question: {self.ontology[predicate].sub_question(entity)}")
        try:
            if self.plain:
                reply = self.client.chat_json(PLAIN_VERSIONED_PROMPT if versioned else PLAIN_NAIVE_PROMPT, user, None,
                                              self.PLAIN_ANSWER_TOKENS, validate=validate_plain_answer)
            else:
                reply = self.client.chat_json(VERSIONED_PROMPT if versioned else NAIVE_PROMPT, user, _ANSWER_SCHEMA,
                                              self.ANSWER_TOKENS if self.takes_signals else None,
                                              validate=validate_answer_reply)
        except ModelCallFailed as e:
            return HopAnswer(None, False, f"model call failed: {e}")
        answer, flagged, problem = (parse_plain_answer if self.plain else parse_answer)(reply.content)
        if answer is None:
            return HopAnswer(None, False, problem)
        phrase = bool(_HEDGE_PHRASES.search(answer))
        doubt = bool(signals)
        why = "; ".join(([f"code: {', '.join(signals)}"] if signals else []) + (["model flagged"] if flagged else []))
        if not answer or "unknown" in answer.lower():
            return HopAnswer(None, flagged or phrase or doubt, "; ".join(filter(None, ["model said unknown", why])),
                             flagged=flagged, phrase=phrase)
        return HopAnswer(answer, flagged or phrase or doubt, why, flagged=flagged, phrase=phrase)


@dataclass(frozen=True)
class TripleScore:
    """Extraction quality of one run against the templated ground truth."""

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
