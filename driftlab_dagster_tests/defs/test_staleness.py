"""No hidden dependencies: re-materialising one scenario's day-7 pages marks exactly the partitions that
read them as stale, and nothing else.

Dagster 1.13 exposes stale status publicly only through GraphQL; in process we read it with dagster's own
stale-status resolver (a test helper), the same computation the UI shows.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import dagster as dg

from driftlab_dagster.definitions import defs
from driftlab_dagster.defs.partitions import DAYS, SCENARIOS, scenario_day_partitions
from driftlab_dagster.defs.resources import default_resources
from driftlab_dagster.headless import run_study_in_dagster
from driftlab_dagster.project import PROJECT_ROOT
from driftlab_dagster_tests.support.stale_report import stale_partitions


def _stale_partitions(instance: dg.DagsterInstance, definitions: dg.Definitions) -> set[tuple[str, str | None]]:
    found = stale_partitions(instance, definitions)
    return {(asset, entry.rsplit(":", 1)[0]) for asset, entries in found.items() for entry in entries}


def test_rematerialising_one_days_pages_marks_exactly_its_readers_stale(tmp_path):
    instance = dg.DagsterInstance.ephemeral()
    run_study_in_dagster(tmp_path / "s.duckdb", tmp_path, instance=instance)
    definitions = defs()
    assert _stale_partitions(instance, definitions) == set()

    day7 = dg.MultiPartitionKey({"scenario": "Fresh", "day": DAYS[1]})
    dg.materialize(list(definitions.assets), selection=["pages"], partition_key=day7, instance=instance,
                   resources=default_resources(database=str(tmp_path / "s.duckdb"), output_dir=str(tmp_path)))

    later_fresh = {str(dg.MultiPartitionKey({"scenario": "Fresh", "day": d})) for d in DAYS[1:]}
    expected = {(asset, key) for asset in ("fact_graph", "extraction_log", "governed_graph") for key in later_fresh}
    expected.add(("answers", str(day7)))  # that day's answers read that day's pages
    assert _stale_partitions(instance, definitions) == expected
    # Sanity: the grid is the 4 scenarios x 5 days the world declares.
    assert len(scenario_day_partitions.get_partition_keys()) == len(SCENARIOS) * len(DAYS)


def test_switching_the_extractor_marks_every_graph_partition_stale_and_nothing_else(tmp_path):
    """The settings file names a model extractor; reloading the code location changes the graph assets'
    code version. Nothing is re-run, so no model is needed to see it."""
    home = tmp_path / "home"
    home.mkdir()
    instance = dg.DagsterInstance.local_temp(str(home))
    run_study_in_dagster(tmp_path / "s.duckdb", tmp_path, instance=instance)
    settings = tmp_path / "study.yaml"
    settings.write_text("extractor: model\nmodel: qwen2.5-coder-0.5b\napi: openai\n")
    env = {k: v for k, v in os.environ.items() if k not in ("DRIFTLAB_WORLD",)}
    env.update(DAGSTER_HOME=str(home), DRIFTLAB_STUDY=str(settings))
    done = subprocess.run([sys.executable, "-m", "driftlab_dagster_tests.support.stale_report"], env=env,
                          capture_output=True, text=True, cwd=PROJECT_ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    stale = json.loads(done.stdout.strip().splitlines()[-1])
    grid = set(scenario_day_partitions.get_partition_keys())
    for asset in ("fact_graph", "extraction_log", "governed_graph"):
        assert {e.rsplit(":", 1)[0] for e in stale[asset]} == grid
        assert {e.rsplit(":", 1)[1] for e in stale[asset]} == {"CODE"}
    # The comparison and the repair run the extractor too; pages and answers are one hop away (Dagster
    # propagates staleness one step), and they go stale once the graph is rebuilt.
    assert set(stale) == {"fact_graph", "extraction_log", "governed_graph", "maintenance_costs", "graph_repair"}
