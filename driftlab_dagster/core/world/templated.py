"""A templated world: pages rendered from templates over a state that events change, as in the seed post.

Each page is a list of text parts, facts (a predicate's sentence with its subject and object) and
conditions on the state. At step k the true state is the initial state plus the first k events; what one
scenario's pages show depends on its pages policy (every event reaches them, only the events a page is
canonical for, or none). Questions are filled in with the true state, so their expected answers follow it.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterator
from functools import cached_property
from typing import cast

from ..ontology import Ontology, Predicate
from ..units import Unit, sentence_units
from ..values import normalise
from . import NONE, Checkpoint, Page, Question, RecordChange, World
from .common import Located, NamingSpec, slug
from .templated_spec import PLACEHOLDER, BodyPart, EventSpec, FactPart, PageSpec, StateValue, WorldSpec


def _state_reads(parts: list[BodyPart]) -> set[str]:
    """The current-state values a body's rendering depends on: its placeholders (not `{initial.x}`, which is
    fixed) and the values its conditions test."""
    reads: set[str] = set()

    def text(t: str) -> None:
        reads.update(m.group(2) for m in PLACEHOLDER.finditer(t) if not m.group(1))

    for part in parts:
        if isinstance(part, str):
            text(part)
        elif isinstance(part, FactPart):
            for t in part.fact:
                text(t)
        else:
            reads.update(part.when or {})
            if part.when_changed is not None:
                reads.add(part.when_changed)
            reads |= _state_reads(part.then) | _state_reads(part.otherwise)
    return reads


_WORD_RUN = re.compile(r"\w+")
_WORD_CHAR = re.compile(r"\w")


class _Phrases:
    """Normalised values looked for, as values.states looks for one: a whole phrase of a normalised text.
    Wherever a phrase is stated, its first run of word characters is a whole word of the text, so a text is
    read once, trying only the phrases whose first word stands there: not once per phrase, which a 40,000-page
    world could not afford."""

    def __init__(self, phrases: list[str]):
        self.left = set(phrases)
        self.by_word: dict[str, list[tuple[str, int]]] = {}
        self.wordless: list[str] = []  # no word character at all ("-"): searched as the scorer searches
        for phrase in phrases:
            first = _WORD_RUN.search(phrase)
            if first is None:
                self.wordless.append(phrase)
            else:
                self.by_word.setdefault(first.group(0), []).append((phrase, first.start()))

    def strike(self, text: str) -> None:
        """Cross off every phrase `text` (normalised) states."""
        for phrase in self.wordless:
            if phrase in self.left and re.search(rf"(^|\W){re.escape(phrase)}($|\W)", text):
                self.left.discard(phrase)
        for m in _WORD_RUN.finditer(text):
            for phrase, offset in self.by_word.get(m.group(0), ()):
                start, end = m.start() - offset, m.start() - offset + len(phrase)
                if (phrase in self.left and start >= 0 and text.startswith(phrase, start)
                        and (start == 0 or not _WORD_CHAR.match(text, start - 1))
                        and (end == len(text) or not _WORD_CHAR.match(text, end))):
                    self.left.discard(phrase)


class TemplatedWorld(World):
    """A validated templated world file and everything the study derives from it."""

    def __init__(self, spec: WorldSpec, source: str = "<memory>"):
        self.spec = spec
        self.source = source
        self.ontology = Ontology(
            [
                Predicate(
                    name=name,
                    sentence=p.sentence,
                    subject_pattern=spec.shapes[p.subject] if p.subject else None,
                    object_pattern=spec.shapes[p.object],
                    fixed_subject=p.fixed_subject,
                    meaning=p.meaning,
                    question=p.question,
                    query=p.query,
                    is_rename=p.rename,
                )
                for name, p in spec.predicates.items()
            ]
        )
        start = spec.start.astimezone(dt.UTC).replace(tzinfo=None) if spec.start.tzinfo else spec.start
        self.start = start
        self._reads: dict[int, list[str]] = {}  # page index -> the state values its body reads (see _rendered)
        self._bodies: dict[tuple[str | int, ...], str] = {}
        self.checkpoints = [Checkpoint(0, start.date(), start)] + [
            Checkpoint(i + 1, (start + dt.timedelta(days=e.day)).date(), start + dt.timedelta(days=e.day))
            for i, e in enumerate(spec.events)
        ]

    @classmethod
    def from_json(cls, text: str, source: str = "<stored world>") -> TemplatedWorld:
        """The world as the `worlds` table stores it (its canonical JSON)."""
        return cls(WorldSpec.model_validate_json(text), source)

    # ----- identity -----
    @cached_property
    def canonical_json(self) -> str:
        # Key order is meaning here (predicates match in declared order, scenarios report in it): no sort_keys.
        return json.dumps(self.spec.model_dump(mode="json"), ensure_ascii=False)

    @property
    def id(self) -> str:
        """`id:` from the file, else the company name as a slug."""
        return self.spec.id or slug(self.spec.company)

    @property
    def company(self) -> str:
        return self.spec.company

    @property
    def text(self) -> str:
        return self.canonical_json

    @property
    def page_count(self) -> int:
        return len(self.spec.pages)

    @property
    def notes(self) -> tuple[str, ...]:
        return ()  # every page is rendered from the file itself: nothing is skipped or read with a caveat

    @property
    def question_ids(self) -> list[str]:
        return [q.id for q in self.spec.questions]

    # ----- scenarios -----
    @property
    def scenario_names(self) -> list[str]:
        return list(self.spec.scenarios)

    def scenario_pages_policy(self, scenario: str) -> str:
        return self.spec.scenarios[scenario].pages

    def scenario_graph_policy(self, scenario: str) -> str:
        return self.spec.scenarios[scenario].graph

    # ----- who may read what, and whom to believe -----
    def audience_of(self, page_id: str) -> str:
        return "public"

    def authority_rank(self, source: str, predicate: str) -> int:
        if source.startswith("record:"):
            return self.RECORD
        if source in self.spec.authority.drafts:
            return self.DRAFT
        if source in self.spec.authority.canonical.get(predicate, []):
            return self.CANONICAL
        return self.MENTION

    @property
    def naming(self) -> NamingSpec:
        return self.spec.naming

    # ----- state -----
    def state_at(self, step: int) -> dict[str, StateValue]:
        """The true state of the world after the first `step` events."""
        state = dict(self.spec.state)
        for event in self.spec.events[:step]:
            state.update(event.set)
        return state

    def page_state(self, scenario: str, step: int, page: PageSpec) -> dict[str, StateValue]:
        """What one page "knows" at a step: the pages policy of the scenario decides which events reach it."""
        policy = self.spec.scenarios[scenario].pages
        state = dict(self.spec.state)
        for event in self.spec.events[:step]:
            if policy == "all" or (policy == "canonical" and event.kind in page.canonical_for):
                state.update(event.set)
        return state

    def fill(self, text: str, state: dict[str, StateValue]) -> str:
        def value(m: re.Match[str]) -> str:
            source = self.spec.state if m.group(1) else state
            return str(source[m.group(2)])

        return PLACEHOLDER.sub(value, text)

    def render_body(self, parts: list[BodyPart], state: dict[str, StateValue]) -> str:
        pieces: list[str] = []
        for part in parts:
            if isinstance(part, str):
                pieces.append(part)
            elif isinstance(part, FactPart):
                predicate, subject, obj = part.fact
                pieces.append(self.ontology.render(predicate, self.fill(subject, state), self.fill(obj, state)))
            else:
                if part.when is not None:
                    holds = all(str(state[k]) == str(v) for k, v in part.when.items())
                else:  # ConditionalPart._one_condition: without `when`, `when_changed` is set
                    changed = cast(str, part.when_changed)
                    holds = str(state[changed]) != str(self.spec.state[changed])
                rendered = self.render_body(part.then if holds else part.otherwise, state)
                if rendered:
                    pieces.append(rendered)
        return " ".join(pieces)

    # ----- what happens at each checkpoint -----
    def pages_at(self, scenario: str, step: int) -> list[Page]:
        return [Page(p.id, p.title, self._rendered(i, p, self.page_state(scenario, step, p)))
                for i, p in enumerate(self.spec.pages)]

    def _rendered(self, index: int, page: PageSpec, state: dict[str, StateValue]) -> str:
        """The page's body in this state, rendered once per distinct value of what the body reads: every
        (scenario, day) asks for every page, and most pages read nothing an event changes."""
        # rendering sees values only as str
        key: tuple[str | int, ...] = (index, *(str(state.get(name)) for name in self._page_reads(index, page)))
        body = self._bodies.get(key)
        if body is None:
            body = self._bodies[key] = self.render_body(page.body, state)
        return body

    def _page_reads(self, index: int, page: PageSpec) -> list[str]:
        """What the page's body reads of the state, worked out the first time the page is rendered (a check
        that stops early leaves most pages of a large world unread)."""
        reads = self._reads.get(index)
        if reads is None:
            reads = self._reads[index] = sorted(_state_reads(page.body))
        return reads

    def renames_at(self, scenario: str, step: int) -> dict[str, str]:
        return {}  # templated pages never move

    # ----- what the world says at all: every expected answer must be said somewhere -----
    def check_answers_stated(self) -> None:
        """Refuse (Located at the question's `expected`) a question whose expected value at some checkpoint
        nothing in the world states: no page at any checkpoint in any scenario, and no system-of-record
        change. Every row asking it there would be scored wrong, whatever the design, without a word.
        Compared as the scorer compares (values.normalise, a whole phrase); "none" expects an abstention."""
        wanted: dict[str, tuple[int, int, str]] = {}  # normalised value -> (question index, step, value)
        truth = dict(self.spec.state)
        reads = [{m.group(2) for m in PLACEHOLDER.finditer(q.expected) if not m.group(1)} for q in self.spec.questions]
        for step in range(len(self.spec.events) + 1):
            if step:  # a question's expected value changes only where an event sets what it reads
                truth.update(self.spec.events[step - 1].set)
            for n, q in enumerate(self.spec.questions):
                if step == 0 or reads[n] & self.spec.events[step - 1].set.keys():
                    value = self.fill(q.expected, truth)
                    if value != NONE:
                        wanted.setdefault(normalise(value), (n, step, value))
        phrases = _Phrases(list(wanted))
        for text in self._said():
            if not phrases.left:
                break  # a world states its answers on its first pages: the rest need not be rendered
            phrases.strike(normalise(text))
        if phrases.left:
            n, step, value = min(wanted[phrase] for phrase in phrases.left)
            raise Located(("questions", n, "expected"),
                          f"question {self.spec.questions[n].id} expects {value!r} at {self.checkpoints[step].key}, "
                          "but no page states it at any checkpoint in any scenario, nor does the system of record, "
                          "so every row asking it there is scored wrong; write it on a page, correct the expected "
                          "value, or expect none if the world does not say it")

    def _said(self) -> Iterator[str]:
        """Every text the world shows: each page's title and each distinct body it can render in some scenario
        at some checkpoint (rendered once per distinct value of what it reads, as `_rendered` caches it), then
        what the system of record says. A page whose reads no event changes renders once."""
        policies = {s.pages for s in self.spec.scenarios.values()} - {"none"}  # "none" shows step 0 only
        changed = {var for e in self.spec.events for var in e.set}
        for i, page in enumerate(self.spec.pages):
            yield page.title
            yield self._rendered(i, page, self.spec.state)
            reads = self._page_reads(i, page)
            if not changed.intersection(reads):
                continue
            for policy in policies:
                # Only what the body reads: rendering looks at nothing else (_state_reads).
                state: dict[str, StateValue] = {var: self.spec.state[var] for var in reads}
                for event in self.spec.events:
                    if policy == "canonical" and event.kind not in page.canonical_for:
                        continue
                    moved = {var: value for var, value in event.set.items() if var in state}
                    if moved:
                        state.update(moved)
                        yield self._rendered(i, page, state)
        truth = dict(self.spec.state)  # what the system of record says, event by event (record_change, in one pass)
        for event in self.spec.events:
            if event.record.rename is not None:
                yield str(truth[event.record.rename])  # the old name
            truth.update(event.set)
            if event.record.rename is not None:
                yield str(truth[event.record.rename])
            else:  # RecordSpec._one_change: a record without a rename has a fact
                yield from (self.fill(text, truth) for text in cast("tuple[str, str, str]", event.record.fact)[1:])

    def questions_at(self, step: int) -> list[Question]:
        truth = self.state_at(step)
        questions = []
        for q in self.spec.questions:
            expected = self.fill(q.expected, truth)
            questions.append(Question(q.id, q.event, self.fill(q.text, truth), self.fill(q.entity, truth),
                                      tuple(q.hops), expected, drifted=q.event > 0 and step >= q.event,
                                      accepted=(expected,)))
        return questions

    def text_units(self, body: str, title: str = "") -> list[Unit]:
        """Sentences: a templated page is made of them, each naming its own subject."""
        return sentence_units(body, title)

    def changes(self) -> list[dict[str, str]]:
        return [{"event": str(e.id), "day": c.key, "kind": e.kind,
                 "changes": ", ".join(f"{k} = {v}" for k, v in e.set.items())}
                for e, c in zip(self.spec.events, self.checkpoints[1:])]

    def record_changes(self, step: int) -> list[RecordChange]:
        if step == 0:
            return []
        event = self.spec.events[step - 1]
        kind, change = self.record_change(event)
        return [(kind, change, event.record.source)]

    def record_change(self, event: EventSpec) -> tuple[str, tuple[str, str, str] | tuple[str, str]]:
        """What the system of record says after `event`: ("fact", (subject, predicate, object)) or
        ("rename", (new name, old name))."""
        before = self.state_at(event.id - 1)
        after = self.state_at(event.id)
        if event.record.rename is not None:
            var = event.record.rename
            return "rename", (str(after[var]), str(before[var]))
        # RecordSpec._one_change: a record without a rename has a fact
        predicate, subject, obj = cast("tuple[str, str, str]", event.record.fact)
        return "fact", (self.fill(subject, after), predicate, self.fill(obj, after))
