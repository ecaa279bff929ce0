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


# ----- the work per sentence is bounded -----

def test_a_fact_sentence_up_to_the_cap_is_read_and_a_longer_one_is_not(world):
    from driftlab_dagster.core.ontology import MAX_SENTENCE_CHARS

    prefix, suffix = "Tessaly Dock is our ", "."
    fits = prefix + "w" * (MAX_SENTENCE_CHARS - len(prefix) - len(suffix)) + suffix
    assert len(fits) == MAX_SENTENCE_CHARS
    assert [t.predicate for t in world.ontology.parse(fits)] == ["does"]
    assert world.ontology.parse(fits[:-1] + "w.") == ()  # one character over: prose, never matched


@pytest.mark.parametrize("words", [250, 2_000, 20_000])
def test_a_backtracking_pattern_cannot_stall_on_a_long_sentence(words):
    # The world loader refuses this shape; the ontology's cap is the second line of defence. Without it, a
    # sentence of 40 words that almost matches keeps `re` busy for hours.
    from driftlab_dagster.core.ontology import Ontology, Predicate

    slow = Predicate(name="does", sentence="{subject} is our {object}.", subject_pattern="Tessaly \\w+",
                     object_pattern="([A-Za-z]+ ?)+", fixed_subject=None, meaning="", question="", query="")
    sentence = "Tessaly Dock is our " + "very " * words + "tool!"  # no final period: no match, full backtracking
    assert Ontology([slow]).parse(sentence) == ()
    assert Ontology([slow]).parse("Tessaly Dock is our tool.") == (("Tessaly Dock", "does", "tool"),)


def test_the_sentence_pattern_is_the_one_the_world_loader_checks(world):
    from driftlab_dagster.core.ontology import sentence_regex

    price = world.ontology["price"]
    assert price.pattern.pattern == sentence_regex(price.sentence, price.subject_pattern, price.object_pattern)
    assert price.pattern.pattern == ("^The\\ (?P<subject>[A-Z]\\w+)\\ plan\\ costs\\ €(?P<object>\\d+)"
                                     "\\ per\\ user\\ per\\ month\\.$")
