"""The model-backed extractor and reader. Prompts are written from the world's ontology, never by hand,
and every prompt has an id and a hash that are recorded with what it produced.

A reply that is not JSON, has the wrong shape or names an unknown predicate is a recorded outcome: the
page yields the facts that were well-formed (maybe none) and the reason is kept; an answer abstains.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from driftlab_dagster.config import PROMPT_VERSIONS

from .extraction import Extraction, extraction_prompt
from .models import CachedClient, ModelCallFailed
from .ontology import Ontology, Triple
from .readers import Evidence, HopAnswer
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


def extraction_schema(ontology: Ontology) -> dict:
    triple = {"type": "object", "additionalProperties": False, "required": ["subject", "predicate", "object"],
              "properties": {"subject": {"type": "string"}, "predicate": {"type": "string", "enum": ontology.names},
                             "object": {"type": "string"}}}
    return {"type": "object", "additionalProperties": False, "required": ["facts"],
            "properties": {"facts": {"type": "array", "items": triple}}}


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


def parse_facts(content: str, ontology: Ontology) -> tuple[list[Triple], str]:
    """Triples from a model reply, and a reason when something was dropped ("" when all was well)."""
    try:
        data = json.loads(_outermost_object(content))
    except json.JSONDecodeError:
        return [], "reply is not JSON"
    if not isinstance(data, dict) or not isinstance(data.get("facts"), list):
        return [], "reply has no facts list"
    triples, dropped = [], []
    for item in data["facts"]:
        if not isinstance(item, dict):
            dropped.append("a fact that is not an object")
            continue
        s, p, o = (str(item.get(k, "")).strip() for k in ("subject", "predicate", "object"))
        if not (s and p and o):
            dropped.append("a fact with an empty field")
        elif p not in ontology:
            dropped.append(f"unknown predicate {p!r}")
        else:
            triples.append(Triple(s, p, o))
    return triples, "; ".join(dict.fromkeys(dropped))


def _outermost_object(text: str) -> str:
    # Small models wrap JSON in code fences or add a sentence: keep the outermost object.
    start, end = text.find("{"), text.rfind("}")
    return text[start:end + 1] if 0 <= start < end else text


def extraction_prompt_text(ontology: Ontology, prompt_version: str) -> str:
    return extraction_prompt(ontology) if prompt_version == "zero-shot-v1" else few_shot_prompt(ontology)


def model_extractor_id(model: str, prompt_version: str, ontology: Ontology) -> str:
    """kind:model:prompt version:prompt hash. The hash changes whenever the ontology changes the prompt."""
    return f"model:{model}:{prompt_version}:{prompt_hash(extraction_prompt_text(ontology, prompt_version))}"


def model_reader_id(model: str) -> str:
    return f"model:{model}:reader-v1:{prompt_hash(NAIVE_PROMPT + VERSIONED_PROMPT)}"


class ModelExtractor:
    """Reads a page with a local model; tokens come from the server's usage fields."""

    kind = "model"

    def __init__(self, ontology: Ontology, client: CachedClient, prompt_version: str = "few-shot-v1",
                 extractor_id: str | None = None):
        if prompt_version not in EXTRACTION_PROMPTS:
            raise ValueError(f"unknown extraction prompt {prompt_version!r}: use one of {EXTRACTION_PROMPTS}")
        self.ontology, self.client, self.prompt_version = ontology, client, prompt_version
        self.prompt = extraction_prompt_text(ontology, prompt_version)
        self.schema = extraction_schema(ontology)
        # The id the run was configured with (the graph's code version), stored on every fact it writes.
        self.id = extractor_id or model_extractor_id(client.model, prompt_version, ontology)

    def extract(self, page: StoredPage) -> Extraction:
        try:
            reply = self.client.chat_json(self.prompt, page.body, self.schema)
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
_HEDGE_PHRASES = re.compile(r"\b(might|may) be (out ?dated|stale)|not sure|as of|possibly outdated|conflict",
                            re.IGNORECASE)


def evidence_block(evidence: list[Evidence], versioned: bool) -> str:
    lines = []
    for e in evidence:
        tag = ""
        if versioned:
            dated = "undated" if e.date.year < 1900 else f"dated {e.date:%Y-%m-%d}"
            extracted = f", extracted {e.extracted_at:%Y-%m-%d}" if e.extracted_at else ""
            changed = ", changed since the graph last read it" if e.page_ahead_of_graph else ""
            tag = f"[{'graph' if e.from_graph else 'page'} {e.source}, {dated}{extracted}{changed}] "
        lines.append(f"- {tag}{e.text}")
    return "\n".join(lines)


class ModelReader:
    """Asks a local model for one hop's answer as JSON. Staleness is recorded two ways, separately: the
    model's own possibly_stale flag, and hedge phrases in its answer text."""

    def __init__(self, ontology: Ontology, client: CachedClient, reader_id: str | None = None):
        self.ontology, self.client = ontology, client
        self.id = reader_id or model_reader_id(client.model)

    def read(self, entity: str, predicate: str, evidence: list[Evidence], versioned: bool) -> HopAnswer:
        if not evidence:
            # Given nothing, small models invent numbers; "not in the graph" is an answer in itself.
            return HopAnswer(None, False, "no evidence")
        user = f"Evidence:\n{evidence_block(evidence, versioned)}\n\nQuestion: {self.ontology[predicate].sub_question(entity)}"
        try:
            reply = self.client.chat_json(VERSIONED_PROMPT if versioned else NAIVE_PROMPT, user, _ANSWER_SCHEMA)
        except ModelCallFailed as e:
            return HopAnswer(None, False, f"model call failed: {e}")
        try:
            data = json.loads(_outermost_object(reply.content))
            answer = str(data.get("answer", "")).strip() if isinstance(data, dict) else ""
            flagged = isinstance(data, dict) and data.get("possibly_stale") is True
            if not isinstance(data, dict) or "answer" not in data:
                return HopAnswer(None, False, "reply has no answer field")
        except json.JSONDecodeError:
            return HopAnswer(None, False, "reply is not JSON")
        phrase = bool(_HEDGE_PHRASES.search(answer))
        if not answer or "unknown" in answer.lower():
            return HopAnswer(None, flagged or phrase, "model said unknown", flagged=flagged, phrase=phrase)
        return HopAnswer(answer, flagged or phrase, "model flagged" if flagged else "", flagged=flagged, phrase=phrase)


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
