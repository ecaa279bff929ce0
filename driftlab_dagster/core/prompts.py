"""The prompts a model is sent, written from the world's ontology, never by hand, and the registry of their
versions. A version names exactly one prompt text; its hash is part of the extractor id or reader id that
every fact and answer row stores, so lineage names what ran. Settings read the registries below; an old
version is retired by removing it here (see BENCHMARKS.md, "Retired prompt versions", for the tag that
still runs them).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

from .grounding import GROUNDING_VERSION
from .made_up_names import MadeUpNames
from .ontology import Ontology, Predicate
from .replies import STALE_MARKER

# Sentences with numbers, names and durations that state none of a world's relations.
NOT_FACTS = ["The office has a rooftop garden and lunch is served at noon.",
             "Write the incident summary within three working days.",
             "Quarterly billing gets one month free."]


def prompt_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


# ---------------------------------------------------------------------------------------------------------
# Extraction: relation-v1 asks about one relation at a time.


def relation_schema(predicate: Predicate) -> dict:
    """The reply one relation's call is constrained to: whether the passage states it, and its parts."""
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
            decoy = other.render(other.fixed_subject or names.fit(other.subject_pattern),
                                 names.fit(other.object_pattern))
            lines.append(f"Sentence: {decoy}")
            lines.append("JSON: " + json.dumps({"states": False, **({} if p.fixed_subject else {"subject": ""}),
                                                "object": ""}))
        lines.append(f"Sentence: {NOT_FACTS[i % len(NOT_FACTS)]}")
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
        "A passage may come with its section (the page title and the headings above it): the subject may be "
        "named there.",
    ]
    def shown(sentence: str, section: str) -> list[str]:
        return ([f"Section: {section}"] if section else []) + [f"Passage: {sentence}"]

    examples = p.examples[:2]
    decoys = other.examples[:1] if other is not p else ()
    if examples or decoys:
        lines += ["", "Examples:"]
    for sentence, subject, obj, section in examples:
        lines += [*shown(sentence, section), "JSON: " + reply(True, subject, obj)]
    for sentence, _, _, section in decoys:
        lines += [*shown(sentence, section), "JSON: " + reply(False)]
    lines += [f"Passage: {NOT_FACTS[i % len(NOT_FACTS)]}", "JSON: " + reply(False)]
    return "\n".join(lines)


# version -> the builder of its per-relation prompts, from the ontology and the world's text (made-up
# example names avoid every name the world uses).
EXTRACTION_PROMPTS: dict[str, Callable[[Ontology, str], dict[str, str]]] = {
    "relation-v1": relation_prompts,
}
DEFAULT_EXTRACTION_PROMPT = "relation-v1"


def extraction_prompt_text(ontology: Ontology, prompt_version: str, world_text: str = "") -> str:
    """Every prompt the version sends for this ontology, in order: what the extractor id hashes."""
    return "\n\n".join(EXTRACTION_PROMPTS[prompt_version](ontology, world_text).values())


def model_extractor_id(model: str, prompt_version: str, ontology: Ontology, world_text: str = "") -> str:
    """kind:model:prompt version:hash. The hash changes whenever the ontology (or, for examples made up to
    avoid the world's names, the world) changes the prompt, and whenever grounding keeps other facts from the
    same replies (GROUNDING_VERSION)."""
    text = extraction_prompt_text(ontology, prompt_version, world_text)
    return f"model:{model}:{prompt_version}:{prompt_hash(text + chr(10) + GROUNDING_VERSION)}"


# ---------------------------------------------------------------------------------------------------------
# Reading: reader-v3 asks for the answer alone, as plain text. No JSON grammar to sample under and a reply
# of a few tokens: most of a call's time is then reading the prompt, which focused evidence keeps short.

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

# version -> (the prompt for designs without dates, the prompt for the versioned design)
READER_PROMPTS: dict[str, tuple[str, str]] = {
    "reader-v3": (PLAIN_NAIVE_PROMPT, PLAIN_VERSIONED_PROMPT),
}
DEFAULT_READER_PROMPT = "reader-v3"


def model_reader_id(model: str, version: str = DEFAULT_READER_PROMPT) -> str:
    return f"model:{model}:{version}:{prompt_hash(''.join(READER_PROMPTS[version]))}"
