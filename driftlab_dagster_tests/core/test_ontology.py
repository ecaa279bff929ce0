"""The ontology is the single source of every fact sentence: render and parse agree, in both directions."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("predicate, subject, obj", [
    ("price", "Pro", "59"),
    ("uptime", "Enterprise", "99.95"),
    ("refund_days", "Refund policy", "14"),
    ("retention_days", "Retention policy", "365"),
    ("owned_by", "Payments service", "Orion"),
    ("led_by", "Helix", "Selin Demir"),
    ("included_in", "Tessaly Beacon", "Starter"),
    ("formerly", "Tessaly Beacon", "Tessaly Track"),
    ("does", "Tessaly Dock", "warehouse slotting tool"),
])
def test_every_rendered_fact_parses_back_to_the_same_triple(world, predicate, subject, obj):
    sentence = world.ontology.render(predicate, subject, obj)
    assert world.ontology.parse(sentence) == ((subject, predicate, obj),)


@pytest.mark.parametrize("text", [
    "Annual billing gets two months free.",
    "Write a postmortem within five working days.",
    "The Payments service, the Notifications service and the Routing engine each own their database.",
    "Orion was formed in 2026 to focus on billing and invoicing.",
])
def test_prose_that_only_resembles_a_fact_yields_nothing(world, text):
    assert world.ontology.parse(text) == ()


def test_a_title_on_its_own_line_is_its_own_sentence(world):
    text = "Pricing\nThe Pro plan costs €49 per user per month. Tessaly Dock is included in the Pro plan."
    assert [t.predicate for t in world.ontology.parse(text)] == ["price", "included_in"]


def test_the_first_matching_predicate_claims_a_sentence(world):
    # "formerly" is declared before "does", so the rename sentence is a rename, not a description.
    (triple,) = world.ontology.parse("Tessaly Beacon was formerly called Tessaly Track.")
    assert triple.predicate == "formerly"


def test_the_extraction_prompt_lists_every_predicate_from_the_ontology(world):
    from driftlab_dagster.core.extraction import extraction_prompt

    prompt = extraction_prompt(world.ontology)
    for name in world.ontology.names:
        assert f"- {name}: " in prompt
