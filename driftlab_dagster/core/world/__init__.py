"""What the study needs from a world, whatever kind of file it came from.

A world is a company whose pages and facts change over a sequence of checkpoints: the initial load (step 0)
and one checkpoint per change event (templated worlds) or per date (corpus worlds, read from a real
revision history). The study, the designs, the warehouse and the Dagster assets see a world only through
`World`, below; the two kinds live in their own modules and neither inherits the other:

- `templated.py`: pages rendered from templates and a state that events change (`templated_spec.py` is
  its file format);
- `corpus.py`: pages read from a git repository or dated snapshot folders (`corpus_spec.py`, `history.py`).

`loader.py` reads a world file and picks the kind; `yaml_guard.py` and `shapes.py` keep a hostile or
mistaken file from hanging or crashing anything later. This module imports none of them.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import cached_property

from ..errors import UserError
from ..ontology import Ontology
from ..permissions import PUBLIC as PUBLIC  # the audience every caller holds
from ..units import Unit
from ..values import initialism
from .common import NamingSpec

NONE = "none"  # the expected answer when the knowledge base does not say: abstaining is right

# What a system-of-record change says: ("fact", (subject, predicate, object), source) or
# ("rename", (new name, old name), source).
RecordChange = tuple[str, tuple[str, ...], str]


# What Dagster refuses in a multi-partition key's parts: its separators and control characters.
_PARTITION_KEY_FORBIDDEN = set("|,[]\a\b\f\n\r\t\v\0")


class WorldFileError(UserError, ValueError):
    """A world file that cannot be used. The message is one line, written for the person editing it."""


@dataclass(frozen=True)
class Checkpoint:
    """A point of the study: the initial load (step 0) or a later checkpoint (step k)."""

    step: int
    day: dt.date  # the partition key's day
    at: dt.datetime  # when the pages changed and the graph was maintained (naive UTC)

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
    audience: str = PUBLIC  # who may read it


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
    caller: frozenset[str] = frozenset({PUBLIC})  # the audiences the asker holds

    @property
    def expects_none(self) -> bool:
        return self.expected == NONE


class World(ABC):
    """The interface every kind of world implements, and what follows from it (the calendar, authority
    ranks, canonical names). A subclass sets `source`, `ontology`, `start` and `checkpoints` when it is
    built and answers the abstract members below."""

    source: str  # the file it was read from, for messages and the `worlds` table
    ontology: Ontology
    start: dt.datetime  # the first checkpoint's time (naive UTC)
    checkpoints: list[Checkpoint]

    # Authority ranks of a fact's source, best first (Governed design): the system of record, the page that
    # owns the predicate, another page that mentions it, meeting notes and drafts.
    RECORD, CANONICAL, MENTION, DRAFT = 0, 1, 2, 3

    # ----- identity -----
    @property
    @abstractmethod
    def id(self) -> str:
        """A stable name for the world in tables, asset keys and file names."""

    @property
    @abstractmethod
    def company(self) -> str: ...

    @property
    @abstractmethod
    def canonical_json(self) -> str:
        """Everything the world is made of, as stable JSON: what its version hashes and what is stored."""

    @cached_property
    def sha256(self) -> str:
        return hashlib.sha256(self.canonical_json.encode()).hexdigest()

    @property
    def version(self) -> str:
        """Which revision of the world: any change to what it is made of gives another version."""
        return self.sha256[:12]

    @property
    @abstractmethod
    def text(self) -> str:
        """Everything the world says, for checking that made-up example names appear nowhere in it."""

    @property
    @abstractmethod
    def page_count(self) -> int: ...

    @property
    @abstractmethod
    def notes(self) -> tuple[str, ...]:
        """What loading read with a caveat or left out, one line each (`check-world` prints them): nothing
        wrong enough to refuse the world, but what its author should know (a page too big to read)."""

    @property
    @abstractmethod
    def question_ids(self) -> list[str]: ...

    # ----- scenarios -----
    @property
    @abstractmethod
    def scenario_names(self) -> list[str]: ...

    @abstractmethod
    def scenario_pages_policy(self, scenario: str) -> str:
        """How the scenario's pages follow the world: all, canonical or lagging (some lag), or none."""

    @abstractmethod
    def scenario_graph_policy(self, scenario: str) -> str:
        """How the scenario's graph is kept: patch_changed_pages, patch_from_record or none."""

    # ----- what happens at each checkpoint -----
    @abstractmethod
    def pages_at(self, scenario: str, step: int) -> list[Page]:
        """The pages as the scenario sees them at a checkpoint."""

    @abstractmethod
    def renames_at(self, scenario: str, step: int) -> dict[str, str]:
        """Pages moved at this step (old id -> new id)."""

    @abstractmethod
    def questions_at(self, step: int) -> list[Question]:
        """The questions with the answers that are true at this checkpoint."""

    @abstractmethod
    def record_changes(self, step: int) -> list[RecordChange]:
        """What the system of record says changed at this step (nothing at step 0)."""

    @abstractmethod
    def changes(self) -> list[dict[str, str]]:
        """One row per checkpoint after the first: what changed, for people reading the world asset."""

    @abstractmethod
    def text_units(self, body: str, title: str = "") -> list[Unit]:
        """A page as the statements a model reads one at a time, each with what is around it."""

    # ----- who may read what, and whom to believe -----
    @abstractmethod
    def audience_of(self, page_id: str) -> str: ...

    @abstractmethod
    def authority_rank(self, source: str, predicate: str) -> int:
        """RECORD, CANONICAL, MENTION or DRAFT for a fact from `source` about `predicate`."""

    @property
    @abstractmethod
    def naming(self) -> NamingSpec:
        """The prefixes and suffixes a name is known without ("the Pro plan" is "Pro")."""

    def name_key(self, name: str) -> str:
        """The write-time canonical form of a name: case folded, the world's prefixes and suffixes dropped; a name
        written with its initials in brackets is known by them ("Flexible Spending Account (FSA)" is "fsa", as a
        page that goes on to write "FSA" means), `values.initialism`."""
        key = initialism(name) or " ".join(name.split()).casefold()
        for prefix in self.naming.drop_prefixes:
            if key.startswith(prefix.casefold()) and len(key) > len(prefix):
                key = key[len(prefix):]
        for suffix in self.naming.drop_suffixes:
            if key.endswith(suffix.casefold()) and len(key) > len(suffix):
                key = key[: -len(suffix)]
        return key.strip()

    def check_partition_keys(self) -> None:
        """Refuse, in one line, scenario names and days that Dagster could not use as partition keys: each
        kind of world validates its own, so this holds for any world file that loaded."""
        for what, keys in (("scenario", self.scenario_names), ("checkpoint day", self.day_keys)):
            twice = sorted({k for k in keys if keys.count(k) > 1})
            bad = [k for k in keys if not k or set(k) & _PARTITION_KEY_FORBIDDEN or "..." in k]
            if twice or bad:
                why = "it is used twice" if twice else "it is empty or holds | , [ ] or a control character"
                raise WorldFileError(f"{self.source}: {what} {(twice or bad)[0]!r} cannot be a partition key ({why})")

    # ----- the calendar, derived from the checkpoints -----
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
