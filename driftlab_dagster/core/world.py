"""The world as data: a company, its ontology, events, pages, questions and drift scenarios.

A world file (YAML) is validated on load. A malformed file raises `WorldFileError` with one line that
names the file, the line and the field, never a stack trace from deep inside. "Malformed" includes files
that are valid YAML and valid-looking data but would hang or crash the run later: a shape that
backtracks catastrophically, an alias bomb, nesting deep enough to overflow the stack, a day that
overflows the calendar, names that cannot be partition keys, sizes that exhaust memory. The limits below
are far above what a study needs (Tessaly Freight: 40 pages, 4 events, 20 questions, 4 scenarios).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import re
import stat
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from .ontology import MAX_SENTENCE_CHARS, Ontology, Predicate, sentence_regex, split_sentences
from .world_cache import cached_parse

try:  # Python's own regex parser, to analyse shapes the way `re` will read them
    from re import _constants as _sre  # Python >= 3.11
    from re import _parser as _sre_parse
except ImportError:  # pragma: no cover - older Pythons ship the same modules under their old names
    import sre_constants as _sre  # type: ignore[no-redef]
    import sre_parse as _sre_parse  # type: ignore[no-redef]

_PLACEHOLDER = re.compile(r"\{(initial\.)?([a-z_][a-z0-9_]*)\}")

# ----- limits: each one stops a file that would otherwise hang, crash or exhaust memory later -----
MAX_WORLD_FILE_BYTES = 64 * 1024 * 1024  # checked with stat before reading anything
MAX_YAML_NODES = 1_000_000  # YAML values, counted with every alias expanded: stops "billion laughs"
MAX_YAML_DEPTH = 64  # nested collections (Tessaly needs 8); the composer recurses once per level
MAX_PAGE_CHARS = 256 * 1024  # a page's template: its title, text parts and facts (rendered), every branch
MAX_TEXT_CHARS = 1000  # one string state value, one fact text, one shape
MAX_PAGES = 100_000
MAX_QUESTIONS = 10_000
MAX_EVENTS = 1_000
MAX_PARTITIONS = 10_000  # scenarios x (events + 1): Dagster partitions, each materialised on its own
MAX_EVENT_DAY = 36_500  # a century of days after `start`; beyond it the calendar arithmetic overflows
START_YEARS = (1900, 2999)

# Names that become Dagster partition keys (scenarios) or file and row keys (questions, pages): a `|` or a
# `,` would split a multi-partition key, a control character breaks a log line.
_SCENARIO_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,47}")
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
StateValue = Annotated[Union[int, float, str], AfterValidator(_check_state_value)]
FactText = Annotated[str, AfterValidator(_check_fact_text)]


class WorldFileError(ValueError):
    """A world file that cannot be used. The message is one line, written for the person editing it."""


class _Located(ValueError):
    """A cross-reference error raised by the world validator, with the path of the field at fault."""

    def __init__(self, loc: tuple[Any, ...], message: str):
        super().__init__(message)
        self.loc = loc


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PredicateSpec(_Model):
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
    def _one_subject(self) -> "PredicateSpec":
        if (self.subject is None) == (self.fixed_subject is None):
            raise ValueError("give exactly one of `subject` (a shape) or `fixed_subject` (a name)")
        if "{object}" not in self.sentence:
            raise ValueError("the sentence must contain {object}")
        if self.subject is not None and "{subject}" not in self.sentence:
            raise ValueError("the sentence must contain {subject} when `subject` is a shape")
        return self


class FactPart(_Model):
    fact: tuple[FactText, FactText, FactText]


class ConditionalPart(_Model):
    when: dict[str, StateValue] | None = None  # every listed state value equals the given one
    when_changed: str | None = None  # the state value differs from the initial state
    then: list["BodyPart"]
    otherwise: list["BodyPart"] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_condition(self) -> "ConditionalPart":
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
    Union[Annotated[str, Tag("str")], Annotated[FactPart, Tag("FactPart")],
          Annotated["ConditionalPart", Tag("ConditionalPart")]],
    Discriminator(_body_part_kind),
]
ConditionalPart.model_rebuild()


class PageSpec(_Model):
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


class RecordSpec(_Model):
    source: str
    fact: tuple[FactText, FactText, FactText] | None = None
    rename: str | None = None  # the state variable whose value was renamed

    @model_validator(mode="after")
    def _one_change(self) -> "RecordSpec":
        if (self.fact is None) == (self.rename is None):
            raise ValueError("give exactly one of `fact` or `rename`")
        return self


class EventSpec(_Model):
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


class ScenarioSpec(_Model):
    pages: Literal["all", "canonical", "none"]
    graph: Literal["patch_changed_pages", "patch_from_record", "none"]


class QuestionSpec(_Model):
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


class AuthoritySpec(_Model):
    canonical: dict[str, list[str]] = Field(default_factory=dict)  # predicate -> the pages that own it
    drafts: list[str] = Field(default_factory=list)  # meeting notes and drafts: the lowest rank


class NamingSpec(_Model):
    drop_prefixes: list[str] = Field(default_factory=lambda: ["the "])
    drop_suffixes: list[str] = Field(default_factory=lambda: [" plan", " team"])


# ----- shapes: regexes that cannot backtrack catastrophically -----
# Python's `re` backtracks. A repetition whose body can match the same text in more than one way (another
# repetition inside it, an alternation, a part of variable length) tries exponentially many splits of a
# sentence that almost matches: '([A-Za-z]+ ?)+' on a 40-word line without a final period runs for hours.
# The shapes are read with `re`'s own parser and such constructions are refused; what is left is
# repetitions of fixed-width parts, which backtrack at most polynomially, and MAX_SENTENCE_CHARS bounds that.
_REPEATS = {op for op in (getattr(_sre, name, None) for name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"))
            if op is not None}
_ATOMIC_GROUP = getattr(_sre, "ATOMIC_GROUP", None)  # (?>...), Python >= 3.11
_SINGLE_REPETITION = "write it as a single repetition of a character class such as '[A-Za-z ]+'"


def _children(op: Any, av: Any) -> list[Any]:
    """The sub-patterns directly inside one parsed regex item."""
    if op in _REPEATS:
        return [av[2]]
    if op is _sre.SUBPATTERN:
        return [av[-1]]
    if op is _sre.BRANCH:
        return list(av[1])
    if op is _ATOMIC_GROUP:
        return [av]
    return []


def _items(subpatterns: list[Any]) -> Any:
    """Every (op, av) item inside the given sub-patterns, at any depth (iterative: groups may nest)."""
    todo = list(subpatterns)
    while todo:
        for op, av in todo.pop():
            yield op, av
            todo.extend(_children(op, av))


def _repeated_body_problem(body: Any) -> str | None:
    """Why repeating `body` more than once can backtrack exponentially, or None."""
    for op, av in _items([body]):
        if op is _sre.BRANCH:
            return ("repeats an alternation, which can take exponential time on a long sentence when the "
                    "alternatives overlap; use a character class, such as '[ab]+' for '(a|b)+'")
        # A fixed count such as \d{3} is shorthand for writing the part out and adds no choice of split.
        if op in _REPEATS and av[1] > 1 and av[0] != av[1]:
            return ("nests a repetition inside a repetition, which can take exponential time on a long sentence; "
                    + _SINGLE_REPETITION)
    low, high = body.getwidth()
    if low == 0:
        return f"repeats a part that can match nothing, which makes the repetition ambiguous; {_SINGLE_REPETITION}"
    if low != high:  # e.g. '(a?a)+': "aa" is one repetition or two
        return ("repeats a part of variable length (an optional part inside a repetition), which can take "
                f"exponential time on a long sentence; {_SINGLE_REPETITION}")
    return None


def _shape_problem(pattern: str) -> str | None:
    """Why `pattern` (which compiles) is not a safe shape, or None. The caller prefixes the pattern."""
    try:
        parsed = _sre_parse.parse(pattern)
    except RecursionError:
        return "nests groups too deeply; a shape is one simple regular expression"
    state = getattr(parsed, "state", None) or getattr(parsed, "pattern", None)  # renamed in Python 3.11
    if state is not None and state.groupdict:
        return ("names a group; the ontology names the subject and object groups itself, "
                "so write (?:...) instead of (?P<name>...)")
    if parsed.getwidth()[0] == 0:
        return ("matches the empty string, so a sentence could yield an empty subject or object; require at least "
                "one character, e.g. '+' instead of '*'")
    for op, av in _items([parsed]):
        if op in (_sre.GROUPREF, _sre.GROUPREF_EXISTS):
            return ("uses a backreference or a conditional group, which only backtracking can match; "
                    "spell the text out instead")
        if op in (_sre.ASSERT, _sre.ASSERT_NOT):
            return ("uses a lookahead or lookbehind; a shape describes the value itself, so drop the "
                    "(?=...), (?!...), (?<=...) or (?<!...)")
        if op in _REPEATS and av[1] > 1:
            problem = _repeated_body_problem(av[2])
            if problem:
                return problem
    return None


def _check_scenario_name(name: str) -> str:
    if not _SCENARIO_NAME.fullmatch(name):
        raise ValueError(f"scenario name {name[:40]!r} cannot be a partition key: start with a letter and use only "
                         "letters, digits, '_' and '-', at most 48 characters, e.g. 'StalePages'")
    return name


ScenarioName = Annotated[str, AfterValidator(_check_scenario_name)]


def _at_most(limit: int, what: str, advice: str) -> Any:
    """A before-validator that rejects an over-long list before pydantic validates every item of it."""

    def check(items: Any) -> Any:
        if isinstance(items, (list, dict)) and len(items) > limit:
            raise ValueError(f"{len(items):,} {what}, at most {limit:,} are allowed; {advice}")
        return items

    return check


class WorldSpec(_Model):
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
                raise _Located((name,), f"the shape is {len(pattern):,} characters long, at most {MAX_TEXT_CHARS:,} "
                                        "are allowed (a shape describes one name or value); simplify it")
            try:
                re.compile(pattern)
            except (re.error, RecursionError, OverflowError) as e:
                reason = "it nests groups too deeply" if isinstance(e, RecursionError) else str(e)
                raise _Located((name,), f"shape {name!r} is not a valid regular expression: {reason}") from None
            problem = _shape_problem(pattern)
            if problem:
                raise _Located((name,), f"{pattern!r} {problem}")
        return shapes

    @model_validator(mode="after")
    def _cross_references(self) -> "WorldSpec":
        for name, p in self.predicates.items():
            for field, shape in (("subject", p.subject), ("object", p.object)):
                if shape is not None and shape not in self.shapes:
                    raise _Located(("predicates", name, field),
                                   f"unknown shape {shape!r} (known: {', '.join(sorted(self.shapes))})")
            # A shape that compiles on its own can still break the sentence's pattern (a global flag such as
            # (?i) in the middle): compile it now rather than on the first page the extractor reads.
            regex = sentence_regex(p.sentence, self.shapes[p.subject] if p.subject else None, self.shapes[p.object])
            try:
                re.compile(regex)
            except (re.error, RecursionError, OverflowError) as e:
                raise _Located(("predicates", name, "sentence"),
                               f"the sentence with its shapes is not a valid regular expression ({e}); use scoped "
                               "flags such as (?i:...) in shapes, not (?i)") from None
        partitions = len(self.scenarios) * (len(self.events) + 1)
        if partitions > MAX_PARTITIONS:
            raise _Located(("scenarios",), f"{len(self.scenarios)} scenarios x {len(self.events) + 1} checkpoints make "
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
            fills = sum(longest.get(m.group(2), 0) for m in _PLACEHOLDER.finditer(text))
            return len(_PLACEHOLDER.sub("", text)) + fills

        def check_text(text: str, loc: tuple[Any, ...]) -> None:
            for m in _PLACEHOLDER.finditer(text):
                if m.group(2) not in known_vars:
                    raise _Located(loc, f"{m.group(0)} is not a state variable (known: {', '.join(sorted(known_vars))})")

        def check_fact_length(fact: tuple[str, str, str], loc: tuple[Any, ...]) -> int:
            """The longest the fact's sentence can render to. The ontology never matches a sentence over
            MAX_SENTENCE_CHARS: a fact that can render longer would silently vanish from every extraction."""
            sentence = self.predicates[fact[0]].sentence
            subjects, objects = sentence.count("{subject}"), sentence.count("{object}")
            size = (len(sentence) - subjects * len("{subject}") - objects * len("{object}")
                    + subjects * longest_fill(fact[1]) + objects * longest_fill(fact[2]))
            if size > MAX_SENTENCE_CHARS:
                raise _Located(loc, f"this fact's sentence can be {size:,} characters long once filled in, but the "
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
                        raise _Located(loc + (i, "fact"), f"unknown predicate {part.fact[0]!r}")
                    for text in part.fact[1:]:
                        check_text(text, loc + (i, "fact"))
                    size += check_fact_length(part.fact, loc + (i, "fact")) + 1
                elif isinstance(part, ConditionalPart):
                    for var in list(part.when or {}) + ([part.when_changed] if part.when_changed else []):
                        if var not in known_vars:
                            raise _Located(loc + (i,), f"condition on unknown state variable {var!r}")
                    size += check_parts(part.then, loc + (i, "then"))
                    size += check_parts(part.otherwise, loc + (i, "otherwise"))
            return size

        seen_pages: set[str] = set()
        for n, page in enumerate(self.pages):
            if page.id in seen_pages:
                raise _Located(("pages", n, "id"), f"page id {page.id!r} is used twice")
            seen_pages.add(page.id)
            for kind in page.canonical_for:
                if kind not in kinds:
                    raise _Located(("pages", n, "canonical_for"), f"no event has kind {kind!r}")
            # Every scenario renders every page at every checkpoint: a huge page costs its size times
            # (scenarios x checkpoints) in time and memory. Facts count at their longest rendering, so
            # short fact texts with long state values cannot multiply past the cap.
            size = len(page.title) + check_parts(page.body, ("pages", n, "body"))
            if size > MAX_PAGE_CHARS:
                raise _Located(("pages", n, "body"), f"the page's text is up to {size:,} characters, at most "
                                                     f"{MAX_PAGE_CHARS:,} (MAX_PAGE_CHARS) are allowed; split it "
                                                     "into several pages")
        days = [e.day for e in self.events]
        if days != sorted(set(days)):
            raise _Located(("events",), f"event days must be distinct and increasing, got {days}")
        for n, e in enumerate(self.events):
            if e.id != n + 1:
                raise _Located(("events", n, "id"), f"events are numbered 1, 2, ... in order; expected {n + 1}")
            for var in e.set:
                if var not in known_vars:
                    raise _Located(("events", n, "set"), f"unknown state variable {var!r}")
            if e.record.fact is not None:
                if e.record.fact[0] not in self.predicates:
                    raise _Located(("events", n, "record", "fact"), f"unknown predicate {e.record.fact[0]!r}")
                check_text(e.record.fact[2], ("events", n, "record", "fact"))
            if e.record.rename is not None and e.record.rename not in known_vars:
                raise _Located(("events", n, "record", "rename"), f"unknown state variable {e.record.rename!r}")
        for predicate, owners in self.authority.canonical.items():
            if predicate not in self.predicates:
                raise _Located(("authority", "canonical", predicate), f"unknown predicate {predicate!r}")
            for page in owners:
                if page not in seen_pages:
                    raise _Located(("authority", "canonical", predicate), f"unknown page {page!r}")
        for page in self.authority.drafts:
            if page not in seen_pages:
                raise _Located(("authority", "drafts"), f"unknown page {page!r}")
        seen_q: set[str] = set()
        for n, q in enumerate(self.questions):
            if q.id in seen_q:
                raise _Located(("questions", n, "id"), f"question id {q.id!r} is used twice")
            seen_q.add(q.id)
            if q.event > len(self.events):
                raise _Located(("questions", n, "event"), f"there are only {len(self.events)} events")
            for hop in q.hops:
                if hop not in self.predicates:
                    raise _Located(("questions", n, "hops"), f"unknown predicate {hop!r}")
            for field in ("text", "entity", "expected"):
                check_text(getattr(q, field), ("questions", n, field))
        return self


# ---------------------------------------------------------------------------------------------------------
# The loaded world: validated spec plus the behaviour derived from it.


@dataclass(frozen=True)
class Checkpoint:
    """A point of the study: the initial load (step 0) or the day of an event (step k)."""

    step: int
    day: dt.date  # the partition key's day
    at: dt.datetime  # when the pages changed and the graph was maintained (naive UTC)
    event: EventSpec | None

    @property
    def key(self) -> str:
        return self.day.isoformat()


@dataclass(frozen=True)
class Page:
    """A page's text as one scenario sees it at one checkpoint."""

    id: str
    title: str
    body: str
    updated_at: dt.datetime | None = None  # when its text last changed, where the source knows (git)
    audience: str = "public"  # who may read it


@dataclass(frozen=True)
class Question:
    """A question as asked at one checkpoint: placeholders filled with the true state of the world."""

    id: str
    event: int
    text: str
    entity: str
    hops: tuple[str, ...]
    expected: str  # "none" when the knowledge base does not say: the right answer is to abstain
    drifted: bool = False  # its answer (or the name in it) has changed since the first checkpoint
    accepted: tuple[str, ...] = ()  # every spelling that counts as right (the expected one included)
    caller: frozenset[str] = frozenset({"public"})  # the audiences the asker holds

    @property
    def expects_none(self) -> bool:
        return self.expected == NONE


NONE = "none"


def _state_reads(parts: list[BodyPart]) -> set[str]:
    """The current-state values a body's rendering depends on: its placeholders (not `{initial.x}`, which is
    fixed) and the values its conditions test."""
    reads: set[str] = set()

    def text(t: str) -> None:
        reads.update(m.group(2) for m in _PLACEHOLDER.finditer(t) if not m.group(1))

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


class World:
    """A validated world file and everything the study derives from it."""

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
        start = spec.start.astimezone(dt.timezone.utc).replace(tzinfo=None) if spec.start.tzinfo else spec.start
        self.start = start
        self._reads: list[list[str]] | None = None  # per page: the state values its body reads (see _rendered)
        self._bodies: dict[tuple[str | int, ...], str] = {}
        self.checkpoints = [Checkpoint(0, start.date(), start, None)] + [
            Checkpoint(i + 1, (start + dt.timedelta(days=e.day)).date(), start + dt.timedelta(days=e.day), e)
            for i, e in enumerate(spec.events)
        ]

    # ----- authority and naming -----
    RECORD, CANONICAL, MENTION, DRAFT = 0, 1, 2, 3

    def authority_rank(self, source: str, predicate: str) -> int:
        """0 system of record, 1 the canonical page for the predicate, 2 another page, 3 notes and drafts."""
        if source.startswith("record:"):
            return self.RECORD
        if source in self.spec.authority.drafts:
            return self.DRAFT
        if source in self.spec.authority.canonical.get(predicate, []):
            return self.CANONICAL
        return self.MENTION

    def name_key(self, name: str) -> str:
        """The write-time canonical form of a name: case folded, the world's prefixes and suffixes dropped."""
        key = " ".join(name.split()).casefold()
        for prefix in self.spec.naming.drop_prefixes:
            if key.startswith(prefix.casefold()) and len(key) > len(prefix):
                key = key[len(prefix):]
        for suffix in self.spec.naming.drop_suffixes:
            if key.endswith(suffix.casefold()) and len(key) > len(suffix):
                key = key[: -len(suffix)]
        return key.strip()

    # ----- identity -----
    @cached_property
    def canonical_json(self) -> str:
        # Key order is meaning here (predicates match in declared order, scenarios report in it): no sort_keys.
        return json.dumps(self.spec.model_dump(mode="json"), ensure_ascii=False)

    @cached_property
    def sha256(self) -> str:
        return hashlib.sha256(self.canonical_json.encode()).hexdigest()

    @property
    def id(self) -> str:
        """A stable name for the world: `id:` from the file, else the company name as a slug."""
        return self.spec.id or _slug(self.spec.company)

    @property
    def version(self) -> str:
        """Which revision of the world: any change to the file's content gives another version."""
        return self.sha256[:12]

    @classmethod
    def from_json(cls, text: str, source: str = "<stored world>") -> "World":
        return cls(WorldSpec.model_validate_json(text), source)

    # ----- calendar -----
    @property
    def scenario_names(self) -> list[str]:
        return list(self.spec.scenarios)

    @property
    def day_keys(self) -> list[str]:
        return [c.key for c in self.checkpoints]

    @property
    def event_day_keys(self) -> list[str]:
        return [c.key for c in self.checkpoints[1:]]

    def checkpoint(self, day_key: str) -> Checkpoint:
        for c in self.checkpoints:
            if c.key == day_key:
                return c
        raise KeyError(f"{day_key!r} is not a checkpoint day of this world (days: {self.day_keys})")

    @property
    def initial_pages_at(self) -> dt.datetime:
        """The initial pages were written the day before the first extraction (as in the post)."""
        return self.start - dt.timedelta(days=1)

    @property
    def repair_at(self) -> dt.datetime:
        return self.checkpoints[-1].at + dt.timedelta(days=1)

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

        return _PLACEHOLDER.sub(value, text)

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
                else:
                    holds = str(state[part.when_changed]) != str(self.spec.state[part.when_changed])
                rendered = self.render_body(part.then if holds else part.otherwise, state)
                if rendered:
                    pieces.append(rendered)
        return " ".join(pieces)

    def pages_at(self, scenario: str, step: int) -> list[Page]:
        return [Page(p.id, p.title, self._rendered(i, p, self.page_state(scenario, step, p)))
                for i, p in enumerate(self.spec.pages)]

    def _rendered(self, index: int, page: PageSpec, state: dict[str, StateValue]) -> str:
        """The page's body in this state, rendered once per distinct value of what the body reads: every
        (scenario, day) asks for every page, and most pages read nothing an event changes."""
        if self._reads is None:
            self._reads = [sorted(_state_reads(p.body)) for p in self.spec.pages]
        key = (index, *(str(state.get(name)) for name in self._reads[index]))  # rendering sees values only as str
        body = self._bodies.get(key)
        if body is None:
            body = self._bodies[key] = self.render_body(page.body, state)
        return body

    def questions_at(self, step: int) -> list[Question]:
        truth = self.state_at(step)
        questions = []
        for q in self.spec.questions:
            expected = self.fill(q.expected, truth)
            questions.append(Question(q.id, q.event, self.fill(q.text, truth), self.fill(q.entity, truth),
                                      tuple(q.hops), expected, drifted=q.event > 0 and step >= q.event,
                                      accepted=(expected,)))
        return questions

    # ----- what the rest of the study asks of any world (a corpus world answers the same) -----
    def scenario_graph_policy(self, scenario: str) -> str:
        return self.spec.scenarios[scenario].graph

    def scenario_pages_policy(self, scenario: str) -> str:
        return self.spec.scenarios[scenario].pages

    def audience_of(self, page_id: str) -> str:
        return "public"

    @property
    def company(self) -> str:
        return self.spec.company

    @property
    def page_count(self) -> int:
        return len(self.spec.pages)

    @property
    def question_ids(self) -> list[str]:
        return [q.id for q in self.spec.questions]

    @property
    def text(self) -> str:
        """Everything the world says, for checking that made-up example names appear nowhere in it."""
        return self.canonical_json

    def text_units(self, body: str) -> list[str]:
        """A page as the statements a model extractor reads one at a time: sentences here."""
        return split_sentences(body)

    def renames_at(self, scenario: str, step: int) -> dict[str, str]:
        """Pages moved at this step (old id -> new id): templated pages never move."""
        return {}

    def changes(self) -> list[dict[str, str]]:
        """One row per checkpoint after the first: what changed, for people reading the world asset."""
        return [{"event": str(e.id), "day": c.key, "kind": e.kind,
                 "changes": ", ".join(f"{k} = {v}" for k, v in e.set.items())}
                for e, c in zip(self.spec.events, self.checkpoints[1:])]

    def record_changes(self, step: int) -> list[tuple[str, tuple, str]]:
        """What the system of record says changed at this step: ("fact", (subject, predicate, object),
        source) or ("rename", (new name, old name), source)."""
        event = self.checkpoints[step].event
        if event is None:
            return []
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
        predicate, subject, obj = event.record.fact  # type: ignore[misc]
        return "fact", (self.fill(subject, after), predicate, self.fill(obj, after))


def _slug(name: str) -> str:
    """'Tessaly Freight' -> 'tessaly_freight': a valid world id (see WorldSpec.id) made from any name."""
    slug = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    if not slug[:1].isalpha():
        slug = "w_" + slug
    return slug[:48]


# ---------------------------------------------------------------------------------------------------------
# Loading with errors a person can act on.


def load_world(path: str | Path) -> World:
    """Read and validate a world file. Anything wrong with it is one `WorldFileError` line. A large file's
    parsed world is kept on disk by its content (world_cache.py), so the next process reads it back."""
    path = Path(path)
    text = _read_world_text(path)
    return cached_parse(text, str(path), parse_world, World)  # type: ignore[return-value]


def _read_world_text(path: Path) -> str:
    try:
        info = path.stat()
    except FileNotFoundError:
        raise WorldFileError(f"{path}: world file not found; pass --world PATH or restore data/worlds/") from None
    except OSError as e:
        raise WorldFileError(f"{path}: {_os_problem(e)}") from None
    if stat.S_ISDIR(info.st_mode):
        raise WorldFileError(f"{path}: {_os_problem(IsADirectoryError())}")
    if not stat.S_ISREG(info.st_mode):
        # A pipe blocks and a device never ends: only a regular file has a size that bounds the read.
        raise WorldFileError(f"{path}: not a regular file (a pipe, device or socket); save the world to a .yaml "
                             "file and pass that")
    if info.st_size > MAX_WORLD_FILE_BYTES:
        raise WorldFileError(f"{path}: {_too_big(info.st_size)}")
    try:
        with path.open("rb") as f:
            data = f.read(MAX_WORLD_FILE_BYTES + 1)  # bounded even if the file grew after the stat
    except OSError as e:
        raise WorldFileError(f"{path}: {_os_problem(e)}") from None
    if len(data) > MAX_WORLD_FILE_BYTES:
        raise WorldFileError(f"{path}: {_too_big(len(data))}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise WorldFileError(f"{path}: not UTF-8 text at line {line} ({e.reason} at byte {e.start}); "
                             "save the file as UTF-8") from None


def _os_problem(e: OSError) -> str:
    if isinstance(e, IsADirectoryError):
        return "is a directory, not a world file; pass the .yaml file inside it, e.g. data/worlds/tessaly_freight.yaml"
    if isinstance(e, PermissionError):
        return "cannot read the world file: permission denied; make it readable (chmod u+r) or pass a copy"
    if isinstance(e, NotADirectoryError):
        return "a folder on this path is a file; check the path"
    return f"cannot read the world file: {e.strerror or e}"


def _too_big(size: int) -> str:
    return (f"the world file is {size / 2**20:,.1f} MiB, at most {MAX_WORLD_FILE_BYTES // 2**20} MiB "
            "(MAX_WORLD_FILE_BYTES) are allowed; a world is a sample of a company, not its whole wiki")


def parse_world(text: str, source: str = "<string>") -> World:
    """Validate a world file's text; `source` names it in errors. Anything wrong is one `WorldFileError` line."""
    if len(text) > MAX_WORLD_FILE_BYTES:  # the same bound for text that did not come from a file
        raise WorldFileError(f"{source}: {_too_big(len(text))}")
    data, node = _load_yaml(text, source)
    if not isinstance(data, dict):
        raise WorldFileError(f"{source}: a world file is a mapping with company, start, shapes, predicates, ...")
    spec_class: type[BaseModel] = WorldSpec
    if "corpus" in data:  # pages from a revision history, questions from a file (corpus_world.py)
        from .corpus_world import CorpusWorldSpec

        spec_class = CorpusWorldSpec
    try:
        spec = spec_class.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        loc = [p for p in err["loc"] if not _is_union_tag(p)]
        located = (err.get("ctx") or {}).get("error")
        if isinstance(located, _Located):
            loc += list(located.loc)
        field = _dotted(loc) or "(top level)"
        line = _line_of(node, loc)
        msg = err["msg"].removeprefix("Value error, ")
        at = f" (line {line})" if line else ""
        more = f" [and {len(e.errors()) - 1} more]" if len(e.errors()) > 1 else ""
        raise WorldFileError(f"{source}: {field}{at}: {msg}{more}") from None
    if spec_class is not WorldSpec:
        from .corpus_world import CorpusWorld

        return CorpusWorld(spec, source)  # type: ignore[arg-type]
    return World(spec, source)  # type: ignore[arg-type]


# ----- YAML: bounded before any Python object is built -----


class _GuardedConstruction:
    """Turns a value the YAML constructors choke on (a timestamp such as 2026-13-45, an integer of 5,000
    digits) into a YAML error at that value's line, instead of a bare ValueError from deep inside."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)  # type: ignore[misc]
        except yaml.YAMLError:
            raise
        except (ValueError, TypeError, ArithmeticError) as e:
            reason = str(e)
            if "integer string conversion" in reason:  # Python's guard against quadratic int parsing
                reason = "the number has thousands of digits"
            raise yaml.constructor.ConstructorError(None, None, f"cannot read this value: {reason}",
                                                    node.start_mark) from None


class _PureLoader(_GuardedConstruction, yaml.SafeLoader):
    pass


# libyaml parses and composes in C, many times faster on large generated worlds; construction (and so every
# value) is the same Python code. Its error messages differ, so errors are re-read with the pure loader.
_FastLoader: type | None = None
if yaml.__with_libyaml__:
    class _FastLoader(_GuardedConstruction, yaml.CSafeLoader):  # type: ignore[no-redef]
        pass


def _load_yaml(text: str, source: str) -> tuple[Any, yaml.Node | None]:
    """The document's Python value and its node graph (for line numbers). Nesting depth and the number of
    values, aliases expanded, are checked before anything is built."""
    loader = _FastLoader or _PureLoader
    try:
        return _compose_and_construct(text, source, loader)
    except (yaml.YAMLError, UnicodeEncodeError) as e:
        error: Exception = e
    if loader is not _PureLoader:
        # libyaml words its errors differently and sometimes places them a line later; the pure loader's
        # wording and line are the documented ones (and the tests'), so the same error is found with it.
        # Only a broken file pays for this second, slower read.
        try:
            _compose_and_construct(text, source, _PureLoader)
        except yaml.YAMLError as pure:
            error = pure
    raise WorldFileError(f"{source}: not valid YAML at {_yaml_problem(error, text)}") from None


def _yaml_problem(e: Exception, text: str) -> str:
    """'line L, column C: what', from any YAML error."""
    if isinstance(e, yaml.reader.ReaderError):
        # A character YAML refuses (a control character, a lone surrogate): it has a position, not a mark.
        line = text.count("\n", 0, e.position) + 1
        column = e.position - (text.rfind("\n", 0, e.position) + 1) + 1
        return f"line {line}, column {column}: {str(e).splitlines()[0]}"
    if isinstance(e, UnicodeEncodeError):  # libyaml's form of the same thing, when the pure loader agreed
        line = text.count("\n", 0, e.start) + 1
        return f"line {line}: {e.reason} ({text[e.start]!a})"
    mark = getattr(e, "problem_mark", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "somewhere"
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    return f"{where}: {problem}"


def _compose_and_construct(text: str, source: str, loader_class: type) -> tuple[Any, yaml.Node | None]:
    aliases = _prescan(text, source, loader_class)
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None, None
        if aliases:  # without aliases the node graph is the tree the prescan already measured
            _check_expansion(node, source)
        try:
            return loader.construct_document(node), node
        except yaml.constructor.ConstructorError as e:
            # Values are built by the same Python code under either parser: no need to ask the pure one.
            mark = e.problem_mark or e.context_mark
            where = f"{_field_at(node, mark)} (line {mark.line + 1})" if mark else "(top level)"
            raise WorldFileError(f"{source}: {where}: {e.problem or e.context}") from None
    finally:
        loader.dispose()


def _field_at(root: yaml.Node, mark: yaml.Mark) -> str:
    """The dotted path of the value that starts at `mark`, found by walking the node graph (error path only)."""
    parents: dict[int, tuple[yaml.Node, Any]] = {}
    todo = [root]
    while todo:
        node = todo.pop()
        if (node.start_mark.line, node.start_mark.column) == (mark.line, mark.column):
            path: list[Any] = []
            while id(node) in parents:
                node, label = parents[id(node)]
                path.append(label)
            return _dotted(path[::-1]) or "(top level)"
        if isinstance(node, yaml.MappingNode):
            labelled = [(child, key.value if isinstance(key, yaml.ScalarNode) else "?")
                        for key, value in node.value for child in (key, value)]
        elif isinstance(node, yaml.SequenceNode):
            labelled = list(zip(node.value, range(len(node.value))))
        else:
            labelled = []
        for child, label in labelled:
            if id(child) not in parents and child is not root:
                parents[id(child)] = (node, label)
                todo.append(child)
    return "(top level)"


_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass
class _Open:
    """A collection the prescan is inside, and which of its children it is reading (for messages)."""

    is_mapping: bool
    label: Any = None  # the key (mapping) or index (sequence) of the current child
    reading_key: bool = True  # mapping: the next node is a key
    count: int = 0  # sequence: children seen


def _prescan(text: str, source: str, loader_class: type) -> int:
    """Walk the event stream (iteratively, keeping no nodes) and refuse nesting deeper than MAX_YAML_DEPTH
    (the composer recurses per level: 10,000 '[' are a RecursionError, or a crash in libyaml's composer)
    and more than MAX_YAML_NODES values (memory). Returns the number of aliases, which it cannot expand."""
    stack: list[_Open] = []
    nodes = aliases = 0
    for event in yaml.parse(text, Loader=loader_class):
        if isinstance(event, yaml.CollectionEndEvent):
            stack.pop()
            continue
        if not isinstance(event, yaml.NodeEvent):
            continue  # stream and document events
        if stack:  # the event is the next child of the innermost collection: label it for messages
            parent = stack[-1]
            if not parent.is_mapping:
                parent.label, parent.count = parent.count, parent.count + 1
            elif parent.reading_key:
                parent.label = event.value if isinstance(event, yaml.ScalarEvent) else "?"
                parent.reading_key = False
            else:
                parent.reading_key = True
        if isinstance(event, yaml.AliasEvent):
            aliases += 1
            continue
        nodes += 1
        if nodes > MAX_YAML_NODES:
            raise _stream_error(source, stack, event, f"the file holds more than {MAX_YAML_NODES:,} YAML values "
                                "(MAX_YAML_NODES); split the world or generate a smaller one")
        if isinstance(event, yaml.ScalarEvent):
            # The pure loader accepts a "\ud800" escape; such a string cannot be written out as UTF-8 later.
            if not event.value.isascii() and _SURROGATE.search(event.value):
                raise _stream_error(source, stack, event, "the text contains half of a UTF-16 surrogate pair "
                                    "(an escape such as \\ud800); write the character itself")
            continue
        if len(stack) >= MAX_YAML_DEPTH:
            raise _stream_error(source, stack, event, f"values nest more than {MAX_YAML_DEPTH} levels deep "
                                "(MAX_YAML_DEPTH; a world needs about 8); look for unclosed brackets")
        stack.append(_Open(is_mapping=isinstance(event, yaml.MappingStartEvent)))
    return aliases


def _stream_error(source: str, stack: list[_Open], event: yaml.Event, message: str) -> WorldFileError:
    path = [collection.label for collection in stack]
    field = _dotted(path[:6]) + ("..." if len(path) > 6 else "") or "(top level)"
    return WorldFileError(f"{source}: {field} (line {event.start_mark.line + 1}): {message}")


class _Cycle(Exception):
    pass


def _check_expansion(root: yaml.Node, source: str) -> None:
    """Refuse a node graph whose aliases expand past MAX_YAML_NODES values or MAX_YAML_DEPTH levels, or
    that contains itself. Nine anchors of nine aliases each are 387,420,489 strings once built ("billion
    laughs"), from a few hundred bytes; counted here by node identity, it takes a few hundred steps."""
    measured: dict[int, tuple[int, int]] = {}  # id(node) -> (values, depth) once expanded; values saturate
    tops = root.value if isinstance(root, yaml.MappingNode) else [(None, root)]
    total = 1
    for key, value in tops:
        field = str(key.value) if isinstance(key, yaml.ScalarNode) else "(top level)"
        line = value.start_mark.line + 1
        try:
            values, depth = _expand(value, measured)
        except _Cycle:
            raise WorldFileError(f"{source}: {field} (line {line}): an alias refers to a value that contains it, "
                                 "a loop that never ends; copy the value instead of the alias") from None
        total += 1 + values
        if total > MAX_YAML_NODES:
            raise WorldFileError(f"{source}: {field} (line {line}): aliases expand to more than {MAX_YAML_NODES:,} "
                                 "YAML values (MAX_YAML_NODES), an alias bomb; write the values out instead of "
                                 "nesting aliases of aliases")
        if depth + 1 > MAX_YAML_DEPTH:
            raise WorldFileError(f"{source}: {field} (line {line}): aliases nest values more than {MAX_YAML_DEPTH} "
                                 "levels deep (MAX_YAML_DEPTH); write the values out instead")


def _expand(start: yaml.Node, measured: dict[int, tuple[int, int]]) -> tuple[int, int]:
    """(values, depth) of `start` with aliases expanded, memoised by node identity. Iterative, because an
    alias chain is deeper than the file looks; raises _Cycle for a node that contains itself."""

    def children(node: yaml.Node) -> list[yaml.Node]:
        if isinstance(node, yaml.MappingNode):
            return [part for pair in node.value for part in pair]
        return node.value if isinstance(node, yaml.SequenceNode) else []

    open_nodes: set[int] = set()  # the nodes on the current path, to spot a loop
    todo: list[tuple[yaml.Node, bool]] = [(start, False)]
    while todo:
        node, done = todo.pop()
        if done:  # every child is measured: add them up
            kids = [measured[id(child)] for child in children(node)]
            values = min(1 + sum(v for v, _ in kids), MAX_YAML_NODES + 1)  # saturate: stays a small int
            depth = (1 + max((d for _, d in kids), default=0)) if isinstance(node, yaml.CollectionNode) else 0
            measured[id(node)] = (values, depth)
            open_nodes.discard(id(node))
            continue
        if id(node) in measured:
            continue
        if id(node) in open_nodes:
            raise _Cycle()
        open_nodes.add(id(node))
        todo.append((node, True))
        todo.extend((child, False) for child in children(node) if id(child) not in measured)
    return measured[id(start)]


def _is_union_tag(part: Any) -> bool:
    # pydantic adds the union member's name to the location ("str", "FactPart"); a person never wrote it.
    return isinstance(part, str) and (part in _UNION_TAGS or "[" in part)


_UNION_TAGS = {"str", "int", "float"} | {cls.__name__ for cls in _Model.__subclasses__()}


def _dotted(loc: list[Any]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _line_of(node: yaml.Node | None, loc: list[Any]) -> int | None:
    """The 1-based line of the deepest YAML node that `loc` reaches."""
    best = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            match = next((v for k, v in node.value if getattr(k, "value", None) == part), None)
            if match is None:
                break
            node = match
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            break
        best = node.start_mark.line + 1
    return best
