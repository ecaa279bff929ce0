"""The ontology: each predicate's sentence template, patterns and sub-question, declared once.

Like the seed post's `Say` class, a predicate's `sentence` is the single source of every fact sentence:
pages are rendered from it, and the regex extractor and the deterministic reader parse with a pattern
derived from it. Nothing else in the code spells a fact sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import NamedTuple

# Sentences end at ., ! or ? followed by white space, or at a line break (titles sit on their own line).
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")

# A fact sentence is short: a subject, a few fixed words and an object. A longer "sentence" is prose, or a
# page that never ends a sentence, and trying every predicate's pattern on it is where a backtracking
# shape would spend its time: never matching such a sentence bounds the regex work per sentence, so even
# a polynomial pattern stays cheap. The world loader rejects a fact that could render longer than this.
MAX_SENTENCE_CHARS = 1000


class Triple(NamedTuple):
    """One extracted claim: subject, predicate, object, as written in the text."""

    subject: str
    predicate: str
    object: str


@dataclass(frozen=True)
class Predicate:
    """One relation of the ontology."""

    name: str
    sentence: str  # template with {subject} and {object}
    subject_pattern: str | None  # regex of the subject's shape; None when the subject is fixed
    object_pattern: str
    fixed_subject: str | None
    meaning: str  # one line for the extraction prompt
    question: str  # the sub-question a model reader is asked, with {subject}
    query: str  # words appended to the entity for a retrieval query on a later hop
    is_rename: bool = False
    # worked examples of an open relation: (sentence, subject, object, the section above it or "")
    examples: tuple[tuple[str, str, str, str], ...] = ()
    open: bool = False  # declared by name and description only: its sentence shows a stored fact, never parses prose
    cues: tuple[str, ...] = ()  # words, phrases or symbols a statement of it uses (open relations that declare them)

    def render(self, subject: str, obj: str) -> str:
        return self.sentence.replace("{subject}", subject).replace("{object}", obj)

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        """The sentence template turned into an anchored regex with named groups."""
        return re.compile(sentence_regex(self.sentence, self.subject_pattern, self.object_pattern))

    def match(self, sentence: str) -> Triple | None:
        if len(sentence) > MAX_SENTENCE_CHARS:
            return None  # not a fact sentence (see MAX_SENTENCE_CHARS); skipping it bounds the regex work
        m = self.pattern.match(sentence)
        if m is None:
            return None
        subject = self.fixed_subject if self.fixed_subject is not None else m.group("subject").strip()
        return Triple(subject, self.name, m.group("object").strip())

    def sub_question(self, subject: str, asked: str = "") -> str:
        """How a reader is asked this relation of `subject`: the relation's own question when it has one,
        else the question as a person asked it (`asked`, on the first hop), else a plain question built
        from the relation's name."""
        if self.question:
            return self.question.replace("{subject}", subject)
        if asked:
            return asked
        return f"What is the {self.name.replace('_', ' ')} of {subject}? Answer with the value only."


def sentence_regex(sentence: str, subject_pattern: str | None, object_pattern: str) -> str:
    """The source of a predicate's anchored pattern. A function of its own so that the world loader can
    compile it at load time and name the predicate when a shape does not fit into its sentence."""
    regex = []
    for part in re.split(r"(\{subject\}|\{object\})", sentence):
        if part == "{subject}":
            regex.append(f"(?P<subject>{subject_pattern})")
        elif part == "{object}":
            regex.append(f"(?P<object>{object_pattern})")
        else:
            regex.append(re.escape(part))
    return "^" + "".join(regex) + "$"


class Ontology:
    """The predicates in match order: the first whose pattern matches a sentence claims it."""

    def __init__(self, predicates: list[Predicate]):
        self.predicates = predicates
        self.by_name = {p.name: p for p in predicates}

    def __contains__(self, name: str) -> bool:
        return name in self.by_name

    @property
    def described_count(self) -> int:
        """How many relations are declared by description for prose (open) rather than by a pattern."""
        return sum(p.open for p in self.predicates)

    def __getitem__(self, name: str) -> Predicate:
        return self.by_name[name]

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.predicates]

    def render(self, predicate: str, subject: str, obj: str) -> str:
        return self.by_name[predicate].render(subject, obj)

    def parse(self, text: str) -> tuple[Triple, ...]:
        """Every fact sentence in `text`, in reading order. Cached: the corpus repeats itself a lot."""
        return _parse_cached(self, text)

    def rename_predicates(self) -> set[str]:
        return {p.name for p in self.predicates if p.is_rename}


@lru_cache(maxsize=65536)
def _parse_cached(ontology: Ontology, text: str) -> tuple[Triple, ...]:
    found = []
    for raw in _SENTENCE_BREAK.split(text):
        sentence = raw.strip()
        if not sentence:
            continue
        for predicate in ontology.predicates:
            triple = predicate.match(sentence)
            if triple is not None:
                found.append(triple)
                break
    return tuple(found)


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_BREAK.split(text) if s.strip()]
