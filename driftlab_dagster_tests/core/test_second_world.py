"""A second world, Quillfeather Health, that shares nothing with Tessaly Freight but the file format.

The study must work on a company its code has never seen. These tests load the second world, run the whole
deterministic study on it in memory, and check relationships that hold for any well-formed world of this
kind, computed from the rows: no figure is copied from a run.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from driftlab_dagster.core.designs import Design
from driftlab_dagster.core.extraction import FULL, PATCH_PAGES, PATCH_RECORD
from driftlab_dagster.core.ontology import split_sentences
from driftlab_dagster.core.study import REPAIR_EVENT, StudyResult, run_study
from driftlab_dagster.core.world import World
from driftlab_dagster.core.world.loader import load_world
from driftlab_dagster.core.world.templated_spec import ConditionalPart, FactPart

WORLDS = Path(__file__).resolve().parents[2] / "data" / "worlds"
SECOND_WORLD = WORLDS / "quillfeather_health.yaml"
FIRST_WORLD = WORLDS / "tessaly_freight.yaml"


@pytest.fixture(scope="module")
def second() -> World:
    return load_world(SECOND_WORLD)


@pytest.fixture(scope="module")
def study(second: World) -> StudyResult:
    return run_study(second)


def _scenario(world: World, pages: str, graph: str) -> str:
    """The world's name for a drift policy: the tests never assume Tessaly's scenario names."""
    names = [n for n, s in world.spec.scenarios.items() if s.pages == pages and s.graph == graph]
    assert len(names) == 1, f"expected one scenario with pages={pages}, graph={graph}, got {names}"
    return names[0]


def _fresh(world: World) -> str:
    return _scenario(world, "all", "patch_changed_pages")


def _stale_pages(world: World) -> str:
    return _scenario(world, "none", "patch_from_record")


def _stale_graph(world: World) -> str:
    return _scenario(world, "all", "none")


def _partial_pages(world: World) -> str:
    return _scenario(world, "canonical", "patch_changed_pages")


def _rows(study: StudyResult, scenario: str, design: Design, drifted: bool | None = None) -> list[dict]:
    return [r for r in study.results if r["scenario"] == scenario and r["design"] == design.value
            and (drifted is None or r["drifted"] == drifted)]


def _accuracy(rows: list[dict]) -> float:
    assert rows, "an empty cell has no accuracy"
    return sum(r["outcome"] == "correct" for r in rows) / len(rows)


def _without_text(parts: list) -> list:
    """A page body with its plain-text parts dropped: only the fact sentences, conditions kept."""
    kept = []
    for part in parts:
        if isinstance(part, FactPart):
            kept.append(part)
        elif isinstance(part, ConditionalPart):
            kept.append(ConditionalPart(when=part.when, when_changed=part.when_changed,
                                        then=_without_text(part.then), otherwise=_without_text(part.otherwise)))
    return kept


def _first_world_names() -> set[str]:
    """Every proper name the first world uses: its company, its state's names, and each capitalised subject
    or object of its facts and questions, filled at every step."""
    first = load_world(FIRST_WORLD)
    names = {first.spec.company}
    names |= {v for v in first.spec.state.values() if isinstance(v, str)}
    for step in range(len(first.checkpoints)):
        for scenario in first.scenario_names:
            for page in first.pages_at(scenario, step):
                for t in first.ontology.parse(page.body):
                    names |= {t.subject, t.object}
        for q in first.questions_at(step):
            names |= {q.entity, q.expected}
    for e in first.spec.events:
        names |= {str(v) for v in e.set.values()}
    return {n for n in names if n[:1].isupper()}


# ----- the world's shape --------------------------------------------------------------------------------


def test_the_second_world_has_the_shape_of_a_drift_study(second):
    spec = second.spec
    assert 30 <= len(spec.pages) <= 40
    assert 20 <= len(spec.questions) <= 30
    assert len(spec.predicates) >= 8
    assert {"rename", "policy", "price", "owner"} < {e.kind for e in spec.events}  # and a kind of its own
    assert any(p.fixed_subject for p in spec.predicates.values())
    assert sum(p.rename for p in spec.predicates.values()) == 1
    assert any(q.event == 0 for q in spec.questions)
    for event in spec.events:
        assert sum(q.event == event.id for q in spec.questions) >= 2, f"event {event.id} has too few questions"
    assert sum(len(q.hops) == 2 for q in spec.questions) >= 2
    gaps = {b.day - a.day for a, b in zip(spec.events, spec.events[1:])}
    assert len(gaps) > 1, "event days should be irregular, not one a week"
    assert spec.authority.drafts and spec.authority.canonical


def test_the_four_scenarios_are_the_four_drift_policies_under_their_own_names(second):
    names = {_fresh(second), _stale_pages(second), _stale_graph(second), _partial_pages(second)}
    assert names == set(second.scenario_names)
    assert all(re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", n) for n in names)


def test_every_fact_sentence_comes_from_a_template_and_no_other_sentence_reads_as_a_fact(second):
    for scenario in second.scenario_names:
        for step in range(len(second.checkpoints)):
            for spec, page in zip(second.spec.pages, second.pages_at(scenario, step)):
                state = second.page_state(scenario, step, spec)
                facts = split_sentences(second.render_body(_without_text(spec.body), state))
                parsed = [s for s in split_sentences(page.body) if second.ontology.parse(s)]
                assert parsed == facts, f"{scenario} step {step} page {spec.id}"
                assert all(len(second.ontology.parse(s)) == 1 for s in facts)
                assert not second.ontology.parse(page.title), f"the title of {spec.id} reads as a fact"


def test_the_study_touches_no_name_from_the_first_world(second):
    first_names = _first_world_names()
    assert {"Tessaly Freight"} <= first_names and len(first_names) > 10
    texts = []
    for scenario in second.scenario_names:
        for step in range(len(second.checkpoints)):
            texts += [f"{p.title}\n{p.body}" for p in second.pages_at(scenario, step)]
    for step in range(len(second.checkpoints)):
        texts += [f"{q.text}\n{q.entity}\n{q.expected}" for q in second.questions_at(step)]
    texts += [second.spec.company, *second.scenario_names, *second.spec.predicates]
    for text in texts:
        assert "tessaly" not in text.casefold()
        for name in first_names:
            assert not re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text), f"{name!r} from the first world in {text!r}"


def test_the_drafts_page_carries_an_unapproved_value_only_after_an_event(second):
    fresh = _fresh(second)
    drafts = set(second.spec.authority.drafts)
    said = lambda step: {t for p in second.pages_at(fresh, step) if p.id in drafts  # noqa: E731
                         for t in second.ontology.parse(p.body)}
    assert said(0) == set()
    last = len(second.checkpoints) - 1
    assert said(last), "the trap never springs"
    truth = {(q.entity, q.hops[0]): q.expected for q in second.questions_at(last) if len(q.hops) == 1}
    assert any(truth.get((t.subject, t.predicate)) not in (None, t.object) for t in said(last)), \
        "the draft value should contradict a value some question asks for"


# ----- the study's results --------------------------------------------------------------------------------


def test_the_study_answers_every_question_with_every_design_in_every_scenario_at_every_checkpoint(second, study):
    expected = len(second.scenario_names) * len(second.checkpoints) * len(second.spec.questions) * len(Design)
    assert len(study.results) == expected


def test_rag_is_perfect_when_pages_and_graph_follow_the_world(second, study):
    assert _accuracy(_rows(study, _fresh(second), Design.RAG)) == 1.0


def test_in_the_fresh_scenario_only_the_versioned_design_misses_and_only_on_the_hedged_draft_value(second, study):
    fresh = _fresh(second)
    for design in (Design.RAG, Design.GRAPH, Design.HYBRID, Design.GOVERNED):
        assert _accuracy(_rows(study, fresh, design)) == 1.0, design
    drafts = set(second.spec.authority.drafts)
    misses = [r for r in _rows(study, fresh, Design.HYBRID_VERSIONED) if r["outcome"] != "correct"]
    for r in misses:
        draft_values = {t.object for p in second.pages_at(fresh, r["step"]) if p.id in drafts
                        for t in second.ontology.parse(p.body)}
        assert r["hedged"] and r["answer"] in draft_values, r


def test_stale_pages_hurt_rag_on_drifted_questions_and_not_on_controls(second, study):
    stale = _stale_pages(second)
    controls = _accuracy(_rows(study, stale, Design.RAG, drifted=False))
    drifted = _accuracy(_rows(study, stale, Design.RAG, drifted=True))
    assert drifted < controls
    assert controls == _accuracy(_rows(study, _fresh(second), Design.RAG, drifted=False))


def test_a_graph_patched_from_the_system_of_record_is_right_although_no_page_changed(second, study):
    stale = _stale_pages(second)
    assert _accuracy(_rows(study, stale, Design.GRAPH)) == 1.0


def test_a_graph_nobody_maintains_gets_no_drifted_question_right(second, study):
    frozen = _stale_graph(second)
    assert _accuracy(_rows(study, frozen, Design.GRAPH, drifted=True)) == 0.0
    assert _accuracy(_rows(study, frozen, Design.GRAPH, drifted=False)) == 1.0


def test_a_stale_layer_answers_with_the_initial_world_or_not_at_all(second, study):
    initial = {q.id: q.expected for q in second.questions_at(0)}
    stale_layers = [(_stale_graph(second), Design.GRAPH), (_stale_pages(second), Design.RAG)]
    for scenario, design in stale_layers:
        for r in _rows(study, scenario, design, drifted=True):
            assert r["outcome"] == "abstain" or r["answer"].casefold() == initial[r["question"]].casefold(), r


def test_partially_updated_pages_leave_stale_copies_that_mislead_the_graph(second, study):
    partial = _partial_pages(second)
    assert _accuracy(_rows(study, partial, Design.GRAPH, drifted=True)) < 1.0
    assert _accuracy(_rows(study, partial, Design.RAG, drifted=True)) < 1.0


def test_governed_answers_every_question_right_in_every_scenario_without_hedging(second, study):
    for scenario in second.scenario_names:
        rows = _rows(study, scenario, Design.GOVERNED)
        assert _accuracy(rows) == 1.0, scenario
        assert not any(r["hedged"] for r in rows), scenario


def test_patching_reads_fewer_pages_than_a_full_rebuild_for_every_event(second, study):
    by = {(c["approach"], c["event"]): c for c in study.costs}
    for event in second.spec.events:
        patch, full = by[(PATCH_PAGES, event.id)], by[(FULL, event.id)]
        assert 0 < patch["docs"] < full["docs"] == len(second.spec.pages), event.id
        assert by[(PATCH_RECORD, event.id)]["docs"] == 0
    repair_patch, repair_full = by[(f"repair: {PATCH_PAGES}", REPAIR_EVENT)], by[(f"repair: {FULL}", REPAIR_EVENT)]
    assert repair_patch["docs"] < repair_full["docs"]
    assert repair_patch["graph_only_accuracy"] == repair_full["graph_only_accuracy"]
