"""End to end on a real local model: Qwen2.5-Coder-0.5B-Instruct (shipped in registry packages) served by
llama-cpp-python on loopback, reached through each client: the OpenAI-compatible API directly, and
Ollama's native API through the official `ollama` client via the tests' adapter. Each run materialises a
slice of the study through Dagster (Fresh on the initial day and the rename day) with both the extractor
and the reader on the model, then runs again to show the cache pays for everything the second time.

Slow (a few minutes a client on 2 cores); `make test` runs it, `make test-fast` does not.
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import duckdb
import pytest

from driftlab_dagster.core.settings import StudySettings
from driftlab_dagster.headless import run_study_in_dagster
from driftlab_dagster.model_server import MODEL_ALIAS, EmbeddingServer, LlamaServer
from driftlab_dagster.ollama_adapter import OllamaAdapter
from driftlab_dagster_tests.conftest import config_for

pytestmark = pytest.mark.model

SLICE = {"scenarios": ["Fresh"], "until": "2026-09-08"}


@pytest.fixture(scope="module")
def servers():
    with LlamaServer() as llama, EmbeddingServer() as e5, OllamaAdapter(llama.url, MODEL_ALIAS, e5.url) as adapter:
        yield llama, adapter


def _run(tmp: Path, **study) -> dict:
    config = config_for(tmp, **study)
    run_study_in_dagster(config, instance=dg.DagsterInstance.ephemeral(), **SLICE)
    with duckdb.connect(str(config.database), read_only=True) as conn:
        q = lambda sql: conn.execute(sql).fetchall()  # noqa: E731
        return {
            "answers": q("SELECT day::VARCHAR, count(*) FROM answers GROUP BY ALL ORDER BY ALL"),
            "extractors": q("SELECT DISTINCT extractor FROM extraction_log"),
            "facts": q("SELECT count(*) FROM facts")[0][0],
            "calls": q("SELECT count(*), sum(input_tokens), sum(output_tokens) FROM model_calls "
                       "WHERE kind = 'chat'")[0],
            "spent": q("SELECT sum(spent_input_tokens), sum(input_tokens) FROM graph_maintenance")[0],
            "abstain_reasons": {r[0] for r in q("SELECT why FROM answers WHERE outcome = 'abstain'")},
            # calls that failed (a timeout on a loaded machine): not cached, so a rerun asks them again
            "failed": q("SELECT count(*) FROM answers WHERE why LIKE '%model call failed%'")[0][0]
            + q("SELECT count(*) FROM extraction_log WHERE issue LIKE '%model call failed%'")[0][0],
            "rows": q("SELECT * FROM answers ORDER BY ALL"),
        }


@pytest.mark.parametrize("api", ["openai", "ollama"])
def test_a_model_slice_runs_through_dagster_and_a_rerun_spends_no_tokens(servers, tmp_path, api):
    llama, adapter = servers
    study = dict(extractor="model", reader="model", api=api, model=MODEL_ALIAS,
                 url=llama.url if api == "openai" else adapter.url, timeout=120)
    first = _run(tmp_path, **study)
    llama.assert_alive()  # a dead server would otherwise show up as "no facts"

    assert first["answers"] == [("2026-09-01", 100), ("2026-09-08", 100)]
    default_prompt = StudySettings().prompt
    assert (len(first["extractors"]) == 1
            and first["extractors"][0][0].startswith(f"model:{MODEL_ALIAS}:{default_prompt}:"))
    assert first["facts"] > 0
    calls, input_tokens, output_tokens = first["calls"]
    assert calls > 40 and input_tokens > 1000 and output_tokens > 0  # counted by the server, not estimated
    spent, live = first["spent"]
    # Day 7's patch paid for the sentences of the changed pages it had not seen on day 0, and only those.
    assert 0 < spent < live
    assert ("no evidence" in first["abstain_reasons"]
            or first["abstain_reasons"] <= {"model said unknown", "no evidence"})
    if api == "ollama":
        assert "POST /api/chat" in adapter.requests

    second = _run(tmp_path, **study)
    if first["failed"]:  # only what failed the first time is asked again; nothing else
        assert 0 < second["calls"][0] - first["calls"][0] <= first["failed"]
        return
    assert second["calls"] == first["calls"]  # nothing new was asked of the model
    assert second["spent"][0] == 0 and second["spent"][1] == live  # a live system would have paid again
    assert second["rows"] == first["rows"]  # and the same answers came back


def test_embedding_retrieval_stores_vectors_beside_the_pages(servers, tmp_path):
    _, adapter = servers
    config = config_for(tmp_path, retrieval="embed", api="ollama", url=adapter.url, model=MODEL_ALIAS,
                        embed_model="e5-small")
    run_study_in_dagster(config, instance=dg.DagsterInstance.ephemeral(), **SLICE)
    with duckdb.connect(str(config.database), read_only=True) as conn:
        assert conn.execute("SELECT count(*), min(len(embedding)), max(len(embedding)) "
                            "FROM page_embeddings").fetchone() == (80, 384, 384)
        # Embedded once per distinct page text: 40 pages on day 0, plus the 8 the rename changed, plus the
        # questions' queries.
        pages_embedded = conn.execute("SELECT count(*) FROM model_calls WHERE kind = 'embed'").fetchone()[0]
        assert 48 <= pages_embedded <= 48 + 2 * 4 * 20
        accuracy = conn.execute("SELECT avg((outcome = 'correct')::int) FROM answers "
                                "WHERE design = 'Rag'").fetchone()[0]
        assert accuracy > 0.5


def test_backfilling_one_scenario_with_a_new_extractor_leaves_the_other_scenarios_byte_identical(servers, tmp_path):
    llama, _ = servers
    config = config_for(tmp_path)
    database = config.database
    instance = dg.DagsterInstance.ephemeral()
    run_study_in_dagster(config, instance=instance)

    def dump() -> dict[str, list[tuple]]:
        with duckdb.connect(str(database), read_only=True) as conn:
            return {s: conn.execute("SELECT * FROM answers WHERE scenario = ? ORDER BY ALL", [s]).fetchall()
                    for s in ("Fresh", "StalePages", "StaleGraph", "PartialPages")}

    before = dump()
    model_extractor = config.override(study={"extractor": "model", "api": "openai", "url": llama.url,
                                             "model": MODEL_ALIAS, "timeout": 120})
    run_study_in_dagster(model_extractor, instance=instance, scenarios=["StalePages"])
    after = dump()

    for scenario in ("Fresh", "StaleGraph", "PartialPages"):
        assert after[scenario] == before[scenario]
    assert len(after["StalePages"]) == len(before["StalePages"]) == 500
    with duckdb.connect(str(database), read_only=True) as conn:
        extractors = dict(conn.execute("SELECT scenario, string_agg(DISTINCT extractor, ',') FROM extraction_log "
                                       "GROUP BY ALL").fetchall())
    assert extractors["StalePages"].startswith(f"model:{MODEL_ALIAS}:") and extractors["Fresh"] == "regex"
