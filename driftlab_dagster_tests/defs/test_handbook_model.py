"""A prose handbook with years of git history, end to end on the shipped 0.5B model: the Thistlecombe
fixture built into a git repository, then a slice of its study (Fresh, the first two checkpoints) through
Dagster and DuckDB with the model extractor and the model reader, exactly as a user runs their own wiki.
The whole study is `bench/handbook_study.py`.

Slow (minutes on 2 cores); `make test` runs it, `make test-fast` does not.
"""

from __future__ import annotations

import dagster as dg
import duckdb
import pytest

from driftlab_dagster.core.designs import ALL_DESIGNS
from driftlab_dagster.core.settings import StudySettings
from driftlab_dagster.core.world.loader import load_world
from driftlab_dagster.fixture_repo import build_handbook
from driftlab_dagster.headless import run_study_in_dagster
from driftlab_dagster.model_server import MODEL_ALIAS, LlamaServer
from driftlab_dagster_tests.conftest import config_for

pytestmark = pytest.mark.model


def test_a_slice_of_the_handbook_study_runs_through_dagster_on_the_model(tmp_path):
    handbook = build_handbook(tmp_path / "hb")
    world = load_world(handbook.world)
    days = world.day_keys[:2]
    config = config_for(tmp_path, worlds=[handbook.world], extractor="model", reader="model", api="openai",
                        model=MODEL_ALIAS, timeout=120)
    answers_sql = "SELECT design, day::VARCHAR, question, outcome, answer, hedged, why FROM answers ORDER BY ALL"
    with LlamaServer() as llama:
        # Governed abstains where its graph is silent (not this world's default, which reads the pages below).
        config = config.override(study={"url": llama.url, "governed_when_silent": "abstain"})
        [run] = run_study_in_dagster(config, instance=dg.DagsterInstance.ephemeral(), scenarios=["Fresh"],
                                     until=days[-1])
        llama.assert_alive()
        with duckdb.connect(str(config.database), read_only=True) as conn:
            q = lambda sql: conn.execute(sql).fetchall()  # noqa: E731
            answers = q("SELECT day::VARCHAR, count(*) FROM answers GROUP BY ALL ORDER BY ALL")
            extractors = {r[0] for r in q("SELECT DISTINCT extractor FROM extraction_log")}
            facts = q("SELECT count(*), count(DISTINCT source_doc) FROM facts")[0]
            outcomes = dict(q("SELECT design || '/' || outcome, count(*) FROM answers GROUP BY ALL"))
            none_abstained = q("SELECT count(*) FILTER (WHERE outcome = 'correct'), count(*) FROM answers "
                               "WHERE expected = 'none' AND design = 'Governed'")[0]
            abstaining = q(answers_sql)
        # The same slice again, Governed reading the pages where its graph is silent, as it does by default on a
        # wiki (the reader's calls are Rag's, so from the cache).
        run_study_in_dagster(config.override(study={"governed_when_silent": "auto"}),
                             instance=dg.DagsterInstance.ephemeral(), scenarios=["Fresh"], until=days[-1])
    per_day = len(world.question_ids) * len(ALL_DESIGNS)
    assert answers == [(d, per_day) for d in days]
    assert extractors == {ext for ext in extractors if ext.startswith(f"model:{MODEL_ALIAS}:{StudySettings().prompt}:")}
    assert facts[0] > 20 and facts[1] > 5  # the model read facts from prose, on many pages
    assert run.spend["model_calls"] > 0
    assert run.spend.get("model_calls_failed", 0) <= 0.02 * run.spend["model_calls"]
    # The model path answers prose questions: every design gets some right, and Governed abstains on
    # some question the handbook does not answer yet instead of inventing one.
    for design in ALL_DESIGNS:
        assert outcomes.get(f"{design.value}/correct", 0) > 0, outcomes
    assert none_abstained[1] > 0 and none_abstained[0] > 0
    # Reading the pages where the graph is silent changes Governed's abstentions only, each into a hedged answer
    # naming the page that states it; every other design's rows stay as they were.
    with duckdb.connect(str(config.database), read_only=True) as conn:
        reading = conn.execute(answers_sql).fetchall()
    assert [r for r in reading if r[0] != "Governed"] == [r for r in abstaining if r[0] != "Governed"]
    before = {r[:3]: r for r in abstaining if r[0] == "Governed"}
    assert {r[:3] for r in reading if r[0] == "Governed"} == set(before)
    for row in (r for r in reading if r[0] == "Governed" and r[4] != before[r[:3]][4]):
        assert before[row[:3]][6] == "not in graph" and row[5] and "read from the pages, stated on" in row[6], row
