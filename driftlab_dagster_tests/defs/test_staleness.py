"""No hidden dependencies, no false alarms: after a full run nothing is stale; a run that rewrites identical
rows (one day's pages, or a backfill of a whole scenario) leaves everything in sync; changed pages mark the
graphs that read them; switching the extractor in the settings marks exactly the graph's partitions (new code
version); an edited world file marks the world.

Dagster 1.13 exposes stale status publicly only through GraphQL (the UI test reads it there); in process we
read it with dagster's own stale-status resolver, the same computation the UI shows.
"""

from __future__ import annotations

import dagster as dg
import pytest

from driftlab_dagster.core.world.loader import load_world
from driftlab_dagster.defs import build_definitions, study_contexts
from driftlab_dagster.defs.partitions import study_partitions
from driftlab_dagster.headless import execute_job, run_study_in_dagster
from driftlab_dagster.project import DEFAULT_WORLD
from driftlab_dagster_tests.conftest import config_for
from driftlab_dagster_tests.support.stale_report import dependencies_behind, stale_partitions

pytestmark = pytest.mark.dagster

W = "tessaly_freight"
DAYS = ["2026-09-01", "2026-09-08", "2026-09-15", "2026-09-22", "2026-09-29"]


def _stale(instance: dg.DagsterInstance, definitions: dg.Definitions) -> set[tuple[str, str | None, str]]:
    found = stale_partitions(instance, definitions)
    return {(asset.split("/")[-1], *entry.rsplit(":", 1)) for asset, entries in found.items() for entry in entries}


def build_partitions_tags(config, world_file) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """The tags of one run over every partition of that world file."""
    return study_partitions(load_world(world_file)).range_tags()


def _run_study(folder):  # type: ignore[no-untyped-def]
    config = config_for(folder)
    instance = dg.DagsterInstance.ephemeral()
    run_study_in_dagster(config, instance=instance)
    return config, instance


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """One finished study, which these tests only read (they build other definitions over it)."""
    return _run_study(tmp_path_factory.mktemp("finished"))


@pytest.fixture
def own_study(tmp_path):
    """A finished study of a test's own, for a test that materialises more into it."""
    return _run_study(tmp_path)


def test_after_a_full_run_nothing_is_stale(finished):
    config, instance = finished
    assert _stale(instance, build_definitions(config)) == set()


def test_a_backfill_that_rewrites_identical_rows_leaves_every_asset_in_sync(own_study):
    """What a UI backfill of one scenario does (pages, graphs, answers of StaleGraph on every day, one run):
    the rows come out identical, so nothing downstream, the repair and the reports included, is unsynced."""
    config, instance = own_study
    definitions = build_definitions(config)
    [ctx] = study_contexts(config)
    execute_job(definitions.resolve_job_def(f"{W}__study"), instance,
                tags=ctx.partitions.range_tags(["StaleGraph"]),
                asset_selection=[dg.AssetKey([W, n]) for n in ("pages", "extraction_log", "fact_graph",
                                                                "governed_graph", "answers")])
    assert _stale(instance, definitions) == set()


def test_rewriting_one_days_identical_pages_marks_nothing_stale(own_study):
    config, instance = own_study
    definitions = build_definitions(config)
    execute_job(definitions.resolve_job_def(f"{W}__study"), instance, partition_key=f"{DAYS[1]}|Fresh",
                asset_selection=[dg.AssetKey([W, "pages"])])
    assert _stale(instance, definitions) == set()


def test_changed_pages_mark_the_graphs_that_read_them_stale(own_study, tmp_path):
    """An edited world file changes the pages: once the world and the pages are materialised again, every
    graph partition names the pages (not only the world) among the inputs it is behind."""
    config, instance = own_study
    edited = tmp_path / "edited.yaml"
    edited.write_text(DEFAULT_WORLD.read_text().replace("pro_price: 59", "pro_price: 69"))
    definitions = build_definitions(config.override(worlds=[edited]))
    execute_job(definitions.resolve_job_def(f"{W}__study"), instance, tags=build_partitions_tags(config, edited),
                asset_selection=[dg.AssetKey([W, "world"]), dg.AssetKey([W, "pages"])])
    behind = dependencies_behind(instance, definitions, dg.AssetKey([W, "fact_graph"]))
    grid = {f"{d}|{s}" for d in DAYS for s in ("Fresh", "StalePages", "StaleGraph", "PartialPages")}
    assert {k for k, deps in behind.items() if f"{W}/pages" in deps} == grid


def test_switching_the_extractor_marks_every_graph_partition_stale_and_nothing_else(finished):
    config, instance = finished
    model = build_definitions(config.override(study={"extractor": "model", "model": "qwen2.5-coder-0.5b"}))
    stale = _stale(instance, model)
    grid = {f"{d}|{s}" for d in DAYS for s in ("Fresh", "StalePages", "StaleGraph", "PartialPages")}
    for asset in ("fact_graph", "extraction_log", "governed_graph"):
        assert {(k, c) for a, k, c in stale if a == asset} == {(k, "CODE") for k in grid}
    # The comparison and the repair run the extractor too; answers are one hop away (Dagster propagates
    # staleness one step), and they go stale once the graph is rebuilt.
    assert {a for a, _, _ in stale} == {"fact_graph", "extraction_log", "governed_graph", "maintenance_costs",
                                        "graph_repair"}


def test_an_edited_world_file_shows_as_a_stale_world(finished, tmp_path):
    config, instance = finished
    edited = tmp_path / "edited.yaml"
    edited.write_text(DEFAULT_WORLD.read_text().replace("pro_price: 59", "pro_price: 69"))
    stale = _stale(instance, build_definitions(config.override(worlds=[edited])))
    assert stale == {("world", "None", "CODE")}
