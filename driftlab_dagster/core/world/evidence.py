"""A corpus question's evidence as the reader reads it: the unit (a sentence, a list item, a table row, with its
heading trail) that holds the quote, and whether that unit names the question's entity the way the graph
designs find it. A user names what they ask about in their own words ("Medical insurance", "New hire
computer"); the graph holds the names the pages write ("Health Insurance", "Setting Up Your Machine"), so a
question whose evidence never writes its entity is one no graph design can answer, however well it reads.
`check-world` notes such questions; `bench/handbook_reach.py` counts them."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..units import Unit, markdown_units
from ..values import names_match
from . import NONE

if TYPE_CHECKING:
    from .corpus import CorpusWorld
    from .corpus_spec import CorpusQuestionSpec


def _words(text: str) -> list[str]:
    """A text's words and numbers, case folded: a quote copied from the markdown source ("**Lead:** Ana",
    "| Marketing | $340,000 |") is found in the unit the reader made of it ("Lead: Ana", "Team: Marketing;
    Budget: $340,000")."""
    return re.findall(r"[\w$€£%.,@-]+", text.casefold().replace("*", " ").replace("|", " "))


def holds(unit: Unit, quote: str) -> bool:
    """Whether a unit holds a quote copied from the markdown source: the quote is read the way the page is
    (links to their text, shortcodes to their arguments), then every word of it must be in the unit."""
    shown = " ".join(u.text for u in markdown_units(quote)) or quote
    wanted = [w.strip(".,") for w in _words(shown)]
    have = {w.strip(".,") for w in _words(f"{unit.context} {unit.text}")}
    return bool(wanted) and all(w in have for w in wanted if w)


@dataclass(frozen=True)
class DatedEvidence:
    """One stated (not "none") answer of one question at one checkpoint, with the units of its evidence page
    that hold its quote. No units: `missing` says why ("no evidence", "no quote", "quote spans units"; a page
    missing at a checkpoint its evidence covers is refused when the world loads)."""

    question: CorpusQuestionSpec
    checkpoint: str
    day: dt.date
    answer: str
    entity: str
    evidenced: bool = False
    quote: str = ""
    units: tuple[Unit, ...] = ()

    @property
    def missing(self) -> str:
        if self.units:
            return ""
        return "no evidence" if not self.evidenced else "quote spans units" if self.quote else "no quote"

    def names_entity(self, world: CorpusWorld) -> list[Unit]:
        """The units that write the entity, in the statement or its headings, as the graph links a name. A
        relation with one fixed subject needs no name, nor does a later hop (its subject is an earlier answer)."""
        relation = self.question.hops[-1]
        if len(self.question.hops) > 1 or world.ontology[relation].fixed_subject:
            return list(self.units)
        return [u for u in self.units
                if names_match(world.name_key(self.entity), world.name_key(f"{u.context} {u.text}"))]


def dated_evidence(world: CorpusWorld) -> list[DatedEvidence]:
    """Every stated (not "none") answer at every checkpoint, in question order, with its evidence's units."""
    found = []
    for q in world.questions_spec:
        for checkpoint, snapshot in zip(world.checkpoints, world.snapshots):
            answer = world._as_of(q.answers, checkpoint.day)
            if answer == NONE:
                continue
            entity = q.entity if isinstance(q.entity, str) else world._as_of(q.entity, checkpoint.day)
            dated = [d for d in q.evidence if d <= checkpoint.day]
            evidence = q.evidence[max(dated)] if dated else None
            page = snapshot.pages.get(evidence.page) if evidence else None
            # check-world refuses evidence on a page missing at a checkpoint, so a page is missing only here
            units = () if page is None or evidence is None else tuple(
                u for u in world.text_units(page.body, page.title) if holds(u, evidence.quote))
            found.append(DatedEvidence(q, checkpoint.key, checkpoint.day, answer, entity, evidence is not None,
                                       evidence.quote if evidence else "", units))
    return found


def naming_notes(world: CorpusWorld) -> list[str]:
    """One note per question whose evidence, at some checkpoint where it is found, does not write the question's
    entity: there the graph designs cannot link that question to the facts read from it."""
    unnamed: dict[str, list[DatedEvidence]] = {}
    located: dict[str, int] = {}
    for d in dated_evidence(world):
        if not d.units:
            continue
        located[d.question.id] = located.get(d.question.id, 0) + 1
        if not d.names_entity(world):
            unnamed.setdefault(d.question.id, []).append(d)
    notes = []
    for qid, misses in unnamed.items():
        first = misses[0]
        unit = first.units[0]
        shown = f"{unit.context}: {unit.text}" if unit.context else unit.text
        notes.append(f"question {qid}: its entity {first.entity!r} is written neither in its evidence nor in the "
                     f"evidence's headings at {len(misses)} of the {located[qid]} checkpoints its evidence is found "
                     f"at (e.g. {first.checkpoint}: {shown[:100]!r}): the graph designs find a question's facts by "
                     "the name its pages write, so they cannot answer it there; name the entity as the page does (a "
                     "heading or the statement's own words; a date mapping where the page renamed it)")
    return notes
