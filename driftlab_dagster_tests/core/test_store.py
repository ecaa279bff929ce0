"""The versioned store: page versions, the extraction log's LEFT JOIN, renames and row ids as in the post."""

from __future__ import annotations

import datetime as dt
from operator import attrgetter
from typing import NamedTuple

from driftlab_dagster.core.ontology import Triple
from driftlab_dagster.core.store import Store, carried_index

T0 = dt.datetime(2026, 9, 1, 9)
T1 = dt.datetime(2026, 9, 8, 9)


def test_a_page_version_bumps_only_when_its_text_changes():
    store = Store()
    assert store.upsert_page("d1", "t", "a", T0)
    assert not store.upsert_page("d1", "t", "a", T1)
    assert store.pages["d1"].version == 1 and store.pages["d1"].updated_at == T0
    assert store.upsert_page("d1", "t", "b", T1)
    assert store.pages["d1"].version == 2 and store.pages["d1"].updated_at == T1


def test_pages_changed_since_extraction_is_the_left_join_on_the_extraction_log():
    store = Store()
    for pid in ("d1", "d2", "d3"):
        store.upsert_page(pid, pid, "text", T0)
    assert store.pages_changed_since_extraction() == ["d1", "d2", "d3"]  # never read
    for p in store.sorted_pages(["d1", "d2"]):
        store.apply_page(p, [], T0)
    assert store.pages_changed_since_extraction() == ["d3"]
    store.upsert_page("d1", "d1", "new text", T1)
    assert store.pages_changed_since_extraction() == ["d1", "d3"]


def test_replacing_a_pages_facts_keeps_other_pages_facts_and_records_provenance():
    store = Store()
    store.upsert_page("d1", "t", "x", T0)
    store.upsert_page("d2", "t", "y", T0)
    store.apply_page(store.pages["d1"], [Triple("Pro", "price", "49")], T0)
    store.apply_page(store.pages["d2"], [Triple("Pro", "price", "49")], T0)
    store.upsert_page("d1", "t", "x2", T1)
    store.apply_page(store.pages["d1"], [Triple("pro", "price", "59")], T1)
    facts = store.facts_about(store.resolve("PRO"), "price")
    assert [(f.object, f.source_doc, f.source_version, f.valid_from) for f in facts] == [
        ("49", "d2", 1, T0), ("59", "d1", 2, T1)]


def test_a_rename_keeps_the_old_name_as_an_alias_and_merges_a_duplicate_node():
    store = Store()
    store.upsert_page("d1", "t", "x", T0)
    store.apply_page(store.pages["d1"], [Triple("Tessaly Track", "owned_by", "Helix")], T0)
    store.upsert_page("d2", "t", "y", T0)
    store.apply_page(store.pages["d2"], [Triple("Tessaly Beacon", "included_in", "Starter")], T0)
    track = store.resolve("Tessaly Track")
    store.apply_rename("Tessaly Beacon", "Tessaly Track")
    assert store.resolve("Tessaly Beacon") == store.resolve("tessaly track") == track
    assert store.entity_name(track) == "Tessaly Beacon"
    assert store.aliases_of(track) == ["Tessaly Track"]
    assert {f.predicate for f in store.facts.values() if f.entity_id == track} == {"owned_by", "included_in"}
    assert len(store.entities) == 1


def test_a_system_of_record_patch_supersedes_every_extracted_value_of_the_slot():
    store = Store()
    store.upsert_page("d1", "t", "x", T0)
    store.apply_page(store.pages["d1"], [Triple("Pro", "price", "49"), Triple("Pro", "uptime", "99.9")], T0)
    store.apply_record("Pro", "price", "59", "record:billing", T1)
    pro = store.resolve("Pro")
    assert [(f.object, f.source_doc) for f in store.facts_about(pro, "price")] == [("59", "record:billing")]
    assert len(store.facts_about(pro, "uptime")) == 1


def test_row_ids_restart_after_the_graph_is_cleared_like_sqlite_rowids():
    store = Store()
    store.upsert_page("d1", "t", "x", T0)
    store.apply_page(store.pages["d1"], [Triple("A", "p", "1"), Triple("B", "p", "2")], T0)
    store.begin_rebuild()
    store.apply_page(store.pages["d1"], [Triple("B", "p", "2")], T0)
    assert list(store.facts) == [1] and list(store.entities) == [1]


def test_a_stores_rows_load_back_into_an_equal_store():
    """What the warehouse writes (rows) and reads back (from_rows; a fact's entity name is not read, it
    comes from the entities) make the same store."""
    store = Store()
    store.upsert_page("d1", "t", "x", T0)
    store.apply_page(store.pages["d1"], [Triple("Tessaly Track", "owned_by", "Helix")], T0)
    store.apply_rename("Tessaly Beacon", "Tessaly Track")
    rows = store.rows()
    entity = Store.ROW_COLUMNS["facts"].index("entity")
    again = Store.from_rows(rows["pages"], rows["entities"], rows["aliases"],
                            [r[:entity] + r[entity + 1:] for r in rows["facts"]], rows["extraction_log"])
    assert again.snapshot() == store.snapshot()
    assert again.aliases and again.facts and again.extractions
    assert store.rows(("facts", "aliases")) == {"facts": rows["facts"], "aliases": rows["aliases"]}  # no pages built


class _Filed(NamedTuple):
    """A fact as an index sees it: the key it is filed under, and its id."""

    key: str
    id: int


def test_a_carried_index_makes_only_the_entries_it_touches_and_leaves_the_old_one_as_it_was():
    shared, emptied, changed = {1, 2}, {3}, {4, 6}
    old = {"kept": shared, "emptied": emptied, "changed": changed}
    new = carried_index(old, [_Filed("emptied", 3), _Filed("changed", 6)],
                        [_Filed("changed", 5), _Filed("fresh", 9), _Filed("fresh", 7)], attrgetter("key"), list)
    assert new == {"kept": shared, "changed": [4, 5], "fresh": [7, 9]}  # ids in ascending order
    assert new["kept"] is shared  # an entry left alone is the old index's own
    assert old == {"kept": {1, 2}, "emptied": {3}, "changed": {4, 6}}  # nothing of the old index changed


def test_a_store_made_from_changes_is_the_store_built_from_every_fact():
    at = dt.datetime(2026, 9, 1)
    before = Store()
    before.upsert_page("pricing", "Pricing", "Pro costs $10.", at)
    before.upsert_page("team", "Team", "Ana owns Pro.", at)
    before.apply_page(before.pages["pricing"], [Triple("Pro", "price", "$10")], at)
    before.apply_page(before.pages["team"], [Triple("Pro", "owned_by", "Ana")], at)
    after = before.copy()
    after.apply_page(before.pages["pricing"], [Triple("Pro", "price", "$12"), Triple("Team", "price", "$5")], at)
    removed = [f for i, f in before.facts.items() if after.facts.get(i) is not f]
    added = [f for i, f in after.facts.items() if before.facts.get(i) is not f]
    carried = Store.from_changes(before, after.pages.values(), after.entities.items(),
                                 after.aliases.values(), dict(after.facts), removed, added, after.extractions.values())
    rows = after.rows()
    assert carried.rows() == rows
    assert {k: sorted(v) for k, v in carried._facts_by_slot.items()} == {
        k: sorted(v) for k, v in after._facts_by_slot.items()}
    assert carried._facts_by_source == after._facts_by_source
    assert carried._max_fact_id == after._max_fact_id
