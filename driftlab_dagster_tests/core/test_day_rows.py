"""A replayed day's graph rows built again only where they changed are the rows the stores give, and the rows
that did not change are the day before's own tuples; each day's graph and page rows name every key where they
differ from the day before's."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest

from driftlab_dagster.core.day_rows import DayRows, PageRows
from driftlab_dagster.core.extraction import RegexExtractor
from driftlab_dagster.core.governed import GovernedStore
from driftlab_dagster.core.layer import KnowledgeLayer
from driftlab_dagster.core.ontology import Triple
from driftlab_dagster.core.slice_batch import KeyedRows
from driftlab_dagster.core.store import Store
from driftlab_dagster.core.study import pages_at, replay_steps, sync_pages
from driftlab_dagster.core.world.loader import load_world
from driftlab_dagster.project import DEFAULT_WORLD
from driftlab_dagster_tests.core.test_corpus_world import make_wiki

T0 = dt.datetime(2026, 9, 1, 9)


def _listed(tables: dict) -> dict:
    return {t: list(rows.values()) if isinstance(rows, dict) else rows for t, (_, rows) in tables.items()}


def _stores_rows(layer: KnowledgeLayer) -> dict:
    assert layer.governed is not None
    return {**layer.store.rows(("entities", "aliases", "facts", "extraction_log")), **layer.governed.rows()}


def _replayed_days() -> Iterator[tuple[bool, KnowledgeLayer, dict]]:
    """Every replayed day of every Tessaly scenario: whether it is a scenario's first, the layer, and the
    graph rows one DayRows per scenario gives."""
    world = load_world(DEFAULT_WORLD)
    extractor = RegexExtractor(world.ontology)
    last = len(world.checkpoints) - 1
    for scenario in world.scenario_names:
        layer = KnowledgeLayer(Store(), GovernedStore(world))
        day_rows = DayRows()
        pages = (world.pages_at(scenario, s) for s in range(last + 1))
        renames = [world.renames_at(scenario, s) for s in range(last + 1)]
        for step, replayed, _ in replay_steps(world, scenario, layer, pages, extractor, renames):
            yield step == 0, replayed, day_rows.tables(replayed)


def test_every_replayed_day_of_every_scenario_gives_the_stores_rows():
    reused, before = 0, None
    for first, replayed, tables in _replayed_days():
        if first:
            before = None
        assert _listed(tables) == _stores_rows(replayed)
        for table, (columns, _) in tables.items():
            assert list(columns) == list((Store.ROW_COLUMNS | GovernedStore.ROW_COLUMNS)[table])
        facts = tables["facts"][1]
        assert isinstance(facts, dict)
        if before is not None:
            reused += sum(facts[k] is before[k] for k in facts.keys() & before.keys())
        before = facts
    assert reused  # unchanged facts kept the day before's tuples


def test_each_day_s_rows_name_the_day_before_s_and_every_key_that_is_not_its_very_row():
    touched_days, before = 0, None
    for first, _, tables in _replayed_days():
        if first:
            before = None
        keyed = {t: rows for t, (_, rows) in tables.items() if isinstance(rows, KeyedRows)}
        assert sorted(keyed) == ["extraction_log", "facts", "governed_facts"]
        for table, rows in keyed.items():
            if before is None:
                assert rows.since is None
                continue
            assert rows.since is before[table]
            differing = {k for k in rows.keys() | rows.since.keys() if rows.get(k) is not rows.since.get(k)}
            assert differing <= set(rows.touched)
            assert set(rows.touched) <= rows.keys() | rows.since.keys()
            touched_days += bool(rows.touched)
        before = keyed
    assert touched_days  # some day changed some rows, and said so


def test_a_renamed_entity_s_facts_carry_the_new_name():
    store = Store()
    store.upsert_page("d1", "Pricing", "Pro costs $10.", T0)
    store.apply_page(store.pages["d1"], [Triple("Pro", "price", "$10"), Triple("Team", "price", "$20")], T0)
    layer = KnowledgeLayer(store, GovernedStore(load_world(DEFAULT_WORLD)))
    day_rows = DayRows()
    first = day_rows.tables(layer)["facts"][1]
    store.apply_rename("Pro plan", "Pro")
    second = day_rows.tables(layer)["facts"][1]
    assert [row[2] for row in second.values()] == ["Pro plan", "Team"]
    team = next(k for k, row in second.items() if row[2] == "Team")
    assert second[team] is first[team]
    assert list(second.values()) == store.rows(("facts",))["facts"]


@pytest.mark.parametrize("which", ["tessaly", "a wiki with a page moved, one deleted and one added"])
@pytest.mark.parametrize("every", [1, 2])
def test_each_day_s_page_rows_name_every_page_whose_row_differs_from_the_day_before_s(which: str, every: int,
                                                                                       tmp_path: Path):
    """Every day rendered (`every` 1) or every second (the steps between still synced): the rows are the
    pages as the store holds them, flagged as the day's step reported, and every page whose row is not the
    day before's (changed, moved, gone, or a flag dropped) is named."""
    world = load_world(DEFAULT_WORLD if which == "tessaly" else make_wiki(tmp_path) / "world.yaml")
    named_fewer = 0
    for scenario in world.scenario_names:
        layer, page_rows, before = KnowledgeLayer(Store()), PageRows(), None
        for step in range(len(world.checkpoints)):
            renames = world.renames_at(scenario, step)
            changed = sync_pages(layer, world.pages_at(scenario, step), pages_at(world, step), renames)
            page_rows.step(changed, renames)
            if step % every:
                continue
            moved_from = {new: old for old, new in renames.items()}
            rows = page_rows.rows(layer.store.sorted_pages(), set(changed), moved_from)
            assert list(rows.values()) == [
                (p.id, p.title, p.body, p.version, p.updated_at, p.id in changed, p.audience, moved_from.get(p.id))
                for p in layer.store.sorted_pages()]
            assert rows.since is before
            if before is not None:
                differing = {k for k in rows.keys() | before.keys() if rows.get(k) != before.get(k)}
                assert differing <= set(rows.touched), (scenario, step)
                named_fewer += len(rows.touched) < len(rows)
            before = rows
    assert named_fewer or which != "tessaly"  # the rows name some pages, not all (the wiki has a handful)
