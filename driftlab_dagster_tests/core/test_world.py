"""The world file: validation with one-line errors, and page texts that depend on the world's state."""

from __future__ import annotations

from pathlib import Path

import pytest

from driftlab_dagster.core.world import WorldFileError, load_world, parse_world
from driftlab_dagster.project import DEFAULT_WORLD


def _page(world, scenario: str, step: int, page_id: str) -> str:
    return next(p.body for p in world.pages_at(scenario, step) if p.id == page_id)


def test_the_bundled_world_has_the_posts_shape(world):
    assert len(world.spec.pages) == 40
    assert len(world.spec.events) == 4
    assert len(world.spec.questions) == 20
    assert world.scenario_names == ["Fresh", "StalePages", "StaleGraph", "PartialPages"]
    assert world.day_keys == ["2026-09-01", "2026-09-08", "2026-09-15", "2026-09-22", "2026-09-29"]
    assert sum(len(q.hops) == 2 for q in world.spec.questions) == 2


def test_the_tracking_page_gains_the_formerly_sentence_after_the_rename(world):
    assert _page(world, "Fresh", 0, "d06").startswith("Tessaly Track is our real-time shipment tracking app.")
    assert _page(world, "Fresh", 1, "d06").startswith(
        "Tessaly Beacon was formerly called Tessaly Track. Tessaly Beacon is our real-time shipment tracking app.")


def test_the_payments_owner_line_moves_from_the_atlas_page_to_the_orion_page(world):
    assert _page(world, "Fresh", 3, "d09") == ("The Atlas team is led by Derya Kaya. Routing engine is owned by the "
                                               "Atlas team. Payments service is owned by the Atlas team. Atlas sits "
                                               "on the third floor in Izmir.")
    assert "Payments service" not in _page(world, "Fresh", 4, "d09")
    assert _page(world, "Fresh", 4, "d10").endswith("invoicing. Payments service is owned by the Orion team.")
    assert _page(world, "Fresh", 4, "d20") == ("If card capture errors spike, page the owning team. Payments service "
                                               "is owned by the Orion team. The Orion team is led by Emre Aslan. "
                                               "Check the provider status page first.")


def test_the_meeting_notes_carry_the_unapproved_draft_price_only_from_day_28(world):
    assert _page(world, "Fresh", 3, "d27").endswith("No decisions on pricing.")
    assert _page(world, "Fresh", 4, "d27").endswith(
        "nothing approved yet. The Starter plan costs €24 per user per month.")
    # The meeting notes are canonical for the owner change, so even PartialPages shows the trap.
    assert "€24" in _page(world, "PartialPages", 4, "d27")
    assert "€24" not in _page(world, "StalePages", 4, "d27")


def test_partial_pages_update_only_the_canonical_page(world):
    assert "€59" in _page(world, "PartialPages", 3, "d02")
    assert "€49" in _page(world, "PartialPages", 3, "d19")  # the support macro lags behind
    assert "€59" in _page(world, "Fresh", 3, "d19")


def test_questions_use_the_true_state_not_the_pages(world):
    q = {q.id: q for q in world.questions_at(4)}
    assert q["R1"].text == "What is Tessaly Beacon?"
    assert q["O2"].expected == "Emre Aslan"
    assert {q.id: q for q in world.questions_at(3)}["O2"].expected == "Derya Kaya"


def _broken(text_from: str, text_to: str) -> str:
    source = DEFAULT_WORLD.read_text(encoding="utf-8")
    assert text_from in source
    return source.replace(text_from, text_to, 1)


@pytest.mark.parametrize("edit, expected_fragments", [
    (("hops: [price], expected: '19'", "hops: [cost], expected: '19'"),
     ["questions[0]", "unknown predicate 'cost'"]),
    (("  - {id: 2, day: 14,", "  - {id: 2, day: fourteen,"), ["events[1].day", "line 10", "integer"]),
    (("    subject: word\n    object: integer\n    meaning: subject is a plan name such",
      "    subject: word\n    meaning: subject is a plan name such"), ["predicates.price.object", "Field required"]),
    (("fact: [price, Pro, '{pro_price}']", "fact: [price, Pro, '{pro_prize}']"), ["pro_prize", "not a state variable"]),
    (("company: Tessaly Freight", "company: [Tessaly Freight"), ["not valid YAML", "line"]),
])
def test_a_malformed_world_file_fails_with_one_line_naming_the_field(tmp_path: Path, edit, expected_fragments):
    path = tmp_path / "world.yaml"
    path.write_text(_broken(*edit), encoding="utf-8")
    with pytest.raises(WorldFileError) as info:
        load_world(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(str(path))
    for fragment in expected_fragments:
        if fragment.startswith("line "):
            assert "line " in message
        else:
            assert fragment in message, message


def test_an_invalid_day_error_points_at_the_line_of_that_event(tmp_path: Path):
    text = _broken("  - {id: 2, day: 14,", "  - {id: 2, day: fourteen,")
    line = next(i for i, text_line in enumerate(text.splitlines(), 1) if "day: fourteen" in text_line)
    path = tmp_path / "world.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(WorldFileError, match=f"events\\[1\\].day \\(line {line}\\)"):
        load_world(path)


def test_a_missing_world_file_says_so(tmp_path: Path):
    with pytest.raises(WorldFileError, match="world file not found"):
        load_world(tmp_path / "nope.yaml")


TINY_WORLD = """
company: Tiny Co
start: 2027-01-04T09:00:00Z
shapes: {word: '[A-Z]\\w+', integer: '\\d+'}
predicates:
  price:
    sentence: 'The {subject} plan costs ${object} a month.'
    subject: word
    object: integer
    meaning: plan price in USD
    question: What does the {subject} plan cost?
    query: plan costs month
state: {basic_price: 5}
events:
  - {id: 1, day: 3, kind: price, set: {basic_price: 7}, record: {source: 'record:billing', fact: [price, Basic, '{basic_price}']}}
scenarios:
  Fresh: {pages: all, graph: patch_changed_pages}
  StalePages: {pages: none, graph: patch_from_record}
  StaleGraph: {pages: all, graph: none}
pages:
  - {id: p1, title: Prices, canonical_for: [price], body: [{fact: [price, Basic, '{basic_price}']}]}
  - {id: p2, title: Office, body: [We sit by the sea.]}
questions:
  - {id: Q1, event: 1, text: 'How much is the Basic plan?', entity: Basic, hops: [price], expected: '{basic_price}'}
"""


def test_a_user_can_write_their_own_company_in_the_same_format():
    from driftlab_dagster.core.study import run_study

    world = parse_world(TINY_WORLD, "tiny.yaml")
    assert world.day_keys == ["2027-01-04", "2027-01-07"]
    study = run_study(world)
    by = {(r["scenario"], r["design"], r["step"]): r for r in study.results}
    assert by[("Fresh", "Rag", 1)]["answer"] == "7"
    assert by[("StalePages", "Rag", 1)]["answer"] == "5"  # the page never learned
    assert by[("StalePages", "Graph", 1)]["answer"] == "7"  # the billing system did
    assert by[("StaleGraph", "Graph", 1)]["answer"] == "5"


def test_the_stored_form_of_a_world_keeps_its_declared_order(world):
    from driftlab_dagster.core.world import World

    again = World.from_json(world.canonical_json)
    assert again.scenario_names == world.scenario_names
    assert again.ontology.names == world.ontology.names
    assert again.sha256 == world.sha256
