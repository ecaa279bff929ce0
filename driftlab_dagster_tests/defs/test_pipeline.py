"""The study through Dagster: real runs of the asset graph into a real DuckDB file.

The acceptance test reads the published figures back from what the pipeline wrote (DuckDB rows and the
CSV files), not from the core; the state tests compare what the Dagster instance says about each
partition with that partition's own rows.
"""

from __future__ import annotations

import csv

import dagster as dg
import duckdb
import pytest

from driftlab_dagster.core.evaluation import RESULT_COLUMNS
from driftlab_dagster.core.reports import costs_csv, results_csv, sort_costs
from driftlab_dagster.core.study import page_history, run_study
from driftlab_dagster.core.warehouse import MissingUpstream
from driftlab_dagster.defs import build_definitions, study_contexts
from driftlab_dagster.headless import execute_job
from driftlab_dagster_tests.conftest import config_for
from driftlab_dagster_tests.published import check_published_figures

pytestmark = pytest.mark.dagster

WORLD = "tessaly_freight"
CHECKS = {"pages_changed_since_read", "facts_from_superseded_pages", "entity_spelling_splits"}


def _csv(path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _key(name: str) -> dg.AssetKey:
    return dg.AssetKey([WORLD, name])


def _latest(instance: dg.DagsterInstance, name: str) -> dict[str, dg.AssetMaterialization]:
    """Partition key -> the latest materialisation of that partition."""
    latest: dict[str, dg.AssetMaterialization] = {}
    for record in instance.fetch_materializations(_key(name), limit=1000).records:  # newest first
        latest.setdefault(record.partition_key, record.asset_materialization)
    return latest


def _check_evaluations(instance: dg.DagsterInstance,
                       run_ids: list[str]) -> dict[tuple[str, str], dg.AssetCheckEvaluation]:
    """(check name, partition) -> its latest evaluation in these runs."""
    found = {}
    for run_id in run_ids:
        for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION):
            evaluation = entry.asset_check_evaluation
            if evaluation is not None and evaluation.asset_key == _key("fact_graph"):
                found[(evaluation.check_name, evaluation.partition)] = evaluation
    return found


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


def test_the_pipelines_results_equal_the_in_memory_oracle_byte_for_byte(dagster_study, world):
    assert (dagster_study.out / "results.csv").read_text(encoding="utf-8") == results_csv(run_study(world).results)


def test_results_csv_has_the_posts_columns_in_the_posts_order(dagster_study):
    header = (dagster_study.out / "results.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header.split(",")[:10] == RESULT_COLUMNS
    costs_header = (dagster_study.out / "costs.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
    assert costs_header[:6] == ["approach", "event", "docs", "input_tokens", "output_tokens", "graph_writes"]
    assert "ms" not in costs_header  # measured, so it lives in timings.csv


def test_the_costs_equal_the_in_memory_oracle_byte_for_byte_and_the_timings_sit_beside_them(dagster_study, world):
    core = run_study(world)
    assert (dagster_study.out / "costs.csv").read_text(encoding="utf-8") == costs_csv(core.costs)
    timings = _csv(dagster_study.out / "timings.csv")
    assert [(t["approach"], int(t["event"])) for t in timings] == \
           [(c["approach"], c["event"]) for c in sort_costs(core.costs)]
    assert all(int(t["ms"]) >= 0 for t in timings)
    with duckdb.connect(str(dagster_study.database), read_only=True) as conn:
        # One timing per pass per run: the graph partitions' maintenance, the comparison and the repair.
        logged = dict(conn.execute("""SELECT cost_table, count(*) FROM pass_timings
                                      WHERE run_id IN (SELECT unnest(?)) GROUP BY ALL""",
                                   [dagster_study.run_ids]).fetchall())
        maintained = conn.execute("SELECT count(*) FROM graph_maintenance").fetchone()[0]
    assert logged == {"graph_maintenance": maintained, "maintenance_costs": len(core.costs) - 2, "repair_costs": 2}


def test_the_duckdb_file_holds_every_partition_and_the_versioned_graph(dagster_study):
    with duckdb.connect(str(dagster_study.database), read_only=True) as conn:
        per_partition = conn.execute("SELECT scenario, day, count(*) FROM answers GROUP BY ALL").fetchall()
        assert len(per_partition) == 20 and {n for _, _, n in per_partition} == {100}
        assert conn.execute("SELECT DISTINCT world FROM answers").fetchall() == [(WORLD,)]
        # The stale graph still believes the old price on the last day, with the page version it read.
        rows = conn.execute("""SELECT object, source_doc, source_version FROM facts WHERE scenario = 'StaleGraph'
                               AND day = '2026-09-29' AND entity = 'Pro' AND predicate = 'price' ORDER BY ALL"""
                            ).fetchall()
        assert {r[0] for r in rows} == {"49"} and all(r[2] == 1 for r in rows)
        # ... while its extraction log shows exactly which pages moved on: the 21 pages the repair re-reads.
        ahead = conn.execute("""SELECT count(*) FROM pages_ahead_of_graph WHERE scenario = 'StaleGraph'
                                AND day = '2026-09-29'""").fetchone()[0]
        assert ahead == 21
        # The rename left an alias in the Fresh graph.
        assert conn.execute("""SELECT alias FROM aliases """
                            """WHERE scenario = 'Fresh' AND day = '2026-09-08'""").fetchall() == [("Tessaly Track",)]


def test_each_days_pages_flag_exactly_the_pages_that_changed_that_day(dagster_study, world):
    """Day 0 flags every page (the initial load); a later day only the pages the scenario's events rewrote."""
    pages = _latest(dagster_study.instance, "pages")
    with duckdb.connect(str(dagster_study.database), read_only=True) as conn:
        for scenario in world.scenario_names:
            history = page_history(world, scenario, len(world.checkpoints) - 1)
            for checkpoint in world.checkpoints:
                day = checkpoint.key
                flagged = {pid for (pid,) in conn.execute(
                    "SELECT page_id FROM pages WHERE scenario = ? AND day = ? AND changed", [scenario, day]).fetchall()}
                stored, changed = history[checkpoint.step]
                assert flagged == set(changed), (scenario, day)
                assert (flagged == {p.id for p in stored}) == (checkpoint.step == 0), (scenario, day)
                assert (pages[f"{day}|{scenario}"].metadata["pages_changed"].value
                        == (len(changed) if checkpoint.step else 0))


def test_every_partitions_materialisation_carries_its_own_numbers(dagster_study):
    instance = dagster_study.instance
    with duckdb.connect(str(dagster_study.database), read_only=True) as conn:
        def count(table: str, key: str) -> int:
            day, scenario = key.split("|")
            return conn.execute(f"SELECT count(*) FROM {table} WHERE world = ? AND scenario = ? AND day = ?",
                                [WORLD, scenario, day]).fetchone()[0]

        def read(key: str) -> int:
            day, scenario = key.split("|")
            found = conn.execute("SELECT docs FROM graph_maintenance WHERE world = ? AND scenario = ? AND day = ?",
                                 [WORLD, scenario, day]).fetchone()
            return found[0] if found else 0

        for asset, table in (("pages", "pages"), ("fact_graph", "facts"), ("extraction_log", "extraction_log"),
                             ("governed_graph", "governed_facts"), ("answers", "answers")):
            latest = _latest(instance, asset)
            assert len(latest) == 20, asset
            for key, materialization in latest.items():
                assert materialization.metadata["dagster/row_count"].value == count(table, key), (asset, key)
        graph = _latest(instance, "fact_graph")
        assert {k: m.metadata["pages_read"].value for k, m in graph.items()} == {k: read(k) for k in graph}
    # Not one number for all: day 0 read every page, the unmaintained graph read none afterwards.
    assert graph["2026-09-01|Fresh"].metadata["pages_read"].value == 40
    assert graph["2026-09-29|StaleGraph"].metadata["maintenance"].value == "none"


def test_every_partition_has_its_three_checks_evaluated_from_its_own_rows(dagster_study):
    evaluations = _check_evaluations(dagster_study.instance, dagster_study.run_ids)
    partitions = set(_latest(dagster_study.instance, "fact_graph"))
    assert set(evaluations) == {(c, p) for c in CHECKS for p in partitions}
    with duckdb.connect(str(dagster_study.database), read_only=True) as conn:
        for partition in partitions:
            day, scenario = partition.split("|")
            ahead = conn.execute("SELECT count(*) FROM pages_ahead_of_graph "
                                 "WHERE world = ? AND scenario = ? AND day = ?",
                                 [WORLD, scenario, day]).fetchone()[0]
            evaluation = evaluations[("pages_changed_since_read", partition)]
            assert evaluation.metadata["count"].value == ahead
            assert evaluation.passed == (ahead == 0)
            assert evaluation.severity == dg.AssetCheckSeverity.WARN
    behind = [evaluations[("pages_changed_since_read", f"{d}|StaleGraph")].metadata["count"].value
              for d in ("2026-09-01", "2026-09-08", "2026-09-15", "2026-09-22", "2026-09-29")]
    assert behind == [0, 8, 12, 14, 21]


def _table_dump(database) -> dict[str, list[tuple]]:
    with duckdb.connect(str(database), read_only=True) as conn:
        tables = ["pages", "entities", "aliases", "facts", "extraction_log", "graph_maintenance", "governed_facts",
                  "answers"]
        return {t: conn.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in tables}


def test_a_one_partition_run_gives_the_same_rows_and_numbers_as_the_ranged_run(dagster_study):
    """The UI's route (one partition per run) and `make run`'s (one run over many) tell the same truth."""
    before = _table_dump(dagster_study.database)
    ranged = _latest(dagster_study.instance, "fact_graph")["2026-09-22|PartialPages"].metadata
    definitions = build_definitions(dagster_study.config)
    [ctx] = study_contexts(dagster_study.config)
    job = definitions.resolve_job_def(f"{WORLD}__study")
    instance = dg.DagsterInstance.ephemeral()
    result = job.execute_in_process(instance=instance,
                                    partition_key=str(ctx.partitions.key("PartialPages", "2026-09-22")),
                                    asset_selection=[_key(n) for n in ("pages", "extraction_log", "fact_graph",
                                                                       "governed_graph", "answers")])
    assert result.success
    assert _table_dump(dagster_study.database) == before
    single = _latest(instance, "fact_graph")["2026-09-22|PartialPages"].metadata
    assert {k: v.value for k, v in single.items()} == {k: v.value for k, v in ranged.items()}


def test_re_materialising_an_event_day_rewrites_the_same_cost_rows_and_logs_a_new_timing(dagster_study, world):
    day = world.checkpoints[2].key
    with duckdb.connect(str(dagster_study.database), read_only=True) as conn:
        before = conn.execute("SELECT * FROM maintenance_costs ORDER BY ALL").fetchall()
    job = build_definitions(dagster_study.config).resolve_job_def(f"{WORLD}__maintenance")
    result = execute_job(job, dg.DagsterInstance.ephemeral(), partition_key=day,
                         asset_selection=[_key("maintenance_costs")])
    with duckdb.connect(str(dagster_study.database), read_only=True) as conn:
        assert conn.execute("SELECT * FROM maintenance_costs ORDER BY ALL").fetchall() == before
        logged = conn.execute("SELECT cost_table, day::VARCHAR, count(*) FROM pass_timings "
                              "WHERE run_id = ? GROUP BY ALL",
                              [result.run_id]).fetchall()
    assert logged == [("maintenance_costs", day, 3)]  # patch pages, patch from record, full re-extract


def test_a_partition_whose_inputs_are_missing_fails_clearly_and_writes_nothing(tmp_path):
    config = config_for(tmp_path)
    definitions = build_definitions(config)
    job = definitions.resolve_job_def(f"{WORLD}__study")
    # The headless runner hands the asset's own exception to the command, which prints its one line.
    with pytest.raises(MissingUpstream, match="no pages for Fresh on 2026-09-08: materialise that `pages` partition"):
        execute_job(job, dg.DagsterInstance.ephemeral(), partition_key="2026-09-08|Fresh",
                    asset_selection=[_key("answers")])
    with duckdb.connect(str(config.database), read_only=True) as conn:
        assert conn.execute("SELECT count(*) FROM answers").fetchone()[0] == 0


def test_the_cost_report_plots_this_worlds_costs_per_event(dagster_study):
    """The plot in the UI is the file on disk, drawn from the costs the run stored (not from anything else)."""
    import base64

    from driftlab_dagster.core.reports import cost_plot

    report = dagster_study.instance.fetch_materializations(_key("cost_report"), limit=1).records[0]
    shown = report.asset_materialization.metadata["plot"].value
    png = base64.b64decode(shown.split("base64,", 1)[1].rstrip(")"))
    assert png.startswith(b"\x89PNG") and png == (dagster_study.out / "costs.png").read_bytes()
    costs = _csv(dagster_study.out / "costs.csv")
    assert cost_plot(costs) == png  # the same costs draw the same bytes
    costs[0]["docs"] = str(int(costs[0]["docs"]) * 10)
    assert cost_plot(costs) != png


def test_a_run_says_nothing_about_missing_check_outputs(dagster_study):
    """Every check evaluation is recorded per partition, so no step may log that it left its checks out."""
    messages = [entry.user_message or (entry.dagster_event.message if entry.dagster_event else "") or ""
                for run_id in dagster_study.run_ids for entry in dagster_study.instance.all_logs(run_id)]
    assert messages, "the runs logged nothing at all"
    assert [m for m in messages if "did not yield or return expected outputs" in m] == []


def test_every_metadata_key_a_run_shows_is_described_on_its_asset_or_check(dagster_study):
    """The UI shows an asset's description above its metadata: each key a run emitted must be explained there
    (and each check evaluation's keys in the check's description)."""
    graph = build_definitions(dagster_study.config).resolve_asset_graph()
    undescribed = []
    for key in graph.get_all_asset_keys():
        description = graph.get(key).description or ""
        records = dagster_study.instance.fetch_materializations(key, limit=1000).records
        assert records, f"{key.to_user_string()} was never materialised: the test would check nothing"
        emitted = {k for r in records for k in r.asset_materialization.metadata}
        undescribed += [f"{key.to_user_string()}: {k}" for k in sorted(emitted) if f"`{k}`:" not in description]
    evaluations = _check_evaluations(dagster_study.instance, dagster_study.run_ids)
    assert evaluations
    for (name, _), evaluation in evaluations.items():
        description = graph.get_check_spec(dg.AssetCheckKey(evaluation.asset_key, name)).description or ""
        undescribed += [f"check {name}: {k}" for k in evaluation.metadata if f"`{k}`" not in description]
    assert undescribed == []


def test_replayed_from_says_how_each_partitions_graph_came_to_be(dagster_study):
    graph = _latest(dagster_study.instance, "fact_graph")
    said = {k: m.metadata["replayed_from"].value for k, m in graph.items()}
    assert said["2026-09-01|Fresh"] == "2026-09-01: the initial extraction (this day)"
    assert said["2026-09-22|Fresh"] == ("2026-09-01 (the initial extraction), then 3 events, each maintained by "
                                        "patch changed pages")
    assert said["2026-09-29|StaleGraph"] == ("2026-09-01 (the initial extraction), then 4 events, none of them "
                                             "maintained")
    # Only the first day's graphs are the initial extraction and nothing more.
    assert {k for k, v in said.items() if v.endswith("(this day)")} == {k for k in said if k.startswith("2026-09-01")}


def test_the_cost_tables_in_the_ui_show_no_placeholder_event_and_explain_their_milliseconds(dagster_study):
    repair = _latest(dagster_study.instance, "graph_repair")[None].metadata["costs"].value
    header = repair.splitlines()[0]
    assert "Event" not in header and "ms" not in header.split(" | ") and "99" not in repair
    day = _latest(dagster_study.instance, "maintenance_costs")["2026-09-08"].metadata["costs"].value
    assert "ms" not in day.splitlines()[0].split(" | ")
    report = _latest(dagster_study.instance, "cost_report")[None].metadata["costs"].value
    assert "| repair |" in report and "| 99 |" not in report
    assert "wall-clock time of the pass" in report
