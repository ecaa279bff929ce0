"""The world as data: a company, its ontology, events, pages, questions and drift scenarios.

A world file (YAML) is validated on load. A malformed file raises `WorldFileError` with one line that
names the file, the line and the field, never a stack trace from deep inside.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, Union

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .ontology import Ontology, Predicate

_PLACEHOLDER = re.compile(r"\{(initial\.)?([a-z_][a-z0-9_]*)\}")

StateValue = Union[int, float, str]


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
    fact: tuple[str, str, str]


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


BodyPart = Union[str, FactPart, ConditionalPart]
ConditionalPart.model_rebuild()


class PageSpec(_Model):
    id: str
    title: str
    canonical_for: list[str] = Field(default_factory=list)  # event kinds this page is the canonical source for
    body: list[BodyPart]


class RecordSpec(_Model):
    source: str
    fact: tuple[str, str, str] | None = None
    rename: str | None = None  # the state variable whose value was renamed

    @model_validator(mode="after")
    def _one_change(self) -> "RecordSpec":
        if (self.fact is None) == (self.rename is None):
            raise ValueError("give exactly one of `fact` or `rename`")
        return self


class EventSpec(_Model):
    id: int
    day: int = Field(gt=0)
    kind: str
    set: dict[str, StateValue]
    record: RecordSpec


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


class AuthoritySpec(_Model):
    canonical: dict[str, list[str]] = Field(default_factory=dict)  # predicate -> the pages that own it
    drafts: list[str] = Field(default_factory=list)  # meeting notes and drafts: the lowest rank


class NamingSpec(_Model):
    drop_prefixes: list[str] = Field(default_factory=lambda: ["the "])
    drop_suffixes: list[str] = Field(default_factory=lambda: [" plan", " team"])


class WorldSpec(_Model):
    company: str
    start: dt.datetime
    shapes: dict[str, str]
    predicates: dict[str, PredicateSpec]
    state: dict[str, StateValue]
    events: list[EventSpec] = Field(min_length=1)
    scenarios: dict[str, ScenarioSpec] = Field(min_length=1)
    pages: list[PageSpec] = Field(min_length=1)
    questions: list[QuestionSpec] = Field(min_length=1)
    authority: AuthoritySpec = Field(default_factory=AuthoritySpec)
    naming: NamingSpec = Field(default_factory=NamingSpec)

    @field_validator("shapes")
    @classmethod
    def _shapes_compile(cls, shapes: dict[str, str]) -> dict[str, str]:
        for name, pattern in shapes.items():
            try:
                re.compile(pattern)
            except re.error as e:
                raise ValueError(f"shape {name!r} is not a valid regular expression: {e}") from None
        return shapes

    @model_validator(mode="after")
    def _cross_references(self) -> "WorldSpec":
        for name, p in self.predicates.items():
            for field, shape in (("subject", p.subject), ("object", p.object)):
                if shape is not None and shape not in self.shapes:
                    raise _Located(("predicates", name, field),
                                   f"unknown shape {shape!r} (known: {', '.join(sorted(self.shapes))})")
        known_vars = set(self.state)
        kinds = {e.kind for e in self.events}

        def check_text(text: str, loc: tuple[Any, ...]) -> None:
            for m in _PLACEHOLDER.finditer(text):
                if m.group(2) not in known_vars:
                    raise _Located(loc, f"{m.group(0)} is not a state variable (known: {', '.join(sorted(known_vars))})")

        def check_parts(parts: list[BodyPart], loc: tuple[Any, ...]) -> None:
            for i, part in enumerate(parts):
                if isinstance(part, FactPart):
                    if part.fact[0] not in self.predicates:
                        raise _Located(loc + (i, "fact"), f"unknown predicate {part.fact[0]!r}")
                    for text in part.fact[1:]:
                        check_text(text, loc + (i, "fact"))
                elif isinstance(part, ConditionalPart):
                    for var in list(part.when or {}) + ([part.when_changed] if part.when_changed else []):
                        if var not in known_vars:
                            raise _Located(loc + (i,), f"condition on unknown state variable {var!r}")
                    check_parts(part.then, loc + (i, "then"))
                    check_parts(part.otherwise, loc + (i, "otherwise"))

        seen_pages: set[str] = set()
        for n, page in enumerate(self.pages):
            if page.id in seen_pages:
                raise _Located(("pages", n, "id"), f"page id {page.id!r} is used twice")
            seen_pages.add(page.id)
            for kind in page.canonical_for:
                if kind not in kinds:
                    raise _Located(("pages", n, "canonical_for"), f"no event has kind {kind!r}")
            check_parts(page.body, ("pages", n, "body"))
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


@dataclass(frozen=True)
class Question:
    """A question as asked at one checkpoint: placeholders filled with the true state of the world."""

    id: str
    event: int
    text: str
    entity: str
    hops: tuple[str, ...]
    expected: str


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
        return [
            Page(p.id, p.title, self.render_body(p.body, self.page_state(scenario, step, p))) for p in self.spec.pages
        ]

    def questions_at(self, step: int) -> list[Question]:
        truth = self.state_at(step)
        return [
            Question(q.id, q.event, self.fill(q.text, truth), self.fill(q.entity, truth), tuple(q.hops),
                     self.fill(q.expected, truth))
            for q in self.spec.questions
        ]

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


# ---------------------------------------------------------------------------------------------------------
# Loading with errors a person can act on.


def load_world(path: str | Path) -> World:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise WorldFileError(f"{path}: world file not found; pass --world PATH or restore data/worlds/") from None
    except UnicodeDecodeError as e:
        raise WorldFileError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    return parse_world(text, str(path))


def parse_world(text: str, source: str = "<string>") -> World:
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "somewhere"
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise WorldFileError(f"{source}: not valid YAML at {where}: {problem}") from None
    if not isinstance(data, dict):
        raise WorldFileError(f"{source}: a world file is a mapping with company, start, shapes, predicates, ...")
    try:
        spec = WorldSpec.model_validate(data)
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
    return World(spec, source)


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
