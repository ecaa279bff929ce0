"""The Governed design's knowledge layer: bi-temporal, authority-ranked facts on canonical entities.

What the seed post wished for and did not build, as one store and one read rule:

- **Supersede, never overwrite.** A fact row carries valid_from/valid_to (world time: when it became and
  stopped being true) and recorded_at/retracted_at (when the graph learned and dropped it). A patch
  retracts the rows a page no longer supports and records new ones; nothing is deleted or updated in
  place, so the graph can say what it believed on any past day and what was true on any past day.
- **Extractor id on every row**, so one bad extraction run can be found and undone.
- **Authority per predicate** from the world file: system of record > the canonical page > another page
  > meeting notes and drafts. Recency breaks ties only inside one rank.
- **Canonical entities at write time**: "Pro", "Pro plan" and "the Pro plan" fold to one entity by the
  world's naming rules before a fact is stored; renames are time-scoped names.
- **Staleness at fact level, in code**: a fact whose source page has a newer version is checked against
  that version; the newer version of the same source settles it (no hedge). Only an unsettled conflict
  inside the top rank, or no entry at all, is a reason to hedge.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, replace
from operator import attrgetter

from .ontology import Triple
from .store import StoredPage, carried_index, slot_of
from .values import normalise
from .world import World

FOREVER = None  # an open interval end


@dataclass(frozen=True)
class GovernedFact:
    """One claim about a canonical entity, with both time axes, its source and its authority."""

    id: int
    entity_id: int
    predicate: str
    object: str
    source: str  # page id, or "record:<system>"
    source_version: int
    rank: int  # 0 record, 1 canonical page, 2 other page, 3 notes and drafts
    extractor: str
    valid_from: dt.datetime
    valid_to: dt.datetime | None
    recorded_at: dt.datetime
    retracted_at: dt.datetime | None
    audience: str = "public"  # the audience of the page it came from
    value: str = ""  # `object` normalised (values.normalise): what two sources are compared by


@dataclass(frozen=True)
class EntityName:
    """A name an entity went by, and when (world time): renames close one name and open the next."""

    entity_id: int
    name: str
    valid_from: dt.datetime
    valid_to: dt.datetime | None


# A fact's and a name's field values as one tuple, in field order (dataclasses.astuple would deep-copy).
_FACT_VALUES = attrgetter(*GovernedFact.__dataclass_fields__)
_NAME_VALUES = attrgetter(*EntityName.__dataclass_fields__)


class GovernedStore:
    """The governed graph: bi-temporal facts on canonical entities (see the module docstring). It implements
    the graph contract (layer.GraphBackend)."""

    def __init__(self, world: World):
        self.world = world
        self.facts: dict[int, GovernedFact] = {}
        self.names: list[EntityName] = []
        self.extractions: dict[str, tuple[int, dt.datetime]] = {}  # page id -> (version read, when)
        self._next_entity = 1
        # Indexes over `facts` and `names`, so a page's patch and a question's look-up cost what they touch,
        # not the size of the graph. Facts are never deleted (only retracted), so ids stay max + 1.
        self._facts_by_source: dict[str, list[int]] = {}
        self._facts_by_slot: dict[tuple[int, str], list[int]] = {}
        self._next_fact = 1
        self._names_index: tuple[dict[str, int], dict[int, list[EntityName]]] | None = None

    # ---------- indexes ----------
    def _reindex_facts(self) -> None:
        """Rebuild the fact indexes after facts moved between entities or pages (renames: rare)."""
        self._facts_by_source, self._facts_by_slot = {}, {}
        for fact_id in sorted(self.facts):
            self._index_fact(self.facts[fact_id])
        self._next_fact = max(self.facts, default=0) + 1

    def _index_fact(self, fact: GovernedFact) -> None:
        self._facts_by_source.setdefault(fact.source, []).append(fact.id)
        self._facts_by_slot.setdefault(slot_of(fact), []).append(fact.id)

    def _names_by(self) -> tuple[dict[str, int], dict[int, list[EntityName]]]:
        """(folded name -> the entity of the first name with that key, entity -> its names in order)."""
        if self._names_index is None:
            by_key: dict[str, int] = {}
            by_entity: dict[int, list[EntityName]] = {}
            for n in self.names:
                by_key.setdefault(self.world.name_key(n.name), n.entity_id)
                by_entity.setdefault(n.entity_id, []).append(n)
            self._names_index = (by_key, by_entity)
        return self._names_index

    def _set_names(self, names: list[EntityName]) -> None:
        self.names = names
        self._names_index = None

    def entities_with(self, predicate: str) -> list[int]:
        """The entities the graph holds facts of `predicate` about (retracted ones too), in id order."""
        return sorted({entity_id for entity_id, p in self._facts_by_slot if p == predicate})

    def names_of(self, entity_id: int) -> list[EntityName]:
        return list(self._names_by()[1].get(entity_id, []))

    def facts_on(self, entity_id: int, predicate: str) -> list[GovernedFact]:
        """Every fact (retracted ones too) on one (entity, predicate) slot, oldest id first."""
        return [self.facts[i] for i in self._facts_by_slot.get((entity_id, predicate), ())]

    def active_from(self, source: str) -> list[GovernedFact]:
        """The facts one source (page or record) currently supports, oldest id first."""
        facts = (self.facts[i] for i in self._facts_by_source.get(source, ()))
        return [f for f in facts if f.retracted_at is None]

    # ---------- entities ----------
    def resolve(self, name: str) -> int | None:
        """Any name the entity ever went by, folded by the world's naming rules."""
        return self._names_by()[0].get(self.world.name_key(name))

    def ensure_entity(self, name: str, since: dt.datetime) -> int:
        found = self.resolve(name)
        if found is not None:
            return found
        entity_id = self._next_entity
        self._next_entity += 1
        entry = EntityName(entity_id, name.strip(), since, FOREVER)
        self.names.append(entry)
        if self._names_index is not None:  # keep it true without a rebuild: new entities are frequent
            self._names_index[0].setdefault(self.world.name_key(entry.name), entity_id)
            self._names_index[1].setdefault(entity_id, []).append(entry)
        return entity_id

    def current_name(self, entity_id: int) -> str:
        names = self._names_by()[1].get(entity_id, [])
        open_names = [n for n in names if n.valid_to is None]
        return (open_names or names)[-1].name

    def names_on(self, entity_id: int, when: dt.datetime) -> list[str]:
        return [n.name for n in self._names_by()[1].get(entity_id, []) if n.valid_from <= when
                and (n.valid_to is None or when < n.valid_to)]

    def apply_rename(self, new: str, old: str, when: dt.datetime) -> None:
        """"new was formerly called old", from `when` on: close the old name, open the new one, and merge a
        separate node for the new name if extraction already made one. Saying it again changes nothing."""
        key = self.world.name_key
        old_id, new_id = self.resolve(old), self.resolve(new)
        keep = old_id if old_id is not None else new_id
        if keep is None:
            keep = self.ensure_entity(new, when)
        names = list(self.names)
        if new_id is not None and new_id != keep:
            self.facts = {i: replace(f, entity_id=keep) if f.entity_id == new_id else f for i, f in self.facts.items()}
            self._reindex_facts()
            names = [replace(n, entity_id=keep) if n.entity_id == new_id else n for n in names]
        if not any(n.entity_id == keep and key(n.name) == key(old) for n in names):
            names.append(EntityName(keep, old.strip(), dt.datetime.min, when))
        names = [replace(n, valid_to=when) if n.entity_id == keep and key(n.name) == key(old)
                 and n.valid_to is None else n for n in names]
        if not any(n.entity_id == keep and key(n.name) == key(new) for n in names):
            names.append(EntityName(keep, new.strip(), when, FOREVER))
        self._set_names(names)

    # ---------- writes ----------
    def _record(self, entity_id: int, predicate: str, obj: str, source: str, version: int, extractor: str,
                valid_from: dt.datetime, at: dt.datetime, audience: str = "public") -> None:
        fact_id = self._next_fact
        self._next_fact += 1
        self.facts[fact_id] = GovernedFact(fact_id, entity_id, predicate, obj, source, version,
                                           self.world.authority_rank(source, predicate), extractor, valid_from,
                                           FOREVER, at, None, audience, normalise(obj))
        self._index_fact(self.facts[fact_id])

    def _retract(self, fact: GovernedFact, at: dt.datetime, valid_to: dt.datetime | None) -> None:
        self.facts[fact.id] = replace(fact, retracted_at=at, valid_to=valid_to)

    def active(self) -> list[GovernedFact]:
        return [f for _, f in sorted(self.facts.items()) if f.retracted_at is None]

    def apply_page(self, page: StoredPage, triples: Iterable[Triple], at: dt.datetime, extractor: str,
                   issue: str = "") -> None:
        """What the page says now (renames excluded: they come through `apply_rename`) supersedes what its
        earlier versions said; nothing else moves."""
        said: dict[tuple[int, str, str], str] = {}
        for t in triples:
            # The ontology names the only subject some predicates have ("Retention policy"): a model that
            # wrote "Shipment data" still stored a retention period, of that subject.
            subject = self.world.ontology[t.predicate].fixed_subject or t.subject
            entity_id = self.ensure_entity(subject, page.updated_at)
            said.setdefault((entity_id, t.predicate, normalise(t.object)), t.object.strip())
        for fact in self.active_from(page.id):
            key = (fact.entity_id, fact.predicate, fact.value)
            if key in said:
                if fact.source_version != page.version:  # confirmed by the new version: re-record, same validity
                    self._retract(fact, at, FOREVER)
                    self._record(fact.entity_id, fact.predicate, fact.object, page.id, page.version, extractor,
                                 fact.valid_from, at, page.audience)
                del said[key]
            else:  # the page no longer says it: it stopped being true when the page changed
                self._retract(fact, at, page.updated_at)
        for (entity_id, predicate, _), obj in said.items():
            self._record(entity_id, predicate, obj, page.id, page.version, extractor, page.updated_at, at,
                         page.audience)
        self.extractions[page.id] = (page.version, at)

    def begin_rebuild(self) -> None:
        """Nothing to clear: a full re-extraction's readings supersede the old ones page by page."""

    def forget_page(self, page_id: str, at: dt.datetime) -> None:
        """A deleted page: what it said stopped being true when the graph learned it was gone."""
        for fact in self.active_from(page_id):
            self._retract(fact, at, at)
        self.extractions.pop(page_id, None)

    def rename_page(self, old_id: str, new_id: str) -> None:
        """A moved page keeps its facts under its new id (nothing it said stopped being true)."""
        self.facts = {i: replace(f, source=new_id) if f.source == old_id else f for i, f in self.facts.items()}
        self._reindex_facts()
        if old_id in self.extractions:
            self.extractions[new_id] = self.extractions.pop(old_id)

    def apply_record(self, subject: str, predicate: str, obj: str, source: str, at: dt.datetime) -> None:
        """A system-of-record fact, keyed by the canonical entity, so it reaches every spelling."""
        entity_id = self.ensure_entity(subject, at)
        for fact in [f for f in self.facts_on(entity_id, predicate) if f.source == source and f.retracted_at is None]:
            self._retract(fact, at, at)
        self._record(entity_id, predicate, obj, source, 1, "record", at, at)

    # ---------- as-of questions ----------
    def believed_on(self, name: str, predicate: str, when: dt.datetime) -> list[GovernedFact]:
        """What the graph held about (name, predicate) as recorded on `when` (transaction time)."""
        entity_id = self.resolve(name)
        if entity_id is None:
            return []
        return [f for f in self.facts_on(entity_id, predicate)
                if f.recorded_at <= when and (f.retracted_at is None or when < f.retracted_at)]

    def true_on(self, name: str, predicate: str, when: dt.datetime) -> list[GovernedFact]:
        """What the graph now says was true of (name, predicate) on `when` (valid time)."""
        entity_id = self.resolve(name)
        if entity_id is None:
            return []
        latest = {}
        for f in sorted(self.facts_on(entity_id, predicate), key=lambda f: (f.recorded_at, f.id)):
            latest[(f.source, f.value, f.valid_from)] = f
        return [f for f in latest.values() if f.valid_from <= when and (f.valid_to is None or when < f.valid_to)]

    # ---------- snapshots ----------
    # The columns of `rows()`'s tables, in order.
    ROW_COLUMNS = {"governed_facts": (*GovernedFact.__dataclass_fields__, "entity"),
                   "governed_names": tuple(EntityName.__dataclass_fields__)}

    def rows(self) -> dict[str, list[tuple]]:
        """The store as rows, one list of tuples (ROW_COLUMNS) per table: what is written to DuckDB."""
        facts = [f for _, f in sorted(self.facts.items())]
        current = {entity_id: self.current_name(entity_id) for entity_id in {f.entity_id for f in facts}}
        return {
            "governed_facts": [(*_FACT_VALUES(f), current[f.entity_id]) for f in facts],
            "governed_names": [_NAME_VALUES(n) for n in self.names],
        }

    def snapshot(self) -> dict[str, list[dict]]:
        return {table: [dict(zip(self.ROW_COLUMNS[table], row)) for row in rows] for table, rows in self.rows().items()}

    @classmethod
    def from_rows(cls, world: World, facts: Iterable[tuple], names: Iterable[tuple],
                  extractions: dict[str, tuple[int, dt.datetime]]) -> GovernedStore:
        """The store from rows as tuples in GovernedFact's and EntityName's field order (as a database hands
        them over, without a dict per row), and page id -> (version read, when)."""
        return cls.from_facts(world, (GovernedFact(*row) for row in facts), names, extractions)

    @classmethod
    def from_facts(cls, world: World, facts: Iterable[GovernedFact], names: Iterable[tuple],
                   extractions: dict[str, tuple[int, dt.datetime]]) -> GovernedStore:
        """As `from_rows`, from facts already built (a layer read as the changes from the day before keeps
        the facts that did not change)."""
        store = cls(world)
        store.facts = {f.id: f for f in facts}
        store._reindex_facts()
        store._set_names([EntityName(*row) for row in names])
        store._next_entity = max((n.entity_id for n in store.names), default=0) + 1
        store.extractions = extractions
        return store

    @classmethod
    def from_changes(cls, world: World, before: GovernedStore, facts: dict[int, GovernedFact],
                     removed: list[GovernedFact], added: list[GovernedFact], names: Iterable[tuple],
                     extractions: dict[str, tuple[int, dt.datetime]]) -> GovernedStore:
        """As `from_facts` with `facts` (id -> fact, in id order), the indexes carried from `before` as
        `Store.from_changes` carries them (neither store may be changed afterwards)."""
        store = cls.from_facts(world, (), names, extractions)
        store.facts, store._next_fact = facts, max(facts, default=0) + 1
        store._facts_by_source = carried_index(before._facts_by_source, removed, added, attrgetter("source"), list)
        store._facts_by_slot = carried_index(before._facts_by_slot, removed, added, slot_of, list)
        return store
