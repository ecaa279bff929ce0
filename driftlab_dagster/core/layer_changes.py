"""A partition's knowledge layer read as what changed since the partition read before it.

A scenario's day differs from the day before in the pages that changed and in what the graphs read from them:
at 40,000 pages a partition's layer is some 200,000 rows, of which a few hundred are new. The answers step asks
a scenario's days one after another, so it reads each later one as its changes: the rows DuckDB holds for that
day and not for the day before, and the reverse, found by DuckDB in one pass over both days. A scenario's first
day is read as its changes from another scenario's (the scenarios hold the same rows until their policies
part), so only the first partition is read whole. The objects of the rows that did not change are the earlier
layer's own, and so are the graphs' index entries that hold only them, so neither their reading, nor their
building, nor their indexing is paid again. The layer is the one `warehouse.stored_layer` builds from the whole
slice, down to the order of its dicts (tested); only the reading is cheaper.

Small tables (entities, aliases, the governed graph's names) are read whole: their rows cost less than the
bookkeeping of their changes. The graph step reads a scenario's page history the same way (`stored_page_history`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import duckdb

from . import versioned
from .governed import GovernedFact, GovernedStore
from .layer import KnowledgeLayer
from .store import ExtractionEntry, Fact, Store, StoredPage
from .warehouse import READ_BACK, MissingUpstream, Slice, slice_tuples, stored_layer
from .world import World

_Object = TypeVar("_Object")

_IN_SLICE = "world = ? AND world_version = ? AND scenario = ? AND day = ?"


@dataclass(frozen=True)
class Changes:
    """One table's rows that this slice holds and the earlier one does not (`new`: added or changed), and the
    reverse (`gone`: changed or removed). A row's first column is its key, as in the table's order."""

    new: list[tuple]
    gone: list[tuple]

    def applied(self, before: dict[Any, _Object], build: Callable[..., _Object]) -> list[_Object]:
        """This slice's objects in key order: `before`'s (key -> object, in key order) with the changes made,
        each new row built by `build(*row)`."""
        return list(self.carried(before, build)[0].values())

    def carried(self, before: dict[Any, _Object], build: Callable[..., _Object]
                ) -> tuple[dict[Any, _Object], list[_Object], list[_Object]]:
        """As `applied`, as key -> object (in key order), with the objects of `before` the changes removed or
        replaced and the objects they built, each in key order (what an index over the objects must drop and
        take)."""
        added = {row[0]: build(*row) for row in sorted(self.new, key=_key)}
        gone = sorted({row[0] for row in self.gone})
        after = dict(before)
        for key in set(gone) - added.keys():
            del after[key]
        after.update(added)  # a changed row keeps its place; a new key goes last (in key order)...
        new_keys = added.keys() - before.keys()
        if new_keys and before and min(new_keys) < next(reversed(before.keys())):  # ...and that is not its place
            after = dict(sorted(after.items(), key=_key))
        return after, [before[key] for key in gone], list(added.values())


def _key(row: tuple) -> Any:
    """A changed row's key (its first column), or a (key, object) item's."""
    return row[0]


@dataclass(frozen=True)
class LayerChanges:
    """One partition's layer as the changes from another partition's of the same world version."""

    pages: Changes
    facts: Changes
    extraction_log: Changes
    governed_facts: Changes
    entities: list[tuple]
    aliases: list[tuple]
    governed_names: list[tuple]

    def layer(self, world: World, before: KnowledgeLayer) -> KnowledgeLayer:
        """The layer, given the earlier partition's as it was read."""
        assert before.governed is not None, "a stored layer always holds its governed graph"
        # The graphs' indexes are carried from the layer before, not built from every fact again.
        store = Store.from_changes(before.store, self.pages.applied(before.store.pages, StoredPage), self.entities,
                                   self.aliases, *self.facts.carried(before.store.facts, Fact),
                                   self.extraction_log.applied(before.store.extractions, ExtractionEntry))
        governed = GovernedStore.from_changes(world, before.governed,
                                              *self.governed_facts.carried(before.governed.facts, GovernedFact),
                                              self.governed_names, store.versions_read())
        return KnowledgeLayer(store, governed)


# The tables read as changes (the others are read whole): the versioned ones (warehouse.VERSIONED), whose
# changes are the row versions one slice holds and the other does not.
_CHANGED = ("pages", "facts", "extraction_log", "governed_facts")


def read_changes(conn: duckdb.DuckDBPyConnection, where: Slice, before: Slice) -> LayerChanges | None:
    """`where`'s layer as the changes from `before`'s (another partition of the same world version: the day
    before, or another scenario's day), or None when `where` is not stored at this version of the world file
    (read it whole then: that read names the partition to materialise)."""
    assert (where.world, where.world_version) == (before.world, before.world_version)
    # Asked of the slices' ids, not the view: the view would join a whole slice's row versions to find one row.
    if not all(conn.execute(f"SELECT 1 FROM {versioned.slices_table(table)} WHERE {_IN_SLICE} LIMIT 1",
                            _params(where)).fetchone() for table in ("pages", "extraction_log")):
        return None
    return LayerChanges(**{table: _changes(conn, table, where, before) for table in _CHANGED},
                        entities=slice_tuples(conn, "entities", where), aliases=slice_tuples(conn, "aliases", where),
                        governed_names=slice_tuples(conn, "governed_names", where))


def _changes(conn: duckdb.DuckDBPyConnection, table: str, where: Slice, before: Slice) -> Changes:
    """The rows of `table` that `where` holds and `before` does not, and the reverse."""
    in_slice = "scenario = ? AND day = ?"
    return _changes_between(conn, table, "world = ? AND world_version = ?", [where.world, where.world_version],
                            (in_slice, [where.scenario, where.day]), (in_slice, [before.scenario, before.day]))


def _changes_between(conn: duckdb.DuckDBPyConnection, table: str, within: str, params: list,
                     this: tuple[str, list], earlier: tuple[str, list]) -> Changes:
    """The rows of `table` (a versioned one: those `within` with `params` select) that only one of two slices
    holds, each slice a condition on its slice columns and its parameters; a slice never holds a row twice."""
    rows = versioned.changes_between(conn, table, READ_BACK[table][0], within, params, this, earlier)
    return Changes(new=[row[:-1] for row in rows if row[-1]], gone=[row[:-1] for row in rows if not row[-1]])


def _params(where: Slice) -> list[str]:
    return [where.world, where.world_version, where.scenario, where.day]


class LayerReader:
    """Reads partitions' layers one after another, each as its changes from a layer read before it (at the same
    version of the world file): a scenario's later day from its day before, a scenario's first day from the
    layer read last (another scenario's, which until the scenarios' policies part holds the same rows); only
    the first partition is read whole. The answers step asks partitions in key order, a day's scenarios side
    by side, so the last layer of every scenario is kept (one layer per scenario in memory). The layers it
    hands out must not be changed (answering only reads them): the next day is made from them."""

    def __init__(self, conn: duckdb.DuckDBPyConnection, world: World):
        self._conn, self._world = conn, world
        self._last: dict[tuple[str, str, str], tuple[Slice, KnowledgeLayer]] = {}
        self._latest: dict[tuple[str, str], tuple[Slice, KnowledgeLayer]] = {}

    def read(self, where: Slice) -> KnowledgeLayer:
        version = (where.world, where.world_version)
        last = self._last.get((*version, where.scenario)) or self._latest.get(version)
        if last is not None and (changes := read_changes(self._conn, where, last[0])) is not None:
            layer = changes.layer(self._world, last[1])
        else:
            layer = stored_layer(self._conn, self._world, where)
        self._last[(*version, where.scenario)] = self._latest[version] = (where, layer)
        return layer


def stored_page_history(conn: duckdb.DuckDBPyConnection, world: str, world_version: str, scenario: str,
                        upto_step: int, from_step: int = 0) -> dict[int, tuple[list[StoredPage], dict[str, str]]]:
    """Step -> that day's pages (in id order) and renames (old page id -> new), for steps from_step..upto_step of
    one scenario: what a graph replays. The first step is read whole, each later one as its changes from the
    step before; a page that did not change is the same object on both days."""
    in_scenario = "world = ? AND world_version = ? AND scenario = ?"
    stored = {step for (step,) in conn.execute(
        f"SELECT DISTINCT step FROM {versioned.slices_table('pages')} WHERE {in_scenario} AND step BETWEEN ? AND ?",
        [world, world_version, scenario, from_step, upto_step]).fetchall()}
    missing = [s for s in range(from_step, upto_step + 1) if s not in stored]
    if missing:
        raise MissingUpstream(f"pages of {scenario} for steps {missing} are missing or come from another version "
                              "of the world file: materialise those `pages` partitions first")
    columns, order = READ_BACK["pages"]
    renamed = conn.execute(f"""SELECT step, renamed_from, page_id FROM pages
                               WHERE {in_scenario} AND step BETWEEN ? AND ? AND renamed_from IS NOT NULL
                               ORDER BY step, page_id""",
                           [world, world_version, scenario, from_step, upto_step]).fetchall()
    history: dict[int, tuple[list[StoredPage], dict[str, str]]] = {}
    pages: dict[str, StoredPage] = {}
    for step in range(from_step, upto_step + 1):
        if step == from_step:
            rows = conn.execute(f"SELECT {columns} FROM pages WHERE {in_scenario} AND step = ? ORDER BY {order}",
                                [world, world_version, scenario, step]).fetchall()
            today = [StoredPage(*row) for row in rows]
        else:
            today = _changes_between(conn, "pages", in_scenario, [world, world_version, scenario], ("step = ?", [step]),
                                     ("step = ?", [step - 1])).applied(pages, StoredPage)
        pages = {page.id: page for page in today}
        history[step] = (today, {old: new for s, old, new in renamed if s == step})
    return history
