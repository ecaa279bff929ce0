"""No hidden dependencies, no false alarms: after a full run nothing is stale; re-materialising one day's
pages marks exactly the partitions that read them; switching the extractor in the settings marks exactly
the graph's partitions (new code version); an edited world file marks the world.

Dagster 1.13 exposes stale status publicly only through GraphQL (the UI test reads it there); in process we
read it with dagster's own stale-status resolver, the same computation the UI shows.
"""

from __future__ import annotations

import dagster as dg
import pytest

from driftlab_dagster.defs import build_definitions
from driftlab_dagster.headless import execute_job, run_study_in_dagster
from driftlab_dagster.project import DEFAULT_WORLD
from driftlab_dagster_tests.conftest import config_for
from driftlab_dagster_tests.support.stale_report import stale_partitions

pytestmark = pytest.mark.dagster

W = "tessaly_freight"
DAYS = ["2026-09-01", "2026-09-08", "2026-09-15", "2026-09-22", "2026-09-29"]


def _stale(instance: dg.DagsterInstance, definitions: dg.Definitions) -> set[tuple[str, str | None, str]]:
    found = stale_partitions(instance, definitions)
    return {(asset.split("/")[-1], *entry.rsplit(":", 1)) for asset, entries in found.items() for entry in entries}


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


def test_rematerialising_one_days_pages_marks_exactly_its_readers_stale(own_study):
    config, instance = own_study
    definitions = build_definitions(config)
    execute_job(definitions.resolve_job_def(f"{W}__study"), instance, partition_key=f"{DAYS[1]}|Fresh",
                asset_selection=[dg.AssetKey([W, "pages"])])
    later_fresh = {f"{d}|Fresh" for d in DAYS[1:]}
    expected = {(asset, key, "DATA")
                for asset in ("fact_graph", "extraction_log", "governed_graph") for key in later_fresh}
    expected.add(("answers", f"{DAYS[1]}|Fresh", "DATA"))  # that day's answers read that day's pages
    assert _stale(instance, definitions) == expected


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
