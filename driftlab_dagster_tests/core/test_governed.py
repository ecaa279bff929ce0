"""The fifth design: governed, bi-temporal, authority-ranked facts on canonical entities."""

from __future__ import annotations

import datetime as dt

import pytest

from driftlab_dagster.core.extraction import RegexExtractor
from driftlab_dagster.core.governed import GovernedStore
from driftlab_dagster.core.governed_resolver import GovernedResolver
from driftlab_dagster.core.layer import KnowledgeLayer
from driftlab_dagster.core.ontology import Triple
from driftlab_dagster.core.store import Store, StoredPage
from driftlab_dagster.core.study import initial_load, maintain, pages_at, run_study, sync_pages


@pytest.fixture(scope="module")
def results(world):
    return [r for r in run_study(world).results if r["design"] == "Governed"]


def test_every_answer_and_every_drifted_answer_is_right_in_every_scenario(results, world):
    for scenario in world.scenario_names:
        cell = [r for r in results if r["scenario"] == scenario]
        assert len(cell) == 100
        assert [r for r in cell if r["outcome"] != "correct"] == []


def test_the_day_28_draft_price_loses_to_the_pricing_page_without_a_hedge(results):
    for scenario in ("Fresh", "PartialPages", "StaleGraph"):
        c1 = next(r for r in results if r["scenario"] == scenario and r["step"] == 4 and r["question"] == "C1")
        assert (c1["answer"], c1["hedged"]) == ("19", False)


def test_right_answers_are_hedged_at_most_five_percent_and_wrong_ones_always(results, world):
    for scenario in world.scenario_names:
        cell = [r for r in results if r["scenario"] == scenario]
        right = [r for r in cell if r["outcome"] == "correct"]
        assert sum(r["hedged"] for r in right) <= 0.05 * len(right)
        assert all(r["hedged"] for r in cell if r["outcome"] == "wrong")


def _fresh_history(world) -> GovernedStore:
    layer, extractor = KnowledgeLayer(Store(), GovernedStore(world)), RegexExtractor(world.ontology)
    for step in range(len(world.checkpoints)):
        sync_pages(layer, world.pages_at("Fresh", step), pages_at(world, step))
        if step == 0:
            initial_load(layer, extractor, world)
        else:
            maintain(layer, world, "Fresh", step, extractor)
    assert layer.governed is not None
    return layer.governed


def _day(world, n: int) -> dt.datetime:
    return world.start + dt.timedelta(days=n, hours=1)


def test_the_graph_can_say_what_it_believed_and_what_was_true_on_a_past_day(world):
    governed = _fresh_history(world)
    believed = lambda name, predicate, day: {f.object for f in governed.believed_on(name, predicate, _day(world, day))}  # noqa: E731
    assert believed("Pro", "price", 14) == {"49"}
    assert believed("Pro", "price", 28) == {"59"}
    assert believed("Payments service", "owned_by", 21) == {"Atlas"}
    assert believed("Payments service", "owned_by", 28) == {"Orion"}
    true = lambda name, predicate, day: {f.object for f in governed.true_on(name, predicate, _day(world, day))}  # noqa: E731
    assert true("Pro", "price", 14) == {"49"} and true("Pro", "price", 22) == {"59"}
    # Nothing was deleted: the old price is still there, retracted, with the day it stopped being true
    # (earlier rows of the same value were retracted when a newer page version confirmed them: still true).
    old = [f for f in governed.facts.values() if f.predicate == "price" and f.object == "49" and f.source == "d02"]
    assert old and all(f.retracted_at is not None for f in old)
    assert [f.valid_to for f in old if f.valid_to is not None] == [world.checkpoints[3].at]


def test_a_rename_is_a_time_scoped_name(world):
    governed = _fresh_history(world)
    entity = governed.resolve("Tessaly Beacon")
    assert entity == governed.resolve("Tessaly Track")
    assert governed.names_on(entity, _day(world, 3)) == ["Tessaly Track"]
    assert governed.names_on(entity, _day(world, 7)) == ["Tessaly Beacon"]
    beacon = next(n for n in governed.names if n.name == "Tessaly Beacon")
    assert beacon.valid_from == world.checkpoints[1].at and beacon.valid_to is None


T0 = dt.datetime(2026, 9, 1, 9)


def _page(pid: str, version: int = 1) -> StoredPage:
    return StoredPage(pid, pid, "", version, T0)


def _as_read(governed: GovernedStore) -> list[StoredPage]:
    """Every page the graph has read, as it read it: the current pages of a world whose graph is up to date."""
    return [StoredPage(pid, pid, "", version, at) for pid, (version, at) in sorted(governed.extractions.items())]


def test_spellings_fold_to_one_entity_at_write_time_and_a_record_patch_reaches_them_all(world):
    governed = GovernedStore(world)
    governed.apply_page(_page("d19"), [Triple("Pro plan", "price", "49")], T0, "model:x")
    governed.apply_page(_page("d24"), [Triple("the Pro plan", "price", "49")], T0, "model:x")
    governed.apply_page(_page("d17"), [Triple("Pro", "price", "49")], T0, "model:x")
    assert len({f.entity_id for f in governed.active()}) == 1
    governed.apply_record("Pro", "price", "59", "record:billing", T0 + dt.timedelta(days=21))
    resolution = GovernedResolver(governed, _as_read(governed)).resolve("PRO PLAN", "price")
    assert (resolution.value, resolution.hedged) == ("59", False)  # the record outranks every page: settled


def test_a_misread_footnote_on_the_pricing_page_loses_to_the_refund_policy(world):
    governed = GovernedStore(world)
    later = T0 + dt.timedelta(days=7)
    governed.apply_page(_page("d03"), [Triple("Refund policy", "refund_days", "30")], T0, "model:x")
    governed.apply_page(StoredPage("d02", "Pricing", "", 2, later), [Triple("Refund policy", "refund_days", "2")],
                        later, "model:x")
    resolution = GovernedResolver(governed, _as_read(governed)).resolve("Refund policy", "refund_days")
    assert (resolution.value, resolution.hedged) == ("30", False)  # newer, but a lower rank


def test_disagreement_inside_the_top_rank_is_hedged_and_the_newest_wins(world):
    governed = GovernedStore(world)
    governed.apply_page(_page("d15"), [Triple("Pro", "price", "49")], T0, "regex")
    governed.apply_page(StoredPage("d19", "x", "", 1, T0 + dt.timedelta(days=1)), [Triple("Pro", "price", "59")],
                        T0 + dt.timedelta(days=1), "regex")
    resolution = GovernedResolver(governed, _as_read(governed)).resolve("Pro", "price")
    assert (resolution.value, resolution.hedged, resolution.why) == ("59", True, "sources disagree within the top rank")


def test_a_page_that_changed_after_extraction_settles_its_own_fact(world):
    governed = GovernedStore(world)
    governed.apply_page(_page("d02"), world.ontology.parse("The Pro plan costs €49 per user per month."), T0, "regex")
    newer = StoredPage("d02", "Pricing", "The Pro plan costs €59 per user per month.", 2, T0 + dt.timedelta(days=21))
    resolution = GovernedResolver(governed, [newer]).resolve("Pro", "price")
    assert (resolution.value, resolution.hedged) == ("59", False)
    # while an unrelated page changing says nothing about this fact
    other = StoredPage("d31", "Travel", "Book trains.", 2, T0 + dt.timedelta(days=21))
    governed2 = GovernedStore(world)
    governed2.apply_page(_page("d02"), world.ontology.parse("The Pro plan costs €49 per user per month."), T0, "regex")
    assert GovernedResolver(governed2, [*_as_read(governed2), other]).resolve("Pro", "price").hedged is False


def test_a_fact_from_a_page_that_is_gone_no_longer_answers_but_a_record_fact_still_does(world):
    """A graph that lags keeps the facts of a page deleted since it last read; nothing states them any more.
    A system-of-record fact has no page behind it, so the same rule leaves it standing."""
    governed = GovernedStore(world)
    governed.apply_page(_page("d15"), [Triple("Pro", "price", "49")], T0, "regex")
    governed.apply_page(_page("d03"), [Triple("Refund policy", "refund_days", "30")], T0, "regex")
    governed.apply_record("Enterprise", "price", "99", "record:billing", T0)
    still_there = [_page("d03")]  # d15 was deleted after the graph read it
    resolver = GovernedResolver(governed, still_there)
    assert resolver.resolve("Pro", "price").value is None
    assert resolver.resolve("Refund policy", "refund_days").value == "30"
    assert resolver.resolve("Enterprise", "price").value == "99"
    assert GovernedResolver(governed, _as_read(governed)).resolve("Pro", "price").value == "49"


def test_no_entry_is_i_dont_know(world):
    resolution = GovernedResolver(GovernedStore(world), []).resolve("Platinum", "price")
    assert (resolution.value, resolution.why) == (None, "not in graph")


def test_every_governed_fact_names_its_extractor(world):
    governed = _fresh_history(world)
    assert {f.extractor for f in governed.facts.values()} == {"regex"}


def test_a_fixed_subject_predicate_lands_on_the_ontologys_subject_whatever_the_model_wrote(world):
    governed = GovernedStore(world)
    governed.apply_page(_page("d04"), [Triple("Shipment data", "retention_days", "365")], T0, "model:x")
    assert GovernedResolver(governed, _as_read(governed)).resolve("Retention policy", "retention_days").value == "365"


def test_a_model_reader_that_contradicts_the_governed_value_is_hedged(world):
    from driftlab_dagster.core.call_cache import CachedClient
    from driftlab_dagster.core.designs import Agent, Design
    from driftlab_dagster.core.model_reader import ModelReader
    from driftlab_dagster.core.replay import ReplayClient
    from driftlab_dagster.core.retrieval import Bm25Retriever

    governed = GovernedStore(world)
    governed.apply_page(_page("d02"), [Triple("Pro", "price", "49")], T0, "regex")
    resolver = GovernedResolver(governed, _as_read(governed))

    def agent(reply: str) -> Agent:
        reader = ModelReader(world.ontology, CachedClient(ReplayClient(lambda s, u: reply)))
        return Agent(Store(), Bm25Retriever([]), reader, Design.GOVERNED, world.ontology, resolver)

    agrees = agent('{"answer": "€49", "possibly_stale": false}').ask("q", "Pro", ("price",))
    assert (agrees.value, agrees.hedged) == ("€49", False)
    # A reader that answers what no claim says has misread them: the governed value stands, hedged.
    invents = agent('{"answer": "9", "possibly_stale": false}').ask("q", "Pro", ("price",))
    assert (invents.value, invents.hedged) == ("49", True)
    assert "in none of the claims" in invents.why


def test_a_model_reader_that_picks_another_top_rank_claim_is_kept_but_hedged(world):
    from driftlab_dagster.core.call_cache import CachedClient
    from driftlab_dagster.core.designs import Agent, Design
    from driftlab_dagster.core.model_reader import ModelReader
    from driftlab_dagster.core.replay import ReplayClient
    from driftlab_dagster.core.retrieval import Bm25Retriever

    governed = GovernedStore(world)
    governed.apply_page(_page("d17"), [Triple("Pro", "price", "49")], T0, "regex")
    later = T0 + dt.timedelta(days=1)
    governed.apply_page(StoredPage("d24", "d24", "", 1, later), [Triple("Pro", "price", "59")], later, "regex")
    resolution = GovernedResolver(governed, _as_read(governed)).resolve("Pro", "price")
    assert resolution.hedged and resolution.value == "59"  # two pages of one rank disagree; the newer wins
    reader = ModelReader(world.ontology, CachedClient(ReplayClient(lambda s, u: '{"answer": "€49"}')))
    chose = Agent(Store(), Bm25Retriever([]), reader, Design.GOVERNED, world.ontology,
                  GovernedResolver(governed, _as_read(governed))).ask("q", "Pro", ("price",))
    assert (chose.value, chose.hedged) == ("€49", True)
    assert "differs from the governed value" in chose.why


@pytest.mark.parametrize("reader_kind", ["deterministic", "model"])
def test_a_name_the_graph_never_saw_is_answered_from_newer_pages_by_either_reader(world, reader_kind):
    """The graph read day 0 only; a newer page names a product the graph has never seen. Governed answers
    from that page with the deterministic reader and with a model reader alike (a model reader once crashed
    here looking up the unseen name's current spelling)."""
    from driftlab_dagster.core.call_cache import CachedClient
    from driftlab_dagster.core.designs import Agent, Design
    from driftlab_dagster.core.model_reader import ModelReader
    from driftlab_dagster.core.readers import DeterministicReader
    from driftlab_dagster.core.replay import ReplayClient
    from driftlab_dagster.core.retrieval import Bm25Retriever

    governed = GovernedStore(world)
    governed.apply_page(_page("d06"), [Triple("Tessaly Track", "owned_by", "Helix")], T0, "regex")
    newer = StoredPage("d06", "Product page", "Tessaly Beacon is owned by the Atlas team.", 2,
                       T0 + dt.timedelta(days=7))
    resolver = GovernedResolver(governed, [newer])
    shown: list[str] = []

    def reply(system: str, user: str) -> str:
        shown.append(user)
        return "Atlas"

    reader = (DeterministicReader(world.ontology) if reader_kind == "deterministic"
              else ModelReader(world.ontology, CachedClient(ReplayClient(reply))))
    agent = Agent(Store(), Bm25Retriever([]), reader, Design.GOVERNED, world.ontology, resolver)
    answer = agent.ask("Which team owns Tessaly Beacon?", "Tessaly Beacon", ("owned_by",))
    assert answer.value is not None and "Atlas" in answer.value and not answer.hedged
    if reader_kind == "model":
        assert len(shown) == 1 and "Tessaly Beacon is owned by the Atlas team" in shown[0]


def _prose_graph(tmp_path, title: str, body: str, triples: list[Triple]) -> tuple[GovernedStore, StoredPage]:
    """A corpus world's (open relations) governed graph holding `triples`, as a model read them from one page."""
    from driftlab_dagster.core.world.loader import load_world
    from driftlab_dagster_tests.core.test_corpus_world import make_wiki

    page = StoredPage("wiki/ops.md", title, body, 1, T0)
    governed = GovernedStore(load_world(make_wiki(tmp_path) / "world.yaml"))
    governed.apply_page(page, triples, T0, "model:x")
    return governed, page


def test_a_name_no_entity_goes_by_is_answered_from_facts_read_under_a_heading_that_names_it(tmp_path):
    # Real handbooks name the subject in the nearest heading; the model files the fact under another subject
    # (18F: "$27.62" under "GSA branding" below "## Business cards").
    governed, page = _prose_graph(tmp_path, "Teams", "# Teams\n\n## Billing\n\nDay to day, the Heron team owns it."
                                  "\n\n## Travel and expenses\n\n- Kestrel team: owns it\n",
                                  [Triple("day to day", "owned_by", "Heron"), Triple("it", "owned_by", "Kestrel")])
    resolver = GovernedResolver(governed, [page])
    billing = resolver.resolve("Billing", "owned_by")
    assert (billing.value, billing.hedged) == ("Heron", False) and "its heading names Billing" in billing.why
    assert resolver.resolve("travel", "owned_by").value == "Kestrel"
    assert resolver.resolve("Payroll", "owned_by").value is None  # no heading names it
    # The title is no statement's nearest heading; the page's statements give two owners: none is Teams'.
    assert resolver.resolve("Teams", "owned_by").value is None
    # A fact's value must be written under that heading: "Heron" is not under "## Travel and expenses".
    assert {c.value for c in resolver.resolve("Travel", "owned_by").candidates} == {"Kestrel"}
    # The statement itself may name it ("Day to day" filed the fact; the sentence names "Heron team").
    assert resolver.resolve("day to day", "owned_by").value == "Heron"  # the graph's own entity: no change
    assert resolver.resolve("Heron team", "owned_by").value is None  # the fact's value is no name for its subject


def test_a_heading_that_names_the_subject_outranks_a_statement_that_mentions_it(tmp_path):
    # 18F: "Business cards" is the heading above "$27.62", and a word in a sentence about "$10,000" purchases.
    governed, page = _prose_graph(tmp_path, "Ops", "# Ops\n\nThe Falcon team owns purchases, business cards too."
                                  "\n\n## Business cards\n\nThe Heron team owns them.\n",
                                  [Triple("purchases", "owned_by", "Falcon"), Triple("them", "owned_by", "Heron")])
    found = GovernedResolver(governed, [page]).resolve("Business cards", "owned_by")
    assert (found.value, found.hedged) == ("Heron", False) and "its heading names" in found.why
    # Without the heading, the statement that names it is read.
    page = StoredPage("wiki/ops.md", "Ops", page.body.replace("## Business cards\n\n", ""), 1, T0)
    found = GovernedResolver(governed, [page]).resolve("Business cards", "owned_by")
    assert found.value == "Falcon" and "where it names" in found.why
    # A page whose title names it, less closely: any statement on it.
    page = StoredPage("wiki/ops.md", "Business cards", "# Business cards\n\n## Who\n\nThe Heron team owns them.\n",
                      1, T0)
    found = GovernedResolver(governed, [page]).resolve("Business cards", "owned_by")
    assert found.value == "Heron" and "where its page's title names" in found.why


def test_an_entity_without_a_claim_of_the_relation_is_answered_from_its_section(tmp_path):
    governed, page = _prose_graph(tmp_path, "Ops", "# Ops\n\n## Billing\n\nThe Heron team owns it.\n\n"
                                  "## Pager rota\n\nThe billing pager is quiet.\n",
                                  [Triple("it", "owned_by", "Heron"), Triple("Billing", "refund_days", "3")])
    resolver = GovernedResolver(governed, [page])
    assert resolver.resolve("Billing", "owned_by").value == "Heron"  # the entity exists, with another relation


def test_a_statement_names_a_name_as_a_phrase_not_as_words_scattered_over_it(tmp_path):
    # 18F: "Level 5 summary ratings: up to 2.5%" is about the Level 5 rating; "High 3 summary ratings ... for a
    # Level 3 summary rating ... rated at Level 4 or Level 5" holds the same words and is not.
    body = ("# Awards\n\n- Level 5 summary ratings: the Heron team owns them.\n"
            "- High 3 summary ratings: the Kestrel team owns them, for a Level 3 summary rating rated at Level 4 or "
            "Level 5.\n")
    governed, page = _prose_graph(tmp_path, "Awards", body, [Triple("Awards", "owned_by", "Heron"),
                                                              Triple("Awards", "owned_by", "Kestrel")])
    found = GovernedResolver(governed, [page]).resolve("Level 5 summary rating", "owned_by")
    assert (found.value, found.hedged) == ("Heron", False) and "where it names" in found.why
    # Without the statement that names it as a phrase, the scattered words answer nothing.
    page = StoredPage(page.id, page.title, body.split("\n- High")[0].replace("Level 5 summary", "Level 6 summary")
                      + "\n- High" + body.split("\n- High")[1], 1, T0)
    assert GovernedResolver(governed, [page]).resolve("Level 5 summary rating", "owned_by").value is None


def test_a_subject_with_its_pages_title_names_the_asked_name(tmp_path):
    # 18F: "8-15 months" is filed under "top secret" on the page "Top Secret ... Clearance", two headings down.
    body = ("# Top Secret Clearance\n\n## Request process\n\n### Step 5\n\nThe top secret portion is owned by the "
            "Heron team.\n\n### Step 6\n\nThe eQIP form is owned by the Kestrel team.\n")
    governed, page = _prose_graph(tmp_path, "Top Secret Clearance", body,
                                  [Triple("top secret", "owned_by", "Heron"), Triple("eQIP", "owned_by", "Kestrel")])
    found = GovernedResolver(governed, [page]).resolve("Top Secret clearance", "owned_by")
    assert (found.value, found.hedged) == ("Heron", False) and "its subject with its page's title" in found.why
    # A subject that shares no word with the name is not qualified by the title: only the title's own tier
    # reads it, and there the page's owners disagree.
    assert GovernedResolver(governed, [page]).resolve("Clearance", "owned_by").value is None


def test_a_name_written_short_finds_the_entity_written_in_full(tmp_path):
    governed, page = _prose_graph(tmp_path, "Portfolio", "# Portfolio\n\nThe TTS Technology Portfolio is owned by "
                                  "the Heron team.\n", [Triple("TTS Technology Portfolio", "owned_by", "Heron")])
    assert GovernedResolver(governed, [page]).resolve("TTS Tech Portfolio", "owned_by").value == "Heron"


def test_a_name_with_its_initials_in_brackets_is_one_entity_with_the_initials(tmp_path):
    # Basecamp: "$2,650" was filed under "Flexible Spending Account (FSA)", "$5,000" (the dependent care FSA's)
    # under "FSA"; the question about the FSA saw only the second, as if nothing disagreed.
    body = "# Benefits\n\nThe Flexible Spending Account (FSA) is owned by Heron. The FSA form is owned by Kestrel.\n"
    governed, page = _prose_graph(tmp_path, "Benefits", body, [Triple("FSA", "owned_by", "Kestrel"),
                                                               Triple("Flexible Spending Account (FSA)", "owned_by",
                                                                      "Heron")])
    assert governed.resolve("FSA") == governed.resolve("Flexible Spending Account (FSA)") is not None
    found = GovernedResolver(governed, [page]).resolve("FSA", "owned_by")
    assert {c.value for c in found.candidates} == {"Heron", "Kestrel"} and found.hedged


def test_a_subject_with_words_of_its_own_is_not_qualified_by_the_title(tmp_path):
    # 18F: "Term Renewal Request Survey" (4 months) on the page "Term extensions" is no claim on term extensions.
    governed, page = _prose_graph(tmp_path, "Term extensions", "# Term extensions\n\n## Survey\n\nThe term renewal "
                                  "survey is owned by the Heron team.\n",
                                  [Triple("Term renewal survey", "owned_by", "Heron")])
    found = GovernedResolver(governed, [page]).resolve("Term extensions", "owned_by")
    assert "its subject with its page's title" not in found.why


def _silent_graph_agent(world, reader, pages: list[StoredPage], when_silent: str):
    """Governed over a graph that read `pages` and holds no fact from them (an extractor that missed them all),
    beside those pages, which state the answers."""
    from driftlab_dagster.core.designs import Agent, Design
    from driftlab_dagster.core.retrieval import Bm25Retriever

    governed = GovernedStore(world)
    for page in pages:
        governed.apply_page(page, [], page.updated_at, "regex")
    return Agent(Store(), Bm25Retriever(pages), reader, Design.GOVERNED, world.ontology,
                 GovernedResolver(governed, pages), governed_when_silent=when_silent)


_PRICING = StoredPage("d02", "Pricing", "The Starter plan costs €19 per user per month. The Pro plan costs €49 "
                      "per user per month.", 1, T0)


def test_where_its_graph_is_silent_governed_abstains_or_reads_the_pages_as_set(world):
    from driftlab_dagster.core.readers import DeterministicReader

    question = ("How much does the Pro plan cost per user per month?", "Pro", ("price",))
    abstains = _silent_graph_agent(world, DeterministicReader(world.ontology), [_PRICING], "abstain").ask(*question)
    assert (abstains.value, abstains.why) == (None, "not in graph")
    reads = _silent_graph_agent(world, DeterministicReader(world.ontology), [_PRICING], "pages").ask(*question)
    # Read from a page, not from a governed fact: right, and hedged, and it says where it was read.
    assert reads.value is not None and "49" in reads.value and reads.hedged
    assert "not in graph; read from the pages, stated on d02" == reads.why


def test_an_answer_read_from_the_pages_that_no_page_states_of_the_asked_thing_is_no_answer(world):
    """A model reader shown the pricing page answers the Starter plan's price for the Pro plan (a neighbouring
    statement's value): no page states it of Pro, so Governed still abstains; the Pro plan's own price stands."""
    from driftlab_dagster.core.call_cache import CachedClient
    from driftlab_dagster.core.model_reader import ModelReader
    from driftlab_dagster.core.replay import ReplayClient

    def reader(reply: str) -> ModelReader:
        return ModelReader(world.ontology, CachedClient(ReplayClient(lambda system, user: reply)))

    question = ("How much does the Pro plan cost per user per month?", "Pro", ("price",))
    neighbour = _silent_graph_agent(world, reader('{"answer": "€19"}'), [_PRICING], "pages").ask(*question)
    assert neighbour.value is None and "no page read states the reader's answer" in neighbour.why
    own = _silent_graph_agent(world, reader('{"answer": "€49"}'), [_PRICING], "pages").ask(*question)
    assert (own.value, own.hedged) == ("€49", True)


def test_by_default_governed_reads_a_wikis_pages_where_its_graph_is_silent_and_a_templated_worlds_not(tmp_path, world):
    """The default policy ("auto") is the world's: a wiki's relations are read from prose by a model, whose
    graph lacks what it could not extract, so Governed reads the pages; a templated world's sentences are parsed
    exactly, so its graph's silence is the answer (the published table)."""
    from driftlab_dagster.core.call_cache import CachedClient
    from driftlab_dagster.core.designs import Agent, Design
    from driftlab_dagster.core.model_reader import ModelReader
    from driftlab_dagster.core.replay import ReplayClient
    from driftlab_dagster.core.retrieval import Bm25Retriever

    def reader(on, reply: str) -> ModelReader:
        return ModelReader(on.ontology, CachedClient(ReplayClient(lambda system, user: reply)))

    governed, page = _prose_graph(tmp_path, "Teams", "# Teams\n\n## Billing\n\nThe Heron team owns billing.\n", [])
    wiki = governed.world
    agent = Agent(Store(), Bm25Retriever([page]), reader(wiki, '{"answer": "Heron"}'), Design.GOVERNED, wiki.ontology,
                  GovernedResolver(governed, [page]))
    read = agent.ask("Which team owns billing?", "Billing", ("owned_by",))
    assert (read.value, read.hedged) == ("Heron", True) and "read from the pages, stated on wiki/ops.md" in read.why
    silent = _silent_graph_agent(world, reader(world, '{"answer": "€49"}'), [_PRICING], "auto")
    assert silent.ask("How much does the Pro plan cost per user per month?", "Pro", ("price",)).why == "not in graph"


def test_a_page_states_an_answer_of_the_thing_its_heading_names(tmp_path):
    """Basecamp: "## Pet Insurance" above "everyone gets a 10% discount on this insurance", which grounding
    reads as a claim on "insurance"; the heading says which insurance. A value under another heading is not."""
    governed, page = _prose_graph(tmp_path, "Teams", "# Teams\n\n## Pet Insurance\n\nThe Heron team owns this "
                                  "insurance.\n\n## Travel\n\nThe Kestrel team owns it.\n", [])
    resolver = GovernedResolver(governed, [page])
    assert resolver.stated_by([page], "Pet insurance", "owned_by", "Heron") == page.id
    assert resolver.stated_by([page], "Pet insurance", "owned_by", "Kestrel") is None
    assert resolver.stated_by([page], "Payroll", "owned_by", "Heron") is None


def test_the_questions_words_choose_among_the_values_one_page_gives_one_slot(tmp_path):
    # 18F: "six hours per pay period" earned and "240 hours" carried over are both annual leave's time allowances,
    # on one page; a question about carrying leave over means one of them.
    body = ("# Billing\n\nThe Heron team owns billing day to day.\n\n"
            "Disputed invoices are escalated and owned by the Kestrel team.\n")
    governed, page = _prose_graph(tmp_path, "Billing", body, [Triple("Billing", "owned_by", "Heron"),
                                                               Triple("Billing", "owned_by", "Kestrel")])
    resolver = GovernedResolver(governed, [page])
    disputes = resolver.resolve("Billing", "owned_by", asked="Who owns billing when an invoice is disputed?")
    assert disputes.value == "Kestrel" and "question's words choose Kestrel over Heron" in disputes.why
    assert {c.value for c in disputes.candidates} == {"Kestrel"}  # the reader is shown the chosen claim only
    assert disputes.hedged  # wording is a hint, not authority: still hedged
    assert resolver.resolve("Billing", "owned_by", asked="Which team owns billing from day to day?").value == "Heron"
    # No word shared but the asked name's, or one letter ("who's", "team's"): no choice, the page disagrees.
    for asked in ("", "Who owns billing?", "Who is in charge of refunds?", "Who's the team's owner of billing?"):
        found = resolver.resolve("Billing", "owned_by", asked=asked)
        assert found.hedged and "question's words" not in found.why, asked


def test_the_questions_words_choose_among_one_pages_values_read_under_a_heading_that_names_it(tmp_path):
    # 18F, later: the model filed leave's allowances under other subjects; "## Annual leave" and "## Advanced
    # annual leave" both name annual leave, "80 hours" advanced and "240 hours" carried over.
    body = ("# Ops\n\n## Billing\n\nDay to day, the Heron team owns it.\n\n"
            "Disputed invoices are owned by the Kestrel team.\n")
    governed, page = _prose_graph(tmp_path, "Ops", body, [Triple("day to day", "owned_by", "Heron"),
                                                           Triple("invoices", "owned_by", "Kestrel")])
    found = GovernedResolver(governed, [page]).resolve("Billing", "owned_by", asked="Who owns a disputed invoice?")
    assert (found.value, found.hedged) == ("Kestrel", True)
    assert "its heading names Billing" in found.why and "question's words choose Kestrel" in found.why


def test_the_questions_words_never_choose_a_statement_that_is_not_about_the_asked_name(tmp_path):
    # A neighbour's value the model filed under the asked name wins no choice for its wording.
    body = "# Ops\n\nThe Heron team owns payroll and its monthly reports.\n\nBilling is owned by the Kestrel team.\n"
    governed, page = _prose_graph(tmp_path, "Ops", body, [Triple("Billing", "owned_by", "Heron"),
                                                           Triple("Billing", "owned_by", "Kestrel")])
    found = GovernedResolver(governed, [page]).resolve("Billing", "owned_by", asked="Who owns the billing reports?")
    assert "question's words" not in found.why
    # Nor where a value is written in no statement about it: where the page says it is unknown.
    body = ("# Billing\n\nThe Heron team owns billing day to day.\n\nThe Kestrel Ops team handles billing disputes."
            "\n\nThe Falcon team owns billing reports.\n")
    (tmp_path / "again").mkdir()
    governed, page = _prose_graph(tmp_path / "again", "Billing", body,
                                  [Triple("Billing", "owned_by", v) for v in ("Heron", "Kestrel team", "Falcon")])
    found = GovernedResolver(governed, [page]).resolve("Billing", "owned_by", asked="Who owns billing day to day?")
    assert "question's words" not in found.why


def test_the_questions_words_never_choose_between_two_pages(tmp_path):
    # Two pages disagreeing is drift or a conflict, which authority and recency settle, not the question's wording.
    governed, page = _prose_graph(tmp_path, "Billing", "# Billing\n\nThe Heron team owns billing day to day.\n",
                                  [Triple("Billing", "owned_by", "Heron")])
    other = StoredPage("wiki/disputes.md", "Disputes", "# Disputes\n\nDisputed invoices are owned by the Kestrel "
                       "team.\n", 1, T0)
    governed.apply_page(other, [Triple("Billing", "owned_by", "Kestrel")], T0, "model:x")
    found = GovernedResolver(governed, [page, other]).resolve("Billing", "owned_by", asked="Who owns disputed bills?")
    assert found.hedged is True and "question's words" not in found.why


def test_the_governed_design_passes_the_question_asked_to_its_resolver(tmp_path):
    from driftlab_dagster.core.designs import Agent, Design
    from driftlab_dagster.core.readers import DeterministicReader
    from driftlab_dagster.core.retrieval import Bm25Retriever

    body = "# Billing\n\nThe Heron team owns billing day to day.\n\nDisputed invoices are owned by the Kestrel team.\n"
    governed, page = _prose_graph(tmp_path, "Billing", body, [Triple("Billing", "owned_by", "Heron"),
                                                               Triple("Billing", "owned_by", "Kestrel")])
    ontology = governed.world.ontology
    agent = Agent(Store(), Bm25Retriever([page]), DeterministicReader(ontology), Design.GOVERNED, ontology,
                  GovernedResolver(governed, [page]))
    assert agent.ask("Who owns billing when an invoice is disputed?", "Billing", ("owned_by",)).value == "Kestrel"
    assert agent.ask("Who owns billing from day to day?", "Billing", ("owned_by",)).value == "Heron"


def test_a_value_the_question_gives_as_its_premise_is_never_its_answer(tmp_path):
    # 18F: "In a normal 40-hour week, at least how many hours ... to bill?" and a page giving "40 hours" beside
    # the answer; "Which Google tool do staff use to conference call?" and "conference call" read as a tool.
    body = "# Billing\n\nThe Heron team and the Kestrel team own billing.\n"
    governed, page = _prose_graph(tmp_path, "Billing", body, [Triple("Billing", "owned_by", "Heron"),
                                                               Triple("Billing", "owned_by", "Kestrel")])
    resolver = GovernedResolver(governed, [page])
    found = resolver.resolve("Billing", "owned_by", asked="Besides the Heron team, who owns billing?")
    assert found.value == "Kestrel" and "the question itself gives Heron" in found.why
    assert [c.value for c in found.candidates] == ["Kestrel"]
    assert found.hedged  # the question's wording is a hint, not authority
    # Every value given by the question: nothing tells them apart, all stay and the page's disagreement stands.
    both = resolver.resolve("Billing", "owned_by", asked="Is billing owned by Heron or by Kestrel?")
    assert both.hedged and "question itself" not in both.why and len(both.candidates) == 2
    # A value the asked name itself writes is the name's, not the question's premise (18F: "#infrastructure" of
    # "Which Slack channel reaches the Infrastructure team?").
    (tmp_path / "channel").mkdir()
    governed, page = _prose_graph(tmp_path / "channel", "Heron", "# Heron\n\nThe Heron team reads #heron and "
                                  "#help.\n", [Triple("Heron team", "owned_by", "#heron"),
                                              Triple("Heron team", "owned_by", "#help")])
    found = GovernedResolver(governed, [page]).resolve("Heron team", "owned_by", asked="Who owns the Heron team?")
    assert "question itself" not in found.why and len(found.candidates) == 2
    # Read where a heading names the asked name, as for the entity's own claims.
    (tmp_path / "section").mkdir()
    governed, page = _prose_graph(tmp_path / "section", "Ops", "# Ops\n\n## Billing\n\nHeron and Kestrel own it.\n",
                                  [Triple("it", "owned_by", "Heron"), Triple("they", "owned_by", "Kestrel")])
    found = GovernedResolver(governed, [page]).resolve("Billing", "owned_by", asked="Who, with Heron, owns billing?")
    assert found.value == "Kestrel" and "the question itself gives Heron" in found.why


def test_a_value_the_question_gives_is_never_dropped_for_another_pages_value(tmp_path):
    # Between two pages a disagreement is drift, which authority and time settle: a question that names the
    # newer page's value ("still") must not hand the answer to the older page.
    governed, old = _prose_graph(tmp_path, "Billing", "# Billing\n\nThe Kestrel team owns billing.\n",
                                 [Triple("Billing", "owned_by", "Kestrel")])
    new = StoredPage("wiki/billing-now.md", "Billing now", "# Billing now\n\nThe Heron team now owns billing.\n", 1,
                     T0 + dt.timedelta(days=30))
    governed.apply_page(new, [Triple("Billing", "owned_by", "Heron")], T0 + dt.timedelta(days=30), "model:x")
    resolver = GovernedResolver(governed, [old, new])
    found = resolver.resolve("Billing", "owned_by", asked="Is billing still owned by the Heron team?")
    assert "question itself" not in found.why
    assert found.value == resolver.resolve("Billing", "owned_by").value == "Heron"


def test_a_question_asking_a_time_is_answered_by_a_time_in_its_zone_not_by_the_weekday(tmp_path):
    # 18F: "Each Monday at 2:30 pm ET (11:30 am PT)" gave the design huddle three claims; "At what time (Eastern)
    # does the huddle start?" was answered "Monday" or the Pacific time.
    body = "# Design\n\n## Huddle\n\nEach Monday at 2:30 pm ET (11:30 am PT) the design huddle meets.\n"
    governed, page = _prose_graph(tmp_path, "Design", body, [Triple("Design huddle", "owned_by", value)
                                                              for value in ("Monday", "2:30 pm ET", "11:30 am PT")])
    resolver = GovernedResolver(governed, [page])
    at = resolver.resolve("Design huddle", "owned_by", asked="At what time (Eastern) does the design huddle start?")
    assert (at.value, at.hedged) == ("2:30 pm ET", False) and {c.value for c in at.candidates} == {"2:30 pm ET"}
    assert "does not ask for Monday, 11:30 am PT" in at.why
    day = resolver.resolve("Design huddle", "owned_by", asked="On which weekday does the design huddle meet?")
    assert day.value == "Monday" and {c.value for c in day.candidates} == {"Monday"}
    # A question that asks neither a time nor a weekday: the page's three values disagree, as before.
    assert resolver.resolve("Design huddle", "owned_by", asked="Who runs the design huddle?").hedged


def test_an_answer_read_from_the_pages_of_a_shape_the_question_does_not_ask_is_no_answer(world):
    from driftlab_dagster.core.call_cache import CachedClient
    from driftlab_dagster.core.model_reader import ModelReader
    from driftlab_dagster.core.replay import ReplayClient

    reader = ModelReader(world.ontology, CachedClient(ReplayClient(lambda system, user: '{"answer": "€49"}')))
    found = _silent_graph_agent(world, reader, [_PRICING], "pages").ask(
        "At what time is the Pro plan billed?", "Pro", ("price",))
    assert found.value is None and "not of the shape the question asks for" in found.why


def test_a_page_newer_than_the_graph_is_read_as_it_is_now_where_its_heading_names_the_asked_thing(tmp_path):
    # 18F, StaleGraph: the graph read "## Annual leave" when it said "four hours"; the page now says otherwise,
    # and the claims read under that heading were only the graph's, so Governed answered nothing (Fresh did).
    before = "# Teams\n\n## Billing\n\nDay to day, the Heron team owns it.\n"
    governed, page = _prose_graph(tmp_path, "Teams", before, [Triple("day to day", "owned_by", "Heron")])
    now = StoredPage(page.id, page.title, before.replace("Heron", "Kestrel"), 2, T0 + dt.timedelta(days=30))
    found = GovernedResolver(governed, [now], read=lambda _: [Triple("day to day", "owned_by", "Kestrel")]).resolve(
        "Billing", "owned_by")
    assert found.value == "Kestrel" and "its heading names Billing" in found.why
    # What the page said before is no claim: its newer version is the page.
    assert {c.value for c in found.candidates} == {"Kestrel"}
