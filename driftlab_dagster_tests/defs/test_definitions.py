"""The asset graph as a reviewable snapshot: keys, groups, partitions and dependencies."""

from __future__ import annotations

import tomllib

import dagster as dg
import yaml

from driftlab_dagster.definitions import defs
from driftlab_dagster.project import PROJECT_ROOT


def _graph():
    return defs().resolve_asset_graph()


def test_the_asset_graph_reads_like_the_study():
    graph = _graph()
    groups = {key.to_user_string(): graph.get(key).group_name for key in graph.get_all_asset_keys()}
    assert groups == {
        "world": "world", "pages": "pages", "extraction_log": "graph", "fact_graph": "graph", "governed_graph": "graph",
        "answers": "evaluation", "maintenance_costs": "maintenance", "graph_repair": "maintenance",
        "accuracy_report": "reports", "cost_report": "reports",
    }
    deps = {key.to_user_string(): sorted(p.to_user_string() for p in graph.get(key).parent_keys)
            for key in graph.get_all_asset_keys()}
    assert deps == {
        "world": [], "pages": ["world"], "extraction_log": ["pages", "world"], "fact_graph": ["pages", "world"],
        "governed_graph": ["pages", "world"],
        "answers": ["extraction_log", "fact_graph", "governed_graph", "pages", "world"], "maintenance_costs": ["world"],
        "graph_repair": ["extraction_log", "fact_graph", "pages", "world"],
        "accuracy_report": ["answers"], "cost_report": ["graph_repair", "maintenance_costs"],
    }


def test_partitioned_assets_share_one_scenario_by_day_definition():
    from driftlab_dagster.defs.partitions import event_day_partitions, scenario_day_partitions

    graph = _graph()
    for name in ("pages", "extraction_log", "fact_graph", "governed_graph", "answers"):
        assert graph.get(dg.AssetKey(name)).partitions_def == scenario_day_partitions
    assert graph.get(dg.AssetKey("maintenance_costs")).partitions_def == event_day_partitions
    assert len(scenario_day_partitions.get_partition_keys()) == 20
    assert scenario_day_partitions.get_partition_keys()[1] == "2026-09-01|Fresh" or \
        "2026-09-01|Fresh" in scenario_day_partitions.get_partition_keys()


def test_every_asset_says_what_one_row_is():
    graph = _graph()
    for key in graph.get_all_asset_keys():
        assert graph.get(key).description, f"{key.to_user_string()} has no description"


def test_workspace_yaml_and_pyproject_name_the_same_code_location():
    workspace = yaml.safe_load((PROJECT_ROOT / "workspace.yaml").read_text())
    pyproject = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())
    module = workspace["load_from"][0]["python_module"]["module_name"]
    assert module == pyproject["tool"]["dg"]["project"]["root_module"] + ".definitions"
    assert workspace["load_from"][0]["python_module"]["location_name"] == \
        pyproject["tool"]["dg"]["project"]["code_location_name"]
