"""A partition's layer read as its changes from the day before is the layer read whole, down to dict order."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from driftlab_dagster.core.designs import ALL_DESIGNS
from driftlab_dagster.core.duckdb_file import connect
from driftlab_dagster.core.evaluation import evaluate
from driftlab_dagster.core.extraction import RegexExtractor
from driftlab_dagster.core.governed import GovernedStore
from driftlab_dagster.core.layer import KnowledgeLayer
from driftlab_dagster.core.layer_changes import Changes, LayerReader, read_changes, stored_page_history
from driftlab_dagster.core.ontology import Triple
from driftlab_dagster.core.readers import DeterministicReader
from driftlab_dagster.core.slice_batch import SliceBatch
from driftlab_dagster.core.store import Store
from driftlab_dagster.core.study import page_history, replay_steps
from driftlab_dagster.core.warehouse import MissingUpstream, Slice, ensure_schema, stored_layer, transaction
from driftlab_dagster.core.world.loader import load_world
from driftlab_dagster.project import DEFAULT_WORLD
from driftlab_dagster_tests.core.test_corpus_world import make_wiki
from driftlab_dagster_tests.support.stored_layers import write_layer


def _state(layer: KnowledgeLayer) -> dict:
    """Everything a layer holds, in the order it holds it (dicts as item lists: their order is part of it)."""
    store, governed = layer.store, layer.governed
    assert governed is not None
    return {
        "pages": list(store.pages.items()), "entities": list(store.entities.items()),
        "aliases": list(store.aliases.items()), "facts": list(store.facts.items()),
        "log": list(store.extractions.items()), "by_name": list(store._entity_by_name.items()),
        "by_source": sorted((k, sorted(v)) for k, v in store._facts_by_source.items()),
        "by_slot": sorted((k, sorted(v)) for k, v in store._facts_by_slot.items()),
        "max_ids": (store._max_fact_id, store._max_entity_id),
        "governed_facts": list(governed.facts.items()), "names": governed.names,
        "governed_log": list(governed.extractions.items()),
        # An index's keys are only looked up, never walked in order: its entries are compared, not their order
        # (the ids of one entry are in id order: that order is read).
        "governed_by_source": sorted(governed._facts_by_source.items()),
        "governed_by_slot": sorted(governed._facts_by_slot.items()),
        "next_ids": (governed._next_fact, governed._next_entity),
    }


def test_every_day_of_every_scenario_read_as_its_changes_is_the_layer_read_whole(tmp_path: Path):
    """Tessaly's four scenarios, each day's graphs written as the graph asset writes them, read one after
    another as the answers step reads them: the same layer as read whole, answering every question alike, and
    the later days cost only their changes."""
    world = load_world(DEFAULT_WORLD)
    extractor, reader = RegexExtractor(world.ontology), DeterministicReader(world.ontology)
    conn = connect(str(tmp_path / "w.duckdb"))
    ensure_schema(conn)
    last = len(world.checkpoints) - 1
    wheres = []
    for scenario in world.scenario_names:
        layer = KnowledgeLayer(Store(), GovernedStore(world))
        steps = replay_steps(world, scenario, layer, (world.pages_at(scenario, s) for s in range(last + 1)),
                             extractor, [world.renames_at(scenario, s) for s in range(last + 1)])
        for step, layer, _ in steps:
            where = Slice(world.id, world.version, scenario, world.checkpoints[step].key)
            write_layer(conn, where, step, layer)
            wheres.append((step, where))
    # In key order, as the answers step asks them: a day's scenarios side by side.
    wheres.sort(key=lambda step_where: (step_where[1].day, step_where[1].scenario))
    layers = LayerReader(conn, world)
    changed_rows = whole_rows = 0
    day_before: dict[str, Slice] = {}
    read_before: dict[str, KnowledgeLayer] = {}
    read_last: KnowledgeLayer | None = None
    for step, where in wheres:
        layer = layers.read(where)
        # Read as changes, the unchanged pages are the objects of the layer it was read from: the scenario's
        # day before, or (its first day) the layer read just before it, another scenario's first day.
        earlier = read_before.get(where.scenario, read_last)
        if earlier is not None:
            assert any(page is earlier.store.pages.get(page_id) for page_id, page in layer.store.pages.items()), where
        read_before[where.scenario] = read_last = layer
        whole = stored_layer(conn, world, where)
        assert _state(layer) == _state(whole), where
        assert (evaluate(layer, world, where.scenario, step, reader, ALL_DESIGNS, extractor=extractor)
                == evaluate(whole, world, where.scenario, step, reader, ALL_DESIGNS, extractor=extractor))
        before = day_before.get(where.scenario)
        day_before[where.scenario] = where
        if before is not None:
            changes = read_changes(conn, where, before)
            assert changes is not None
            changed_rows += sum(len(c.new) + len(c.gone) for c in
                                (changes.pages, changes.facts, changes.extraction_log, changes.governed_facts))
            whole_rows += len(whole.store.pages) + len(whole.store.facts) + len(whole.store.extractions) + len(
                whole.governed.facts if whole.governed else ())
    assert 0 < changed_rows < whole_rows / 2  # the days after the first cost their changes, not the day


def _day(world, pages: dict[str, str], at: dt.datetime) -> KnowledgeLayer:
    """A layer holding these pages (id -> body), each read into one fact about itself."""
    layer = KnowledgeLayer(Store(), GovernedStore(world))
    for page_id, body in pages.items():
        layer.store.upsert_page(page_id, page_id.title(), body, at)
    for page in layer.store.sorted_pages():
        layer.apply_readings([(page, [Triple(page.id, "owned_by", page.body)], "")], at, "test", set())
    return layer


def test_pages_added_before_others_removed_changed_and_not_ascii_keep_the_order_a_whole_read_has(tmp_path: Path):
    """A new page id that sorts before the others, one removed, one changed, ids beyond ASCII: DuckDB's order
    and the order the changes are put back in are one."""
    world = load_world(DEFAULT_WORLD)
    conn = connect(str(tmp_path / "w.duckdb"))
    ensure_schema(conn)
    first, second = Slice(world.id, world.version, "Fresh", "2026-09-01"), Slice(world.id, world.version, "Fresh",
                                                                                  "2026-09-08")
    write_layer(conn, first, 0, _day(world, {"b": "Ana", "zeta": "Bo", "für-alle": "Cy"}, dt.datetime(2026, 9, 1)))
    write_layer(conn, second, 1, _day(world, {"a": "Di", "Äpfel": "Ed", "b": "Flo", "für-alle": "Cy"},
                                      dt.datetime(2026, 9, 8)))
    layers = LayerReader(conn, world)
    layers.read(first)
    layer = layers.read(second)
    assert list(layer.store.pages) == ["a", "b", "für-alle", "Äpfel"]  # code point order, as DuckDB sorts
    assert _state(layer) == _state(stored_layer(conn, world, second))


def test_changes_put_a_changed_row_in_its_place_and_a_new_key_in_order():
    before = {1: "one", 3: "three", 5: "five"}
    changes = Changes(new=[(3, "THREE"), (4, "four")], gone=[(3, "three"), (5, "five")])
    assert changes.applied(before, lambda key, text: text) == ["one", "THREE", "four"]
    assert before == {1: "one", 3: "three", 5: "five"}  # the earlier layer is left as it was


def test_a_day_not_stored_is_read_whole_and_named_as_a_whole_read_names_it(tmp_path: Path):
    world = load_world(DEFAULT_WORLD)
    conn = connect(str(tmp_path / "w.duckdb"))
    ensure_schema(conn)
    first = Slice(world.id, world.version, "Fresh", "2026-09-01")
    write_layer(conn, first, 0, _day(world, {"b": "Ana"}, dt.datetime(2026, 9, 1)))
    layers = LayerReader(conn, world)
    layers.read(first)
    with pytest.raises(MissingUpstream, match="no pages for Fresh on 2026-09-08"):
        layers.read(Slice(world.id, world.version, "Fresh", "2026-09-08"))


@pytest.mark.parametrize("which", ["tessaly", "a wiki with a page moved, one deleted and one added"])
def test_a_page_history_read_as_changes_is_the_history_the_core_renders(which: str, tmp_path: Path):
    """What the graph step replays from (each scenario's pages and renames, step by step) read back as each
    step's changes from the one before: the core's own page history, renames included, and a page that did
    not change is the same object on both days."""
    world = load_world(DEFAULT_WORLD if which == "tessaly" else make_wiki(tmp_path) / "world.yaml")
    conn = connect(str(tmp_path / "w.duckdb"))
    ensure_schema(conn)
    last = len(world.checkpoints) - 1
    columns = ("page_id", "title", "body", "version", "updated_at", "changed", "audience", "renamed_from")
    renamed = 0
    for scenario in world.scenario_names:
        with transaction(conn):
            batch = SliceBatch(conn, ["pages"])
            for step, (pages, changed) in enumerate(page_history(world, scenario, last)):
                moved_from = {new: old for old, new in world.renames_at(scenario, step).items()}
                renamed += len(moved_from)
                rows = [(p.id, p.title, p.body, p.version, p.updated_at, p.id in changed, p.audience,
                         moved_from.get(p.id)) for p in pages]
                batch.add(Slice(world.id, world.version, scenario, world.checkpoints[step].key),
                          {"pages": (columns, rows)}, constants={"step": step})
            batch.flush()
    for scenario in world.scenario_names:
        expected = page_history(world, scenario, last)
        for first in (0, 1):
            history = stored_page_history(conn, world.id, world.version, scenario, last, first)
            assert list(history) == list(range(first, last + 1))
            for step, (pages, renames) in history.items():
                assert pages == expected[step][0], (scenario, step)
                assert renames == world.renames_at(scenario, step)
            kept = [p for p in history[last][0] if p in history[last - 1][0]]
            assert kept and all(any(p is q for q in history[last - 1][0]) for p in kept)
    assert renamed or which == "tessaly"
    conn.execute("DELETE FROM pages_slices WHERE scenario = ? AND step = 1", [world.scenario_names[0]])
    with pytest.raises(MissingUpstream, match=r"for steps \[1\] are missing"):
        stored_page_history(conn, world.id, world.version, world.scenario_names[0], last)
