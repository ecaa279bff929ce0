"""A corpus world's file format (docs/your-own-wiki.md): where the pages are (a git repository or folders
of dated snapshots) and the checkpoints; the open ontology (a name and a description per relation, no
regex); authority and audience by path glob; an optional system of record; and the questions (inline or a
file), each with its answer at each checkpoint."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from ..values import ValueKind
from . import NONE, PUBLIC
from .common import NamingSpec, SpecModel, check_scenario_name

# The values an open relation's parts take: core/values.py (money, durations, e-mail addresses, lists of
# people, ...), the shapes grounding trims a model's parts to.

class ExampleSpec(SpecModel):
    sentence: str = Field(max_length=1000)
    subject: str = ""
    object: str
    section: str = Field("", max_length=300)  # the heading above the sentence, where it names the subject


class OpenPredicateSpec(SpecModel):
    description: str = Field(min_length=3, max_length=1000)
    subject: ValueKind = "name"
    object: ValueKind = "phrase"
    fixed_subject: str | None = None  # the one subject a relation has ("Refund policy")
    cues: list[str] = Field(default_factory=list)  # words, phrases or symbols; default: the relation's name
    question: str | None = Field(None, max_length=300)  # how it is asked, with {subject}: "Who leads {subject}?"
    examples: list[ExampleSpec] = Field(default_factory=list, max_length=4)
    rename: bool = False  # "X was formerly called Y": merges entities instead of storing a fact


class CorpusSpec(SpecModel):
    git: str | None = None
    snapshots: str | None = None
    paths: list[str] = Field(default_factory=lambda: ["**/*.md"], min_length=1)
    checkpoints: list[dt.date] | Literal["commits"] | None = None

    @model_validator(mode="after")
    def _one_source(self) -> CorpusSpec:
        if (self.git is None) == (self.snapshots is None):
            raise ValueError("give exactly one of `git` (a repository) or `snapshots` (a folder of dated folders)")
        if self.git is not None and self.checkpoints is None:
            raise ValueError("a git corpus needs `checkpoints`: a list of dates, or `commits`")
        if isinstance(self.checkpoints, list):
            if not self.checkpoints:
                raise ValueError("give at least one checkpoint date")
            if self.checkpoints != sorted(set(self.checkpoints)):
                raise ValueError("checkpoint dates must be distinct and increasing")
        return self


class ScenarioPolicy(SpecModel):
    pages: Literal["all", "lagging", "none"]
    graph: Literal["patch_changed_pages", "patch_from_record", "none"]
    lag: float = Field(0.3, gt=0, le=1)  # with pages: lagging, the share of changed pages that lag one checkpoint
    seed: int = 7


class EvidenceSpec(SpecModel):
    page: str
    quote: str = ""


class CorpusQuestionSpec(SpecModel):
    id: str
    text: str = Field(min_length=1, max_length=1000)
    entity: str | dict[dt.date, str]
    hops: list[str] = Field(min_length=1)
    caller: list[str] = Field(default_factory=lambda: [PUBLIC], min_length=1)
    answers: dict[dt.date, str] = Field(min_length=1)
    accepted: dict[str, list[str]] = Field(default_factory=dict)
    evidence: dict[dt.date, EvidenceSpec] = Field(default_factory=dict)

    @field_validator("answers", "entity", mode="before")
    @classmethod
    def _as_text(cls, value: Any) -> Any:
        # A YAML number ("30") or null means its text; null is "none", the knowledge base does not say.
        def text(v: Any) -> Any:
            return NONE if v is None else str(v) if isinstance(v, (int, float)) else v
        return {k: text(v) for k, v in value.items()} if isinstance(value, dict) else text(value)

    @field_validator("accepted")
    @classmethod
    def _spellings(cls, accepted: dict[str, list[str]]) -> dict[str, list[str]]:
        for answer, spellings in accepted.items():
            if not spellings:
                raise ValueError(f"the accepted spellings of {answer!r} are an empty list: list at least one, or "
                                 "drop the entry")
        return accepted


class RecordSpec(SpecModel):
    date: dt.date
    source: str = "record:system"
    subject: str | None = None
    predicate: str | None = None
    object: str | None = None
    rename: dict[Literal["from", "to"], str] | None = None
    audience: str = PUBLIC


class CorpusWorldSpec(SpecModel):
    id: str | None = None
    company: str = Field(min_length=1, max_length=200)
    corpus: CorpusSpec
    questions: str | list[CorpusQuestionSpec]
    predicates: dict[str, OpenPredicateSpec] = Field(min_length=1)
    authority: dict[str, int] = Field(default_factory=dict)  # path glob -> rank (1 canonical .. 3 notes)
    audience: dict[str, str] = Field(default_factory=dict)  # path glob -> who may read
    system_of_record: str | list[RecordSpec] | None = None
    scenarios: dict[str, ScenarioPolicy] | None = None
    naming: NamingSpec = Field(default_factory=NamingSpec)

    @field_validator("predicates")
    @classmethod
    def _names(cls, predicates: dict[str, OpenPredicateSpec]) -> dict[str, OpenPredicateSpec]:
        for name in predicates:
            if not re.fullmatch(r"[a-z][a-z0-9_]{0,47}", name):
                raise ValueError(f"relation name {name!r}: lower case letters, digits and '_', e.g. owned_by")
        return predicates

    @field_validator("scenarios")
    @classmethod
    def _scenario_names(cls, scenarios: dict[str, ScenarioPolicy] | None) -> dict[str, ScenarioPolicy] | None:
        for name in scenarios or {}:
            check_scenario_name(name)
        return scenarios

    @field_validator("authority")
    @classmethod
    def _ranks(cls, ranks: dict[str, int]) -> dict[str, int]:
        for glob, rank in ranks.items():
            if not 1 <= rank <= 3:
                raise ValueError(f"rank {rank} for {glob!r}: use 1 (canonical), 2 (a page) or 3 (notes, drafts); "
                                 "0 is the system of record")
        return ranks

