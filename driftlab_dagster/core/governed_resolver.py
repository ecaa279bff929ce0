"""The Governed design's read rule: staleness at fact level, in code.

A question about (entity, predicate) is answered from the governed graph (governed.py) and the pages as they are
now: a fact whose source page has a newer version is checked against that version, and the newer version of the
same source settles it (no hedge); authority ranks the candidates, recency breaks ties only inside one rank.
Only an unsettled conflict inside the top rank, or no entry at all, is a reason to hedge.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from .governed import GovernedStore
from .grounding import ground, overlap
from .ontology import Triple
from .store import StoredPage
from .units import Unit
from .values import answers_when_asked, name_words, names_closely, names_match, normalise, states, telling_words


@dataclass(frozen=True)
class Candidate:
    value: str
    rank: int
    date: dt.datetime
    source: str
    settled_by_newer_version: bool = False


@dataclass(frozen=True)
class Resolution:
    """The governed answer for one (entity, predicate): the value, whether to hedge, and why. `candidates` are
    the claims weighed, which a model reader is shown as its evidence: values the question's words dropped
    (`GovernedResolver._as_asked`) are not among them, only named in `why`."""

    value: str | None
    hedged: bool
    why: str
    candidates: tuple[Candidate, ...] = ()


class GovernedResolver:
    """Answers (name, predicate) from a governed store and the pages as they are now.

    `read` is how a page newer than the graph is read at question time: the run's own extractor (the regex
    one, or the model through the same call cache), so a model run's Governed column is the model's too.
    """

    def __init__(self, store: GovernedStore, pages: list[StoredPage],
                 read: Callable[[StoredPage], Iterable[Triple]] | None = None):
        self.store = store
        self.world = store.world
        self._pages = {page.id: page for page in pages}
        self._units: dict[str, list[Unit]] = {}  # page id -> its units, cut once per resolver
        ontology = self.world.ontology
        read = read or (lambda page: ontology.parse(page.body))
        self._renames = ontology.rename_predicates()
        # Pages whose current version the graph has not read: their current text is checked fact by fact.
        self.ahead: dict[str, tuple[StoredPage, tuple[Triple, ...]]] = {}
        for page in pages:
            seen = store.extractions.get(page.id)
            if seen is None or seen[0] < page.version:
                self.ahead[page.id] = (page, tuple(read(page)))
        # Renames stated by pages the graph has not read yet, so a new name still finds its entity.
        self._late_aliases: dict[str, str] = {}
        for _, triples in self.ahead.values():
            for t in triples:
                if t.predicate in self._renames:
                    self._late_aliases[self.world.name_key(t.subject)] = t.object

    def entity(self, name: str) -> int | None:
        found = self.store.resolve(name)
        if found is None and self.world.name_key(name) in self._late_aliases:
            found = self.store.resolve(self._late_aliases[self.world.name_key(name)])
        return found

    def _gone(self, source: str) -> bool:
        """True when `source` is a page the graph read that is not among the pages now. A fact with no page
        behind it (a system-of-record fact) is never gone: its source was never a page the graph read."""
        return source not in self._pages and source in self.store.extractions

    def _same_entity(self, subject: str, entity_id: int) -> bool:
        return self.entity(subject) == entity_id

    def linked(self, name: str, predicate: str) -> int | None:
        """The entity a question's name means: the one by that name, else (a page words it differently) the
        entity with facts of `predicate` whose name holds every content word of the asked one, the closest
        (fewest other words) first. None when no name fits."""
        found = self.entity(name)
        if found is not None and self.store.facts_on(found, predicate):
            return found
        fitting = sorted((len(name_words(self.store.current_name(entity_id))), entity_id)
                         for entity_id in self.store.entities_with(predicate)
                         if any(names_match(self.world.name_key(name), self.world.name_key(n.name))
                                for n in self.store.names_of(entity_id)))
        return fitting[0][1] if fitting else found

    def resolve(self, name: str, predicate: str, may_read: Callable[[str], bool] | None = None,
                asked: str = "") -> Resolution:
        """The governed value of (name, predicate) from what a caller may read (`may_read(audience)`):
        facts and newer pages it may not read are dropped before anything is weighed. `asked`, the question as
        a person wrote it, chooses among the values one page gives the slot (`_as_asked`)."""
        may_read = may_read or (lambda audience: True)
        entity_id = self.linked(name, predicate)
        if entity_id is None:
            found = self._from_newer_pages_only(name, predicate, may_read)
            return found if found.value is not None else self._by_section(name, predicate, may_read, asked)
        candidates: list[Candidate] = []
        for fact in self.store.facts_on(entity_id, predicate):
            if fact.retracted_at is not None or not may_read(fact.audience):
                continue
            if fact.source in self.ahead:
                continue  # replaced below by what the newer version of that page says
            if self._gone(fact.source):
                continue  # the page that stated it was deleted or moved away: nothing states it any more
            candidates.append(Candidate(fact.object, fact.rank, fact.valid_from, fact.source))
        for page_id, (page, triples) in self.ahead.items():
            if not may_read(page.audience):
                continue
            for t in triples:
                if t.predicate == predicate and self._same_entity(t.subject, entity_id):
                    candidates.append(Candidate(t.object, self.world.authority_rank(page_id, predicate),
                                                page.updated_at, page_id, settled_by_newer_version=True))
        if not candidates:
            return self._by_section(name, predicate, may_read, asked)
        return self._weigh_as_asked(candidates, name, asked)

    def _weigh_as_asked(self, candidates: list[Candidate], name: str, asked: str) -> Resolution:
        said = frozenset().union(*(telling_words(c.value) for c in candidates))
        candidates, shaped = self._of_the_asked_shape(candidates, asked)
        candidates, given = self._not_given(candidates, name, asked)
        candidates, chosen = self._as_asked(candidates, name, asked, said)
        found = self._weigh(candidates)
        if not (shaped or given or chosen):
            return found
        # The question chose by its words, not authority or time: a hint to the reader of which claim is meant,
        # never a certainty. A value of a shape the question cannot mean is no claim at all: no hedge for that.
        return replace(found, hedged=found.hedged or bool(given or chosen),
                       why="; ".join(w for w in (shaped, given, chosen, found.why) if w))

    @staticmethod
    def _of_the_asked_shape(candidates: list[Candidate], asked: str) -> tuple[list[Candidate], str]:
        """A question that asks at what time something falls is not answered by its weekday, nor one asking the
        Eastern time by the Pacific one (`values.answers_when_asked`): one page often writes all three for one
        meeting ("Each Monday at 2:30 pm ET (11:30 am PT)"), and the model files each as its own claim. Such
        values drop where a value of the asked shape remains; else all stay. Returns the candidates and why."""
        fitting = [c for c in candidates if answers_when_asked(asked, c.value)]
        if not fitting or len(fitting) == len(candidates):
            return candidates, ""
        dropped = dict.fromkeys(c.value for c in candidates if c not in fitting)
        return fitting, f"the question does not ask for {', '.join(dropped)}"

    @staticmethod
    def _not_given(candidates: list[Candidate], name: str, asked: str) -> tuple[list[Candidate], str]:
        """A question never asks for what it states as given: in "In a normal 40-hour week, how many hours are
        staff expected to bill?" the 40 hours is the premise, and "Which tool do staff use to conference call?"
        does not ask for "conference call". Where one page gives the slot such a value beside one the question
        does not write, the value written in the question drops. Never between two pages: there a
        disagreement is drift or a conflict, which authority and time settle ("Is billing still owned by
        Heron?" must not drop the newer page's Heron for the older page's other owner). A value the asked name
        itself writes is not given by the question ("#infrastructure" of "Which channel reaches the
        Infrastructure team?"). Returns the candidates and why, if any were dropped (the caller hedges: the
        question's wording is a hint)."""
        given = {c for c in candidates
                 if asked and normalise(c.value) and states(asked, c.value) and not states(name, c.value)}
        kept = {c.source for c in candidates if c not in given}
        dropped = [c for c in candidates if c in given and c.source in kept]
        if not dropped:
            return candidates, ""
        return ([c for c in candidates if c not in dropped],
                f"the question itself gives {', '.join(dict.fromkeys(c.value for c in dropped))}")

    def _as_asked(self, candidates: list[Candidate], name: str, asked: str,
                  said: frozenset[str] = frozenset()) -> tuple[list[Candidate], str]:
        """Where one page gives the slot several values, they may be several facts of one kind, not a
        disagreement: "four hours per pay period", "six hours" after three years and "240 hours" carried over
        are all annual leave's time allowances. The question's own words choose: of that page's values, only
        those whose statement shares the most of them with the question stay (the words of the asked name and
        of the values, said by all, do not count). A statement counts only where it or its own heading names
        the asked name, so a neighbour's value the model filed under it is never chosen for its wording; a
        value the page writes in no such statement, no word shared, or a tie: all stay, and the usual weighing
        decides. Returns the candidates and why, if any were dropped (the caller hedges: wording is a hint)."""
        if not asked:
            return candidates, ""
        said = said.union(*(telling_words(c.value) for c in candidates))  # `said`: values dropped before
        question = telling_words(asked) - telling_words(name) - said
        dropped: list[Candidate] = []
        why = []
        for source in dict.fromkeys(c.source for c in candidates):
            values = {normalise(c.value): c.value for c in candidates if c.source == source}
            if len(values) < 2 or source not in self._pages:
                continue
            about = [u for u in self._page_units(source) if self._names(u, name)]
            shared = {}
            for key, value in values.items():
                stating = [u for u in about if states(u.text, value)]
                if not stating:
                    break  # where the page writes this value is unknown: no ground to prefer another
                shared[key] = max(len(question & telling_words(f"{u.trail[-1] if u.trail else ''} {u.lead} "
                                                               f"{u.text}")) for u in stating)
            else:
                best = max(shared.values())
                if not best or list(shared.values()).count(best) == len(shared):
                    continue
                lost = [c for c in candidates if c.source == source and shared[normalise(c.value)] < best]
                dropped += lost
                why.append(f"the question's words choose {', '.join(v for k, v in values.items() if shared[k] == best)}"
                           f" over {', '.join(dict.fromkeys(c.value for c in lost))}, which {source} gives too")
        return [c for c in candidates if c not in dropped], "; ".join(why)

    @staticmethod
    def _headed_by(unit: Unit, name: str) -> bool:
        """Whether a statement's nearest heading (the page title when none is nearer) or list lead-in names
        `name`; never a heading further up, which names a chapter."""
        return (bool(unit.trail) and names_match(name, unit.trail[-1])
                or bool(unit.lead) and names_match(name, unit.lead))

    @classmethod
    def _names(cls, unit: Unit, name: str) -> bool:
        """Whether a statement is about `name`: its own heading or lead-in names it, or it names it itself."""
        return cls._headed_by(unit, name) or names_closely(name, unit.text)

    def _by_section(self, name: str, predicate: str, may_read: Callable[[str], bool], asked: str = "") -> Resolution:
        """A name the graph holds no claim of `predicate` about may still be what a statement is about: prose
        names its subject in the nearest heading ("## Business cards", then "A pack of 250 costs $27.62", a fact
        the model filed under "GSA branding") or in the statement beside another noun ("45 minutes ... design
        team huddle", filed under "the design"). The facts of `predicate` whose value such a statement writes
        are weighed as its claims: first those under a heading or a list's lead-in that names `name` (a
        section is about one thing), else those whose statement names it, else any on a page whose title
        names it, if they agree (a page is about what its title says, less closely: where its statements
        give different values, none is known to be this one's). Under a heading or in a statement that names
        it, the question's words choose among one page's values (`_as_asked`), as for the entity's own claims.
        A page newer than the graph is read as it is now, as for the entity's own claims: its claims are those its
        current version states (read at question time), never the graph's of its older version. Only open
        relations: a templated world's sentence names its subject, and its model-free reading is exact."""
        if not self.world.ontology[predicate].open:
            return Resolution(None, False, "not in graph")
        # "Heron" is no claim on "Heron team".
        claims = [(subject, c) for subject, c in self._claims_of(predicate, may_read) if not overlap(name, c.value)]
        for where, named, must_agree in (("its heading", self._under_a_heading_naming, False),
                                         ("it", self._naming, False),
                                         ("its subject with its page's title", self._qualified_by_the_title, True),
                                         ("its page's title", self._under_a_title_naming, True)):
            candidates = [c for subject, c in claims
                          if any(states(unit.text, c.value) for unit in named(c.source, name, subject))]
            if candidates:
                found = (self._weigh(self._of_the_asked_shape(candidates, asked)[0]) if must_agree
                         else self._weigh_as_asked(candidates, name, asked))
                if found.hedged and must_agree:
                    break  # a page about many things: its disagreeing values say nothing of which is this one's
                return replace(found, why="; ".join(w for w in (f"read where {where} names {name}", found.why) if w))
        return Resolution(None, False, "not in graph")

    def _claims_of(self, predicate: str, may_read: Callable[[str], bool]) -> list[tuple[str, Candidate]]:
        """Every claim of `predicate` on a page as it is now, with the name of its subject: the graph's facts from
        pages it has read in their current version, and what each page newer than the graph states now."""
        claims = [(self.store.current_name(entity_id), Candidate(f.object, f.rank, f.valid_from, f.source))
                  for entity_id in self.store.entities_with(predicate)
                  for f in self.store.facts_on(entity_id, predicate)
                  if f.retracted_at is None and may_read(f.audience) and f.source not in self.ahead
                  and f.source in self._pages]
        for page_id, (page, triples) in self.ahead.items():
            if may_read(page.audience):  # `ahead` is built from the pages as they are now
                claims += [(t.subject, Candidate(t.object, self.world.authority_rank(page_id, predicate),
                                                 page.updated_at, page_id, settled_by_newer_version=True))
                           for t in triples if t.predicate == predicate]
        return claims

    def stated_by(self, pages: Iterable[StoredPage], name: str, predicate: str, value: str) -> str | None:
        """The id of the first of `pages` with a statement the extractor would read (`name`, `predicate`,
        `value`) from (grounding.ground: it speaks of the relation and writes the value), and that is about
        `name`: the subject grounding reads names it, or the statement's own heading or lead-in does, as Governed
        links a name to the claims read under such a heading ("## Pet Insurance" above "everyone gets a 10%
        discount on this insurance", read as a claim on "insurance"). Else None: what lets an answer read from
        pages stand where the graph holds no fact."""
        relation, key = self.world.ontology[predicate], self.world.name_key(name)
        for page in pages:
            for unit in self._page_units(page.id) if page.id in self._pages else ():
                read = ground(Triple(name, predicate, value), relation, unit.text, unit.context)
                if (read is not None and (states(read.object, value) or states(value, read.object))
                        and (names_match(key, self.world.name_key(read.subject)) or self._headed_by(unit, key))):
                    return page.id
        return None

    def _page_units(self, page_id: str) -> list[Unit]:
        if page_id not in self._units:
            page = self._pages[page_id]
            self._units[page_id] = self.world.text_units(page.body, page.title)
        return self._units[page_id]

    def _under_a_heading_naming(self, page_id: str, name: str, subject: str) -> list[Unit]:
        """The statements of a page headed by `name` (`_headed_by`)."""
        return [u for u in self._page_units(page_id) if self._headed_by(u, name)]

    def _under_a_title_naming(self, page_id: str, name: str, subject: str) -> list[Unit]:
        units = self._page_units(page_id)
        return units if units and units[0].trail and names_match(name, units[0].trail[0]) else []

    def _qualified_by_the_title(self, page_id: str, name: str, subject: str) -> list[Unit]:
        """A page's statements when the claim's subject is `name` written short (every word of it is one of
        `name`'s) and the page's title says the rest: "top secret" on the page "Top Secret ... Clearance" is
        the Top Secret clearance; "Term renewal survey" on "Term extensions" is not about term extensions."""
        units = self._page_units(page_id)
        if not (units and units[0].trail and names_match(subject, name)):
            return []
        return units if names_match(name, f"{subject} {units[0].trail[0]}") else []

    def _naming(self, page_id: str, name: str, subject: str) -> list[Unit]:
        """The statements of a page that write a name of two words or more themselves, as a phrase. One word in
        running text says little of what a statement is about ("details", "team"), nor do words scattered
        over a sentence ("a Level 3 summary rating ... Level 4 or Level 5" is not about "Level 5 summary
        rating")."""
        if len(name_words(name)) < 2:
            return []
        return [u for u in self._page_units(page_id) if names_closely(name, u.text)]

    def _from_newer_pages_only(self, name: str, predicate: str, may_read: Callable[[str], bool]) -> Resolution:
        """A name the graph has never seen (a product renamed after the graph last read its pages, where the
        rename itself was not read) may still be stated by pages newer than the graph: weigh those."""
        key = self.world.name_key(name)
        candidates = [Candidate(t.object, self.world.authority_rank(page_id, predicate), page.updated_at, page_id,
                                settled_by_newer_version=True)
                      for page_id, (page, triples) in self.ahead.items() if may_read(page.audience)
                      for t in triples if t.predicate == predicate and self.world.name_key(t.subject) == key]
        return self._weigh(candidates)

    def _weigh(self, candidates: list[Candidate]) -> Resolution:
        if not candidates:
            return Resolution(None, False, "not in graph")
        top_rank = min(c.rank for c in candidates)
        top = [c for c in candidates if c.rank == top_rank]
        pick = max(top, key=lambda c: c.date)  # recency breaks ties only inside the top rank
        values = {normalise(c.value) for c in top}
        if len(values) > 1:
            return Resolution(pick.value, True, "sources disagree within the top rank", tuple(candidates))
        return Resolution(pick.value, False, "", tuple(candidates))
