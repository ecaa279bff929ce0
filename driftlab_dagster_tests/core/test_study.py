"""The whole deterministic study in memory, without Dagster: the post's figures, and determinism."""

from __future__ import annotations

from driftlab_dagster.core import evaluation, reports
from driftlab_dagster.core.extraction import RegexExtractor
from driftlab_dagster.core.readers import DeterministicReader
from driftlab_dagster.core.study import maintenance_comparison, run_study
from driftlab_dagster_tests.published import check_published_figures


def test_the_core_reproduces_the_posts_deterministic_column(world):
    study = run_study(world)
    check_published_figures(study.results, study.costs)


def test_two_runs_give_byte_identical_results(world):
    first, second = run_study(world), run_study(world)
    assert reports.results_csv(first.results) == reports.results_csv(second.results)
    assert reports.costs_csv(first.costs) == reports.costs_csv(second.costs)
    # The milliseconds are measured, so they travel apart: one per pass costed, none in the costs.
    assert [(t["approach"], t["event"]) for t in first.timings] == [(c["approach"], c["event"]) for c in first.costs]
    assert all("ms" not in c for c in first.costs)


def test_the_multi_hop_question_follows_the_owning_team_to_its_lead(world):
    study = run_study(world)
    o2 = {(r["scenario"], r["design"], r["step"]): r for r in study.results if r["question"] == "O2"}
    assert o2[("Fresh", "Graph", 4)]["answer"] == "Emre Aslan"
    assert o2[("Fresh", "Graph", 3)]["answer"] == "Derya Kaya"
    assert o2[("StaleGraph", "Graph", 4)]["answer"] == "Derya Kaya"  # the graph never heard of Orion


def test_the_printed_tables_keep_the_posts_layout(world):
    study = run_study(world)
    table = reports.accuracy_table(reports.summarise(study.results, world.scenario_names))
    assert ("HybridVersioned   StaleGraph     100% (100/100)  100% (30/30)    "
            "0                0              0        61% (61/100)") in table
    costs = reports.cost_table(study.costs)
    assert costs.splitlines()[-1] == "* estimated at 4 characters per token, no model was called"


def test_a_graph_only_accuracy_indexes_no_page(world, monkeypatch):
    def no_index(pages):
        raise AssertionError("the graph design asked for a page index")

    monkeypatch.setattr(evaluation, "Bm25Retriever", no_index)
    rows = maintenance_comparison(world, 1, RegexExtractor(world.ontology), DeterministicReader(world.ontology))
    assert [r.graph_only_accuracy for r in rows] == [1.0, 1.0, 1.0]
