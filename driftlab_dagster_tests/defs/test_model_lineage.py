"""The model path through Dagster on recorded replies (the replay implementation of the model resource):
seconds, not minutes, and what lineage says is what ran: the graph's code version is the extractor id
stored on every fact and log row the run wrote."""

from __future__ import annotations

import json

import dagster as dg
import duckdb
import pytest

from driftlab_dagster.core.call_cache import CacheEntry, call_key
from driftlab_dagster.core.grounding import relations_to_ask
from driftlab_dagster.core.model_extractor import ModelExtractor
from driftlab_dagster.core.ontology import split_sentences
from driftlab_dagster.core.prompts import relation_prompts, relation_schema
from driftlab_dagster.core.replay import write_replay_file
from driftlab_dagster.core.session import extractor_id
from driftlab_dagster.core.settings import StudySettings
from driftlab_dagster.headless import run_study_in_dagster
from driftlab_dagster_tests.conftest import config_for

pytestmark = pytest.mark.dagster

MODEL = "recorded-model"
UNTIL = "2026-09-08"


def _record_replies(world, path, drop: set[str] = frozenset()) -> None:
    """Replies as a model that extracts perfectly would give them, for every sentence of the first two days
    of every scenario, keyed as the client keys its calls; sentences of pages in `drop` were never recorded
    (unless another page says the same sentence)."""
    prompts = relation_prompts(world.ontology, world.canonical_json)
    entries = {}
    for scenario in world.scenario_names:
        for step in (0, 1):
            for page in world.pages_at(scenario, step):
                if page.id in drop:
                    continue
                for sentence in split_sentences(page.body):
                    stated = {t.predicate: t for t in world.ontology.parse(sentence)}
                    for p in relations_to_ask(sentence, world.ontology.predicates):
                        t = stated.get(p.name)
                        reply = {"states": t is not None, "object": t.object if t else ""}
                        if not p.fixed_subject:
                            reply["subject"] = t.subject if t else ""
                        key = call_key(MODEL, prompts[p.name], sentence, relation_schema(p),
                                       ModelExtractor.MAX_RELATION_TOKENS)
                        entries.setdefault(key, CacheEntry(key, "chat", MODEL, json.dumps(reply), 0, 0, 0.0))
    write_replay_file(entries.values(), path)


@pytest.fixture(scope="module")
def replayed(tmp_path_factory, world):
    """One replayed model run, read (never changed) by every test here."""
    folder = tmp_path_factory.mktemp("replayed")
    replies = folder / "replies.jsonl"
    _record_replies(world, replies, drop={"d05"})
    config = config_for(folder, extractor="model", api="replay", model=MODEL, replay_file=str(replies))
    instance = dg.DagsterInstance.ephemeral()
    [run] = run_study_in_dagster(config, instance=instance, until=UNTIL)
    return config, instance, run


def test_the_graphs_code_version_is_the_extractor_id_stored_on_every_row(replayed, world):
    config, instance, _ = replayed
    expected = extractor_id(StudySettings(extractor="model", model=MODEL), world)
    assert expected.startswith(f"model:{MODEL}:relation-v1:")
    for asset in ("fact_graph", "extraction_log", "governed_graph"):
        for record in instance.fetch_materializations(dg.AssetKey([world.id, asset]), limit=100).records:
            assert record.asset_materialization.tags["dagster/code_version"] == expected
    with duckdb.connect(str(config.database), read_only=True) as conn:
        assert conn.execute("SELECT DISTINCT extractor FROM facts").fetchall() == [(expected,)]
        assert conn.execute("SELECT DISTINCT extractor FROM extraction_log").fetchall() == [(expected,)]
        assert conn.execute("SELECT count(DISTINCT (scenario, day)) FROM answers").fetchone()[0] == 8


def test_a_call_that_was_not_recorded_is_an_outcome_not_a_crash(replayed, world):
    config, _, _ = replayed
    with duckdb.connect(str(config.database), read_only=True) as conn:
        issues = conn.execute("SELECT DISTINCT page_id, issue FROM extraction_log WHERE issue <> ''").fetchall()
        uptime = conn.execute("SELECT count(*) FROM facts WHERE predicate = 'uptime'").fetchone()[0]
    assert {p for p, _ in issues} == {"d05"} and all("no recorded reply" in i for _, i in issues)
    assert uptime == 0  # the SLA page's facts are missing from the graph, and nothing else is


def test_the_replayed_graph_equals_the_regex_graph_where_replies_were_recorded(replayed, world, tmp_path):
    config, _, _ = replayed
    regex = config_for(tmp_path / "regex")
    (tmp_path / "regex").mkdir()
    run_study_in_dagster(regex, instance=dg.DagsterInstance.ephemeral(), until=UNTIL)

    def facts(database) -> set[tuple]:
        with duckdb.connect(str(database), read_only=True) as conn:
            return set(conn.execute("SELECT scenario, day, entity, predicate, object, source_doc FROM facts "
                                    "WHERE source_doc <> 'd05'").fetchall())

    assert facts(config.database) == facts(regex.database)
