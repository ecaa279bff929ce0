"""The model path's parsing and rules, with a replay client (no server): prompts written from the ontology,
bad replies recorded as outcomes, empty evidence answered without a call, flags kept apart, the cache.
(Tests of retired prompt versions live with them at the tag `legacy-prompts`.)"""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest

from driftlab_dagster.core.call_cache import CachedClient
from driftlab_dagster.core.clients import ModelCallFailed
from driftlab_dagster.core.model_extractor import ModelExtractor
from driftlab_dagster.core.model_reader import ModelReader
from driftlab_dagster.core.ontology import Triple
from driftlab_dagster.core.prompts import relation_prompts, relation_schema
from driftlab_dagster.core.readers import Evidence
from driftlab_dagster.core.replay import ReplayClient
from driftlab_dagster.core.scoring import score_triples
from driftlab_dagster.core.store import StoredPage

T = dt.datetime(2026, 9, 1, 9)
PAGE = StoredPage("d02", "Pricing",
                  "The Pro plan costs €49 per user per month. Annual billing gets two months free.", 1, T)


def _cached(reply) -> CachedClient:  # type: ignore[no-untyped-def]
    return CachedClient(ReplayClient(reply if callable(reply) else (lambda s, u: reply)))


def test_a_bad_extraction_reply_yields_no_facts_keeps_the_reason_and_is_not_cached(world):
    client = _cached("not json at all")
    extraction = ModelExtractor(world.ontology, client).extract(PAGE)
    assert extraction.triples == () and extraction.issue == "model call failed: unusable reply: reply is not JSON"
    assert not extraction.estimated
    assert client.entries == {} and client.spend.invalid == 2  # one call a sentence, neither kept


def test_a_failed_call_is_an_outcome_not_a_crash(world):
    def timeout(system: str, user: str) -> str:
        raise ModelCallFailed("timed out after 1s")

    extraction = ModelExtractor(world.ontology, _cached(timeout)).extract(PAGE)
    assert extraction.triples == () and extraction.issue == "model call failed: timed out after 1s"
    assert len(_cached(timeout).inner.calls) == 0
    evidence = [Evidence("The Pro plan costs €49 per user per month.", "d02@v1", T, False)]
    hop = ModelReader(world.ontology, _cached(timeout)).read("Pro", "price", evidence, versioned=False)
    assert hop.value is None and hop.why == "model call failed: timed out after 1s"


def test_a_relations_reply_may_say_only_whether_it_is_stated_and_its_parts(world):
    schema = relation_schema(world.ontology["price"])
    assert schema["required"] == ["states", "subject", "object"] and schema["additionalProperties"] is False
    fixed = relation_schema(world.ontology["refund_days"])  # the refund policy is the one subject it has
    assert fixed["required"] == ["states", "object"] and "subject" not in fixed["properties"]


def test_empty_evidence_is_i_dont_know_without_calling_the_model(world):
    client = _cached("9")
    hop = ModelReader(world.ontology, client).read("Starter", "price", [], versioned=True)
    assert hop.value is None and hop.why == "no evidence"
    assert client.inner.calls == []


@pytest.mark.parametrize("reply, value, flagged, phrase", [
    ("59", "59", False, False),
    ("€59.", "€59", False, False),
    ('"Helix team"\nThe evidence says so.', "Helix team", False, False),
    ("59 (possibly outdated)", "59", True, False),
    ("59 (possibly stale).", "59", True, False),
    ("59, but this may be outdated", "59, but this may be outdated", False, True),
    ("unknown", None, False, False),
    ('{"answer": "59", "possibly_stale": true}', "59", True, False),  # the shape it was trained on
    ("", None, False, False),
    ("x" * 500, None, False, False),
])
def test_the_plain_reader_reads_the_first_line_and_the_stale_marker(world, reply, value, flagged, phrase):
    evidence = [Evidence("The Pro plan costs €59 per user per month.", "d02@v2", T, False)]
    client = _cached(reply)
    hop = ModelReader(world.ontology, client).read("Pro", "price", evidence, versioned=True)
    assert (hop.value, hop.flagged, hop.phrase) == (value, flagged, phrase)
    assert hop.hedged == (flagged or phrase)
    assert (client.entries != {}) == (reply != "" and len(reply) < 400)  # unusable replies are never cached


def test_the_plain_reader_shows_only_the_statements_on_the_hop_and_asks_without_a_grammar(world):
    client = _cached("49")
    pricing = Evidence("Pricing\nThe Starter plan costs €19 per user per month. The Pro plan costs €49 per user per "
                       "month. Tessaly Dock is included in the Pro plan. Annual billing gets two months free.",
                       "d02@v1", T, False)
    unrelated = Evidence("Office\nThe office has a rooftop garden. Lunch is served at noon.", "d30@v1", T, False)
    ModelReader(world.ontology, client).read("Pro plan", "price", [pricing, unrelated], versioned=False)
    (system, user), = client.inner.calls
    assert "JSON" not in system
    shown = user.splitlines()[1:3]
    assert shown[0].startswith("- Pricing The Pro plan costs €49 per user per month.") and shown[1] == "- Office"
    assert "Starter" not in user and "Annual billing" not in user
    # Another edit of the same page elsewhere leaves the prompt, and so its cached reply, unchanged.
    edited = Evidence(pricing.text.replace("€19", "€24"), "d02@v2", T, False)
    ModelReader(world.ontology, client).read("Pro plan", "price", [edited, unrelated], versioned=False)
    assert client.spend.hits == 1


def test_the_versioned_prompt_shows_dates_and_the_changed_page_flag(world):
    client = _cached("59 (possibly outdated)")
    evidence = [Evidence("The Pro plan costs €59 per user per month.", "graph:d02@v2", T, True, T),
                Evidence("Pricing\nThe Pro plan costs €49 per user per month.", "d19@v1", T, False, None, True)]
    ModelReader(world.ontology, client).read("Pro", "price", evidence, versioned=True)
    (system, user), = client.inner.calls
    assert "newest" in system
    assert "[graph graph:d02@v2, dated 2026-09-01, extracted 2026-09-01]" in user
    assert "changed since the graph last read it" in user
    assert user.endswith("What does the Pro plan cost per user per month in EUR? Answer with the number only.")


def test_each_sentence_is_asked_once_and_a_repeat_is_served_from_the_cache(world):
    client = _cached('{"states": true, "subject": "Pro plan", "object": "€49 per user per month"}')
    extractor = ModelExtractor(world.ontology, client)
    first, second = extractor.extract(PAGE), extractor.extract(PAGE)
    # The first sentence states it (trimmed to the shapes); the second does not, so its copy is dropped.
    assert first.triples == second.triples == (Triple("Pro", "price", "49"),)
    assert second.cached and not first.cached
    # The sentence is asked about each relation it has a cue and a value for (price and included_in); the
    # second holds no number, so it is asked about nothing.
    assert [user for _, user in client.inner.calls] == ["The Pro plan costs €49 per user per month."] * 2
    assert client.spend.calls == 4 and client.spend.hits == 2
    assert client.spend.spent_input_tokens == first.input_tokens
    assert client.spend.live_input_tokens == 2 * first.input_tokens
    assert len(client.new_entries) == 2


def test_the_extractor_id_names_model_and_prompt_version(world):
    extractor = ModelExtractor(world.ontology, _cached("{}"), "relation-v1")
    assert re.fullmatch(r"model:replay:relation-v1:[0-9a-f]{12}", extractor.id)


def test_triples_are_scored_as_a_multiset_ignoring_case():
    truth = [Triple("Pro", "price", "49"), Triple("Pro", "price", "49"), Triple("Helix", "led_by", "Selin Demir")]
    got = [Triple("pro", "price", "49"), Triple("Pro plan", "price", "49"), Triple("Helix", "led_by", "selin demir")]
    score = score_triples(got, truth)
    assert (score.true_positives, score.precision, score.recall) == (2, 2 / 3, 2 / 3)


@pytest.mark.parametrize("path", ["tessaly_freight", "quillfeather_health"])
def test_relation_examples_use_names_the_world_never_mentions_and_parse_back(path):
    from driftlab_dagster.core.world.loader import load_world
    from driftlab_dagster.project import DATA_DIR

    world = load_world(DATA_DIR / "worlds" / f"{path}.yaml")
    for relation, prompt in relation_prompts(world.ontology, world.canonical_json).items():
        examples = [(sentence, json.loads(reply))
                    for sentence, reply in re.findall(r"Sentence: (.*)\nJSON: (.*)", prompt)]
        stated = [(sentence, reply) for sentence, reply in examples if reply["states"]]
        assert len(stated) == 2  # two worked examples per relation, then sentences that state it not
        fixed = world.ontology[relation].fixed_subject
        for sentence, reply in stated:
            subject = reply.get("subject", fixed)
            assert [tuple(t) for t in world.ontology.parse(sentence)] == [(subject, relation, reply["object"])]
            for value in (subject, reply["object"]):
                if value != fixed:
                    assert value.casefold() not in world.canonical_json.casefold(), value
        for sentence, reply in examples:
            if not reply["states"]:
                assert relation not in [t.predicate for t in world.ontology.parse(sentence)]


def test_the_reader_shows_codes_doubts_and_hedges_on_them(world):
    client = _cached("49")
    evidence = [Evidence("The Pro plan costs €49 per user per month.", "graph:d02@v1", T, True, T)]
    hop = ModelReader(world.ontology, client).read("Pro", "price", evidence, versioned=True,
                                                   signals=["sources disagree"])
    (_, user), = client.inner.calls
    assert "Checks by code: sources disagree." in user
    assert (hop.value, hop.hedged, hop.flagged) == ("49", True, False) and "code: sources disagree" in hop.why
    calm = ModelReader(world.ontology, _cached("49")).read("Pro", "price", evidence, versioned=True)
    assert (calm.value, calm.hedged) == ("49", False)


def test_relation_v1_asks_only_the_relations_a_sentence_speaks_of_and_keeps_what_it_states(world):
    asked = []

    def reply(system: str, user: str) -> str:
        relation = re.search(r"Relation (\w+):", system).group(1)
        asked.append((relation, user))
        if relation == "price":  # the model got the roles right, with a word too many
            return '{"states": true, "subject": "Pro plan", "object": "49 per user per month"}'
        return '{"states": true, "subject": "Pro", "object": "two"}'  # wrong, and not what the sentence says

    extraction = ModelExtractor(world.ontology, _cached(reply)).extract(PAGE)
    assert extraction.triples == (Triple("Pro", "price", "49"),)
    # The first sentence is asked about the relations it has a cue and a value for, never about uptime or
    # owners; the second ("two months") holds no value of any relation's kind and is asked about nothing.
    assert asked == [("price", "The Pro plan costs €49 per user per month."),
                     ("included_in", "The Pro plan costs €49 per user per month.")]


def test_a_pair_the_model_turned_around_is_put_back_in_the_wordings_order(world):
    sentence = "Tessaly Dock is included in the Pro plan."
    page = StoredPage("d24", "Partner guide", sentence, 1, T)
    turned = '{"states": true, "subject": "Pro", "object": "Tessaly Dock"}'
    unstated = '{"states": false, "subject": "", "object": ""}'

    def reply(system: str, user: str) -> str:
        return turned if "Relation included_in:" in system else unstated

    assert ModelExtractor(world.ontology, _cached(reply)).extract(page).triples == (
        Triple("Tessaly Dock", "included_in", "Pro"),)


def test_reading_ahead_groups_a_steps_calls_by_relation_and_changes_nothing_else(world):
    """A step's calls go relation by relation (so a server reuses the shared prompt), while the triples,
    issues and spend are what asking page by page gives."""
    pages = [StoredPage("a", "A", "The Pro plan costs €49 per user per month. Helix is owned by the Core team.", 1, T),
             StoredPage("b", "B", "The Basic plan costs €12 per user per month. Atlas is owned by the Data team.",
                        1, T),
             StoredPage("c", "C", "The Pro plan costs €49 per user per month.", 1, T)]  # a repeat: served from cache

    def reply(system: str, user: str) -> str:
        relation = re.search(r"Relation (\w+):", system).group(1)
        if "Atlas" in user:
            return "not json"  # unusable: an issue on page b, whichever order it was asked in
        owned = re.match(r"(\w+) is owned by the (\w+ team)", user)
        priced = re.match(r"The (\w+) plan costs €(\d+)", user)
        found = owned if relation == "owned_by" else priced
        return json.dumps({"states": found is not None, "subject": found.group(1) if found else "",
                           "object": found.group(2) if found else ""})

    def run(ahead: bool):  # type: ignore[no-untyped-def]
        client = _cached(reply)
        extractor = ModelExtractor(world.ontology, client)
        if ahead:
            extractor.read_ahead(pages)
        results = [extractor.extract(p) for p in pages]
        return client, [(r.triples, r.issue, r.input_tokens, r.cached) for r in results]

    plain_client, plain = run(ahead=False)
    ahead_client, ahead = run(ahead=True)
    assert ahead == plain
    assert plain[0][0] and plain[1][1] and plain[2][3]  # facts found, b's unusable reply noted, c from cache
    assert ahead_client.spend == plain_client.spend
    relations = [re.search(r"Relation (\w+):", s).group(1) for s, _ in ahead_client.inner.calls]
    assert relations == sorted(relations, key=relations.index) and len(set(relations)) >= 2  # grouped
    page_order = [re.search(r"Relation (\w+):", s).group(1) for s, _ in plain_client.inner.calls]
    assert page_order != relations  # page by page, the relations alternate
