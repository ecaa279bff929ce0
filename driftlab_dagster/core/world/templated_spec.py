"""A templated world's file format: the company, its ontology (a sentence template and regex shapes per
predicate), its state and the events that change it, its pages as templates, its questions and scenarios.

Validated on load. "Malformed" includes files that are valid YAML and valid-looking data but would hang or
crash the run later: a shape that backtracks catastrophically (shapes.py), a day that overflows the
calendar, names that cannot be partition keys, sizes that exhaust memory. The limits below are far above
what a study needs (Tessaly Freight: 40 pages, 4 events, 20 questions, 4 scenarios).
"""

from __future__ import annotations

import datetime as dt
import math
import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_serializer,
    model_validator,
)

from ..ontology import MAX_SENTENCE_CHARS, sentence_regex
from .common import Located, NamingSpec, ScenarioName, SpecModel
from .shapes import shape_problem

PLACEHOLDER = re.compile(r"\{(initial\.)?([a-z_][a-z0-9_]*)\}")

# ----- limits: each one stops a file that would otherwise hang, crash or exhaust memory later -----
MAX_PAGE_CHARS = 256 * 1024  # a page's template: its title, text parts and facts (rendered), every branch
MAX_TEXT_CHARS = 1000  # one string state value, one fact text, one shape
MAX_PAGES = 100_000
MAX_QUESTIONS = 10_000
MAX_EVENTS = 1_000
MAX_PARTITIONS = 10_000  # scenarios x (events + 1): Dagster partitions, each materialised on its own
MAX_EVENT_DAY = 36_500  # a century of days after `start`; beyond it the calendar arithmetic overflows
START_YEARS = (1900, 2999)

# Names that become file and row keys (questions, pages): a `|` would split a multi-partition key, a
# control character breaks a log line.
_QUESTION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_WORLD_ID = re.compile(r"[a-z][a-z0-9_]{0,47}")
_PAGE_ID_FORBIDDEN = re.compile(r"[\x00-\x1f\x7f-\x9f|]")
MAX_PAGE_ID_CHARS = 200


def _check_state_value(value: int | float | str) -> int | float | str:
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{value} is not a finite number; write a plain number such as 49 or 99.95")
    if isinstance(value, str) and len(value) > MAX_TEXT_CHARS:
        raise ValueError(f"the value is {len(value):,} characters long, at most {MAX_TEXT_CHARS:,} are allowed "
                         "(a state value is a name, a number or a short phrase); shorten it")
    if isinstance(value, int) and abs(value) >= 10**MAX_TEXT_CHARS:
        raise ValueError(f"the number has more than {MAX_TEXT_CHARS:,} digits; use a realistic value")
    return value


def _check_fact_text(text: str) -> str:
    if len(text) > MAX_TEXT_CHARS:
        raise ValueError(f"a fact's text is {len(text):,} characters long, at most {MAX_TEXT_CHARS:,} are allowed "
                         "(it is one name or value of one sentence); shorten it")
    return text


# Finite numbers and short strings: a state value is pasted into every page and question that names it.
StateValue = Annotated[int | float | str, AfterValidator(_check_state_value)]
FactText = Annotated[str, AfterValidator(_check_fact_text)]


class PredicateSpec(SpecModel):
    sentence: str
    subject: str | None = None  # a shape name
    fixed_subject: str | None = None
    object: str  # a shape name
    meaning: str
    question: str
    query: str
    rename: bool = False

    @field_validator("sentence")
    @classmethod
    def _sentence_is_short(cls, sentence: str) -> str:
        # The ontology never matches a longer sentence (MAX_SENTENCE_CHARS), so such a predicate is dead.
        if len(sentence) > MAX_SENTENCE_CHARS:
            raise ValueError(f"the sentence is {len(sentence):,} characters long, at most {MAX_SENTENCE_CHARS:,} are "
                             "allowed (MAX_SENTENCE_CHARS: longer text is never parsed as a fact); shorten it")
        return sentence

    @model_validator(mode="after")
    def _one_subject(self) -> PredicateSpec:
        if (self.subject is None) == (self.fixed_subject is None):
            raise ValueError("give exactly one of `subject` (a shape) or `fixed_subject` (a name)")
        if "{object}" not in self.sentence:
            raise ValueError("the sentence must contain {object}")
        if self.subject is not None and "{subject}" not in self.sentence:
            raise ValueError("the sentence must contain {subject} when `subject` is a shape")
        return self


class FactPart(SpecModel):
    fact: tuple[FactText, FactText, FactText]


class ConditionalPart(SpecModel):
    when: dict[str, StateValue] | None = None  # every listed state value equals the given one
    when_changed: str | None = None  # the state value differs from the initial state
    then: list[BodyPart]
    otherwise: list[BodyPart] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_condition(self) -> ConditionalPart:
        if (self.when is None) == (self.when_changed is None):
            raise ValueError("give exactly one of `when` or `when_changed`")
        return self


def _body_part_kind(part: Any) -> str:
    # Route each part to its one possible type, so that a bad fact is reported as a bad fact, not as
    # "Input should be a valid string" from the first member of the union. Valid parts route as before.
    if isinstance(part, (FactPart, ConditionalPart)):
        return type(part).__name__
    if isinstance(part, dict):
        return "FactPart" if "fact" in part else "ConditionalPart"
    return "str"


BodyPart = Annotated[
    Annotated[str, Tag("str")]
    | Annotated[FactPart, Tag("FactPart")]
    | Annotated["ConditionalPart", Tag("ConditionalPart")],
    Discriminator(_body_part_kind),
]
ConditionalPart.model_rebuild()


class PageSpec(SpecModel):
    id: str
    title: str
    canonical_for: list[str] = Field(default_factory=list)  # event kinds this page is the canonical source for
    body: list[BodyPart]

    @field_validator("id")
    @classmethod
    def _id_is_a_key(cls, page_id: str) -> str:
        bad = _PAGE_ID_FORBIDDEN.search(page_id)
        if not page_id or len(page_id) > MAX_PAGE_ID_CHARS or bad:
            why = (f"contains {bad.group(0)!r}" if bad else "is empty" if not page_id
                   else f"is {len(page_id)} characters long")
            raise ValueError(f"page id {page_id[:40]!r} {why}; a page id is a key (1 to {MAX_PAGE_ID_CHARS} "
                             "characters, no '|' and no control characters), e.g. 'd01'")
        return page_id


class RecordSpec(SpecModel):
    source: str
    fact: tuple[FactText, FactText, FactText] | None = None
    rename: str | None = None  # the state variable whose value was renamed

    @model_validator(mode="after")
    def _one_change(self) -> RecordSpec:
        if (self.fact is None) == (self.rename is None):
            raise ValueError("give exactly one of `fact` or `rename`")
        return self


class EventSpec(SpecModel):
    id: int
    day: int
    kind: str
    set: dict[str, StateValue]
    record: RecordSpec

    @field_validator("day")
    @classmethod
    def _day_in_range(cls, day: int) -> int:
        if not 1 <= day <= MAX_EVENT_DAY:
            raise ValueError(f"day {day} is out of range: an event's day counts the days after `start`, "
                             f"from 1 to {MAX_EVENT_DAY} (a century)")
        return day


class ScenarioSpec(SpecModel):
    pages: Literal["all", "canonical", "none"]
    graph: Literal["patch_changed_pages", "patch_from_record", "none"]


class QuestionSpec(SpecModel):
    id: str
    event: int = Field(ge=0)
    text: str
    entity: str
    hops: list[str] = Field(min_length=1)
    expected: str

    @field_validator("expected", mode="before")
    @classmethod
    def _as_text(cls, v: Any) -> Any:
        return str(v) if isinstance(v, (int, float)) else v

    @field_validator("id")
    @classmethod
    def _id_is_a_key(cls, question_id: str) -> str:
        if not _QUESTION_ID.fullmatch(question_id):
            raise ValueError(f"question id {question_id[:40]!r} is not a key: start with a letter or digit and use "
                             "only letters, digits, '_', '.' and '-', at most 64 characters, e.g. 'P1'")
        return question_id


class AuthoritySpec(SpecModel):
    canonical: dict[str, list[str]] = Field(default_factory=dict)  # predicate -> the pages that own it
    drafts: list[str] = Field(default_factory=list)  # meeting notes and drafts: the lowest rank


def _at_most(limit: int, what: str, advice: str) -> Any:
    """A before-validator that rejects an over-long list before pydantic validates every item of it."""

    def check(items: Any) -> Any:
        if isinstance(items, (list, dict)) and len(items) > limit:
            raise ValueError(f"{len(items):,} {what}, at most {limit:,} are allowed; {advice}")
        return items

    return check


class WorldSpec(SpecModel):
    # A stable name for the world in tables and file names; World.id derives one from `company` if absent.
    id: str | None = None
    company: str
    start: dt.datetime
    shapes: dict[str, str]
    predicates: dict[str, PredicateSpec]
    state: dict[str, StateValue]
    events: list[EventSpec] = Field(min_length=1)
    scenarios: dict[ScenarioName, ScenarioSpec] = Field(min_length=1)
    pages: list[PageSpec] = Field(min_length=1)
    questions: list[QuestionSpec] = Field(min_length=1)
    authority: AuthoritySpec = Field(default_factory=AuthoritySpec)
    naming: NamingSpec = Field(default_factory=NamingSpec)

    _events_fit = field_validator("events", mode="before")(
        _at_most(MAX_EVENTS, "events", "every event adds a checkpoint to every scenario: model fewer changes"))
    _pages_fit = field_validator("pages", mode="before")(
        _at_most(MAX_PAGES, "pages", "a study's corpus is a sample: keep the pages its questions need"))
    _questions_fit = field_validator("questions", mode="before")(
        _at_most(MAX_QUESTIONS, "questions", "every question is asked of every design at every checkpoint"))

    @model_serializer(mode="wrap")
    def _omit_absent_id(self, handler: Any) -> dict[str, Any]:
        # A world without `id:` serialises exactly as before the field existed, so its canonical JSON,
        # its sha256 (World.version) and the rows stored under it do not change.
        data = handler(self)
        if self.id is None:
            data.pop("id", None)
        return data

    @field_validator("id")
    @classmethod
    def _id_is_a_slug(cls, world_id: str | None) -> str | None:
        if world_id is not None and not _WORLD_ID.fullmatch(world_id):
            raise ValueError(f"id {world_id[:60]!r} is not a world id: lower case letters, digits and '_', starting "
                             "with a letter, at most 48 characters, e.g. 'tessaly_freight'")
        return world_id

    @field_validator("start")
    @classmethod
    def _start_in_range(cls, start: dt.datetime) -> dt.datetime:
        # Far dates overflow the calendar arithmetic (start + days, one day either side) and mean a typo.
        if not START_YEARS[0] <= start.year <= START_YEARS[1]:
            raise ValueError(f"start {start.isoformat()} is out of range: use a date between {START_YEARS[0]} and "
                             f"{START_YEARS[1]}, e.g. 2026-09-01T09:00:00Z")
        return start

    @field_validator("shapes")
    @classmethod
    def _shapes_compile(cls, shapes: dict[str, str]) -> dict[str, str]:
        for name, pattern in shapes.items():
            if len(pattern) > MAX_TEXT_CHARS:
                raise Located((name,), f"the shape is {len(pattern):,} characters long, at most {MAX_TEXT_CHARS:,} "
                                        "are allowed (a shape describes one name or value); simplify it")
            try:
                re.compile(pattern)
            except (re.error, RecursionError, OverflowError) as e:
                reason = "it nests groups too deeply" if isinstance(e, RecursionError) else str(e)
                raise Located((name,), f"shape {name!r} is not a valid regular expression: {reason}") from None
            problem = shape_problem(pattern)
            if problem:
                raise Located((name,), f"{pattern!r} {problem}")
        return shapes

    @model_validator(mode="after")
    def _cross_references(self) -> WorldSpec:
        for name, p in self.predicates.items():
            for field, shape in (("subject", p.subject), ("object", p.object)):
                if shape is not None and shape not in self.shapes:
                    raise Located(("predicates", name, field),
                                   f"unknown shape {shape!r} (known: {', '.join(sorted(self.shapes))})")
            # A shape that compiles on its own can still break the sentence's pattern (a global flag such as
            # (?i) in the middle): compile it now rather than on the first page the extractor reads.
            regex = sentence_regex(p.sentence, self.shapes[p.subject] if p.subject else None, self.shapes[p.object])
            try:
                re.compile(regex)
            except (re.error, RecursionError, OverflowError) as err:
                raise Located(("predicates", name, "sentence"),
                               f"the sentence with its shapes is not a valid regular expression ({err}); use scoped "
                               "flags such as (?i:...) in shapes, not (?i)") from None
        partitions = len(self.scenarios) * (len(self.events) + 1)
        if partitions > MAX_PARTITIONS:
            raise Located(("scenarios",), f"{len(self.scenarios)} scenarios x {len(self.events) + 1} checkpoints make "
                                           f"{partitions:,} partitions, at most {MAX_PARTITIONS:,} are allowed "
                                           "(MAX_PARTITIONS); use fewer scenarios or events")
        known_vars = set(self.state)
        kinds = {e.kind for e in self.events}

        # The longest text each state variable can take, for the length of a fact sentence once filled in.
        longest = {var: len(str(value)) for var, value in self.state.items()}
        for e in self.events:
            for var, value in e.set.items():
                longest[var] = max(longest.get(var, 0), len(str(value)))

        def longest_fill(text: str) -> int:
            fills = sum(longest.get(m.group(2), 0) for m in PLACEHOLDER.finditer(text))
            return len(PLACEHOLDER.sub("", text)) + fills

        def check_text(text: str, loc: tuple[Any, ...]) -> None:
            for m in PLACEHOLDER.finditer(text):
                if m.group(2) not in known_vars:
                    raise Located(loc, f"{m.group(0)} is not a state variable (known: {', '.join(sorted(known_vars))})")

        def check_fact_length(fact: tuple[str, str, str], loc: tuple[Any, ...]) -> int:
            """The longest the fact's sentence can render to. The ontology never matches a sentence over
            MAX_SENTENCE_CHARS: a fact that can render longer would silently vanish from every extraction."""
            sentence = self.predicates[fact[0]].sentence
            subjects, objects = sentence.count("{subject}"), sentence.count("{object}")
            size = (len(sentence) - subjects * len("{subject}") - objects * len("{object}")
                    + subjects * longest_fill(fact[1]) + objects * longest_fill(fact[2]))
            if size > MAX_SENTENCE_CHARS:
                raise Located(loc, f"this fact's sentence can be {size:,} characters long once filled in, but the "
                                    f"ontology reads sentences of at most {MAX_SENTENCE_CHARS:,} characters "
                                    "(MAX_SENTENCE_CHARS); shorten the fact or the state values it uses")
            return size

        def check_parts(parts: list[BodyPart], loc: tuple[Any, ...]) -> int:
            """Check the parts; return the length of their text, every branch counted, facts at their longest."""
            size = 0
            for i, part in enumerate(parts):
                if isinstance(part, str):
                    size += len(part) + 1
                elif isinstance(part, FactPart):
                    if part.fact[0] not in self.predicates:
                        raise Located(loc + (i, "fact"), f"unknown predicate {part.fact[0]!r}")
                    for text in part.fact[1:]:
                        check_text(text, loc + (i, "fact"))
                    size += check_fact_length(part.fact, loc + (i, "fact")) + 1
                elif isinstance(part, ConditionalPart):
                    for var in list(part.when or {}) + ([part.when_changed] if part.when_changed else []):
                        if var not in known_vars:
                            raise Located(loc + (i,), f"condition on unknown state variable {var!r}")
                    size += check_parts(part.then, loc + (i, "then"))
                    size += check_parts(part.otherwise, loc + (i, "otherwise"))
            return size

        seen_pages: set[str] = set()
        for n, page in enumerate(self.pages):
            if page.id in seen_pages:
                raise Located(("pages", n, "id"), f"page id {page.id!r} is used twice")
            seen_pages.add(page.id)
            for kind in page.canonical_for:
                if kind not in kinds:
                    raise Located(("pages", n, "canonical_for"), f"no event has kind {kind!r}")
            # Every scenario renders every page at every checkpoint: a huge page costs its size times
            # (scenarios x checkpoints) in time and memory. Facts count at their longest rendering, so
            # short fact texts with long state values cannot multiply past the cap.
            size = len(page.title) + check_parts(page.body, ("pages", n, "body"))
            if size > MAX_PAGE_CHARS:
                raise Located(("pages", n, "body"), f"the page's text is up to {size:,} characters, at most "
                                                     f"{MAX_PAGE_CHARS:,} (MAX_PAGE_CHARS) are allowed; split it "
                                                     "into several pages")
        days = [e.day for e in self.events]
        if days != sorted(set(days)):
            raise Located(("events",), f"event days must be distinct and increasing, got {days}")
        for n, e in enumerate(self.events):
            if e.id != n + 1:
                raise Located(("events", n, "id"), f"events are numbered 1, 2, ... in order; expected {n + 1}")
            for var in e.set:
                if var not in known_vars:
                    raise Located(("events", n, "set"), f"unknown state variable {var!r}")
            if e.record.fact is not None:
                if e.record.fact[0] not in self.predicates:
                    raise Located(("events", n, "record", "fact"), f"unknown predicate {e.record.fact[0]!r}")
                check_text(e.record.fact[2], ("events", n, "record", "fact"))
            if e.record.rename is not None and e.record.rename not in known_vars:
                raise Located(("events", n, "record", "rename"), f"unknown state variable {e.record.rename!r}")
        for predicate, owners in self.authority.canonical.items():
            if predicate not in self.predicates:
                raise Located(("authority", "canonical", predicate), f"unknown predicate {predicate!r}")
            for owner in owners:
                if owner not in seen_pages:
                    raise Located(("authority", "canonical", predicate), f"unknown page {owner!r}")
        for draft in self.authority.drafts:
            if draft not in seen_pages:
                raise Located(("authority", "drafts"), f"unknown page {draft!r}")
        seen_q: set[str] = set()
        for n, q in enumerate(self.questions):
            if q.id in seen_q:
                raise Located(("questions", n, "id"), f"question id {q.id!r} is used twice")
            seen_q.add(q.id)
            if q.event > len(self.events):
                raise Located(("questions", n, "event"), f"there are only {len(self.events)} events")
            for hop in q.hops:
                if hop not in self.predicates:
                    raise Located(("questions", n, "hops"), f"unknown predicate {hop!r}")
            for field in ("text", "entity", "expected"):
                check_text(getattr(q, field), ("questions", n, field))
        self._check_fact_values()
        return self

    def _check_fact_values(self) -> None:
        """Every value a fact renders into a shape position fits that shape. The extractor reads a fact
        sentence only when each part matches its shape: a value that does not (a name with a letter outside
        [A-Z], three words for a two-word shape) is a fact no design ever learns, and every row asking for it
        is scored wrong without a word. Checked as rendered: in the initial state, then after each event,
        for the facts that read what it sets. Refused where the value is written: the event, the state, or
        the fact itself for a fixed text."""
        slots: list[tuple[str, str, str, str, str, tuple[Any, ...]]] = []  # predicate, role, shape, text, page, loc

        def walk(parts: list[BodyPart], page: str, loc: tuple[Any, ...]) -> None:
            for i, part in enumerate(parts):
                if isinstance(part, FactPart):
                    predicate = self.predicates[part.fact[0]]
                    for role, shape, text in (("subject", predicate.subject, part.fact[1]),
                                              ("object", predicate.object, part.fact[2])):
                        if shape is not None:  # a fixed subject is never rendered into the sentence
                            slots.append((part.fact[0], role, shape, text, page, loc + (i, "fact")))
                elif isinstance(part, ConditionalPart):
                    walk(part.then, page, loc + (i, "then"))
                    walk(part.otherwise, page, loc + (i, "otherwise"))

        for n, page in enumerate(self.pages):
            walk(page.body, page.id, ("pages", n, "body"))
        state = dict(self.state)
        fits: set[tuple[str, str]] = set()  # (shape, value) already matched: most facts repeat a few values

        def misfit(slot: tuple[str, str, str, str, str, tuple[Any, ...]], setter: str, value: Any) -> str | None:
            predicate, role, shape, text, page, _ = slot
            rendered = text if "{" not in text else PLACEHOLDER.sub(
                lambda m: str((self.state if m.group(1) else state)[m.group(2)]), text)
            if (shape, rendered) in fits or re.fullmatch(self.shapes[shape], rendered):
                fits.add((shape, rendered))
                return None
            as_rendered = "" if rendered == str(value) else f" {rendered!r}"
            return (f"{setter} {str(value)!r}, which a fact of predicate {predicate} on page {page} renders as its "
                    f"{role}{as_rendered}: its {role} shape {shape} '{self.shapes[shape]}' does not match it, so the "
                    "study never reads that fact (a question about it is scored wrong); change the value or widen the "
                    "shape")

        by_var: dict[str, list[tuple[str, str, str, str, str, tuple[Any, ...]]]] = {}
        for slot in slots:
            reads = ([] if "{" not in slot[3] else  # most facts are fixed text: a large world's are read fast
                     list(dict.fromkeys(m.group(2) for m in PLACEHOLDER.finditer(slot[3]) if not m.group(1))))
            for var in reads:
                by_var.setdefault(var, []).append(slot)
            if len(reads) == 1:
                problem = misfit(slot, f"{reads[0]} starts as", state[reads[0]])
                if problem:
                    raise Located(("state", reads[0]), problem)
            elif problem := misfit(slot, "this fact's text is", slot[3]):
                raise Located(slot[5], problem)
        for n, event in enumerate(self.events):
            state.update(event.set)
            for var, value in event.set.items():
                for slot in by_var.get(var, []):
                    if problem := misfit(slot, f"event {event.id} sets {var} to", value):
                        raise Located(("events", n, "set", var), problem)
