"""The study through Dagster: real runs of the asset graph into a real DuckDB file.

The acceptance test reads the published figures back from what the pipeline wrote (DuckDB rows and the
CSV files), not from the core.
"""

from __future__ import annotations

import csv

import dagster as dg
import duckdb
import pytest

from driftlab_dagster.core.evaluation import RESULT_COLUMNS
from driftlab_dagster.core.warehouse import MissingUpstream
from driftlab_dagster.definitions import defs
from driftlab_dagster.defs.partitions import scenario_day_partitions
from driftlab_dagster.defs.resources import default_resources
from driftlab_dagster_tests.published import check_published_figures


def _csv(path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_the_pipeline_reproduces_the_posts_deterministic_column(dagster_study):
    results = _csv(dagster_study.out / "results.csv")
    for r in results:
        r["step"] = int(r["step"])
        r["drifted"], r["hedged"] = r["drifted"] == "True", r["hedged"] == "True"
    costs = _csv(dagster_study.out / "costs.csv")
    for c in costs:
        c["event"], c["docs"] = int(c["event"]), int(c["docs"])
        c["estimated"] = c["estimated"] == "True"
        c["graph_only_accuracy"] = float(c["graph_only_accuracy"])
    check_published_figures(results, costs)


def test_results_csv_has_the_posts_columns_in_the_posts_order(dagster_study):
    header = (dagster_study.out / "results.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header.split(",")[:10] == RESULT_COLUMNS
    costs_header = (dagster_study.out / "costs.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
    assert costs_header[:7] == ["approach", "event", "docs", "input_tokens", "output_tokens", "graph_writes", "ms"]


def test_the_duckdb_file_holds_every_partition_and_the_versioned_graph(dagster_study):
    with duckdb.connect(str(dagster_study.database), read_only=True) as conn:
        per_partition = conn.execute("SELECT scenario, day, count(*) FROM answers GROUP BY ALL").fetchall()
        assert len(per_partition) == 20 and {n for _, _, n in per_partition} == {100}
        assert conn.execute("SELECT count(DISTINCT (scenario, day)) FROM pages").fetchone()[0] == 20
        # The stale graph still believes the old price on the last day, with the page version it read.
        rows = conn.execute("""SELECT object, source_doc, source_version FROM facts WHERE scenario = 'StaleGraph'
                               AND day = '2026-09-29' AND entity = 'Pro' AND predicate = 'price' ORDER BY ALL""").fetchall()
        assert {r[0] for r in rows} == {"49"} and all(r[2] == 1 for r in rows)
        # ... while its extraction log shows exactly which pages moved on: the 21 pages the repair re-reads.
        ahead = conn.execute("""SELECT count(*) FROM pages_ahead_of_graph WHERE scenario = 'StaleGraph'
                                AND day = '2026-09-29'""").fetchone()[0]
        assert ahead == 21
        # The rename left an alias in the Fresh graph.
        assert conn.execute("""SELECT alias FROM aliases WHERE scenario = 'Fresh' AND day = '2026-09-08'""").fetchall() == [
            ("Tessaly Track",)]


def test_every_partition_materialisation_is_recorded(dagster_study):
    instance = dagster_study.instance
    for key in ("pages", "fact_graph", "extraction_log", "answers"):
        records = instance.fetch_materializations(dg.AssetKey(key), limit=100).records
        assert {r.partition_key for r in records} == set(scenario_day_partitions.get_partition_keys())


def _table_dump(database) -> dict[str, list[tuple]]:
    with duckdb.connect(str(database), read_only=True) as conn:
        tables = ["pages", "entities", "aliases", "facts", "extraction_log", "answers"]
        dump = {t: conn.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in tables}
        dump["graph_maintenance"] = conn.execute(
            "SELECT * EXCLUDE (ms) FROM graph_maintenance ORDER BY ALL").fetchall()
    return dump


def test_rematerialising_a_partition_gives_identical_rows_and_touches_nothing_else(dagster_study, tmp_path):
    before = _table_dump(dagster_study.database)
    key = dg.MultiPartitionKey({"scenario": "PartialPages", "day": "2026-09-22"})
    result = dg.materialize(
        list(defs().assets), selection=["pages", "extraction_log", "fact_graph", "governed_graph", "answers"], partition_key=key,
        resources=default_resources(database=str(dagster_study.database), output_dir=str(tmp_path)),
        instance=dg.DagsterInstance.ephemeral(),
    )
    assert result.success
    assert _table_dump(dagster_study.database) == before


def test_a_partition_whose_inputs_are_missing_fails_clearly_and_writes_nothing(tmp_path):
    database = tmp_path / "empty.duckdb"
    key = dg.MultiPartitionKey({"scenario": "Fresh", "day": "2026-09-08"})
    resources = default_resources(database=str(database), output_dir=str(tmp_path))
    all_assets = list(defs().assets)
    dg.materialize(all_assets, selection=["world"], resources=resources, instance=dg.DagsterInstance.ephemeral())
    # In process, Dagster re-raises the asset's own exception.
    with pytest.raises(MissingUpstream, match="no pages for Fresh on 2026-09-08: materialise that `pages` partition"):
        dg.materialize(all_assets, selection=["answers"], partition_key=key, resources=resources,
                       instance=dg.DagsterInstance.ephemeral())
    with duckdb.connect(str(database), read_only=True) as conn:
        assert conn.execute("SELECT count(*) FROM answers").fetchone()[0] == 0
