"""The asset graph as a reviewable snapshot (keys, groups, partitions, dependencies), and the factory that
builds it from one configuration object for the code location, the command and the tests alike."""

from __future__ import annotations

import os
import tomllib

import dagster as dg
import pytest
import yaml

from driftlab_dagster.config import DriftlabConfig
from driftlab_dagster.core.world.loader import load_world
from driftlab_dagster.defs import build_definitions, study_contexts
from driftlab_dagster.project import CODE_LOCATION, DEFAULT_WORLD, PROJECT_ROOT
from driftlab_dagster_tests.conftest import SECOND_WORLD, config_for

pytestmark = pytest.mark.dagster


def _graph(config: DriftlabConfig | None = None):
    return build_definitions(config or DriftlabConfig()).resolve_asset_graph()


def test_the_asset_graph_reads_like_the_study():
    graph = _graph()
    groups = {key.to_user_string(): graph.get(key).group_name for key in graph.get_all_asset_keys()}
    w = "tessaly_freight/"
    assert groups == {
        w + "world": "world", w + "pages": "pages", w + "extraction_log": "graph", w + "fact_graph": "graph",
        w + "governed_graph": "graph", w + "answers": "evaluation", w + "maintenance_costs": "maintenance",
        w + "graph_repair": "maintenance", w + "accuracy_report": "reports", w + "cost_report": "reports",
    }
    deps = {key.path[-1]: sorted(p.path[-1] for p in graph.get(key).parent_keys) for key in graph.get_all_asset_keys()}
    assert deps == {
        "world": [], "pages": ["world"], "extraction_log": ["pages", "world"], "fact_graph": ["pages", "world"],
        "governed_graph": ["pages", "world"],
        "answers": ["extraction_log", "fact_graph", "governed_graph", "pages", "world"], "maintenance_costs": ["world"],
        "graph_repair": ["extraction_log", "fact_graph", "pages", "world"],
        "accuracy_report": ["answers"], "cost_report": ["graph_repair", "maintenance_costs"],
    }


def test_each_worlds_partitioned_assets_share_its_one_scenario_by_day_definition():
    definitions = build_definitions(DriftlabConfig(worlds=[DEFAULT_WORLD, SECOND_WORLD]))
    graph = definitions.resolve_asset_graph()
    for ctx in study_contexts(DriftlabConfig(worlds=[DEFAULT_WORLD, SECOND_WORLD])):
        by_name = {k.path[-1]: graph.get(k) for k in graph.get_all_asset_keys() if k.path[0] == ctx.world.id}
        shared = {by_name[n].partitions_def
                  for n in ("pages", "extraction_log", "fact_graph", "governed_graph", "answers")}
        assert len(shared) == 1
        [partitions] = shared
        assert partitions.get_partition_keys() == ctx.partitions.scenario_day.get_partition_keys()
        assert len(partitions.get_partition_keys()) == len(ctx.world.scenario_names) * len(ctx.world.day_keys)
        assert by_name["maintenance_costs"].partitions_def.get_partition_keys() == ctx.world.event_day_keys
    # Two worlds, two sets of assets, two sets of jobs, nothing shared but the resources.
    assert {k.path[0] for k in graph.get_all_asset_keys()} == {"tessaly_freight", "quillfeather_health"}
    assert {j.name for j in definitions.jobs} >= {"tessaly_freight__study", "quillfeather_health__study"}


def test_the_graphs_code_version_is_the_extractor_the_settings_name():
    def versions(config: DriftlabConfig) -> dict[str, str | None]:
        graph = _graph(config)
        return {k.path[-1]: graph.get(k).code_version for k in graph.get_all_asset_keys()}

    regex = versions(DriftlabConfig())
    model = versions(DriftlabConfig().override(study={"extractor": "model", "model": "m1"}))
    assert regex["fact_graph"] == "regex"
    assert model["fact_graph"].startswith("model:m1:relation-v1:")
    assert {n for n in regex if regex[n] != model[n]} == {"extraction_log", "fact_graph", "governed_graph",
                                                         "maintenance_costs", "graph_repair"}
    assert regex["world"] == load_world(DEFAULT_WORLD).version  # the world file's content is the world's version


def test_settings_only_the_answers_read_leave_the_maintenance_assets_current():
    """Retrieval and Governed's reading of the pages change the answers' code version only: the maintenance
    costs and the repair score their graphs with the reader alone. Another reader changes all three."""
    def versions(**study) -> dict[str, str | None]:
        graph = _graph(DriftlabConfig().override(study=study) if study else DriftlabConfig())
        return {k.path[-1]: graph.get(k).code_version for k in graph.get_all_asset_keys()}

    base = versions()
    for study in ({"retrieval": "embed"}, {"governed_when_silent": "pages"}):
        changed = versions(**study)
        assert {n for n in base if base[n] != changed[n]} == {"answers"}, study
    by_model = versions(reader="model", model="m1")
    assert {n for n in base if base[n] != by_model[n]} == {"answers", "maintenance_costs", "graph_repair"}


def test_building_the_definitions_reads_the_settings_and_writes_no_environment(tmp_path, monkeypatch):
    settings = tmp_path / "driftlab.yaml"
    settings.write_text("study:\n  extractor: model\n  model: m2\n")
    monkeypatch.setenv("DRIFTLAB_CONFIG", str(settings))
    before = dict(os.environ)
    from driftlab_dagster.definitions import defs

    graph = defs().resolve_asset_graph()
    assert graph.get(dg.AssetKey(["tessaly_freight", "fact_graph"])).code_version.startswith("model:m2:")
    assert dict(os.environ) == before


def test_every_asset_says_what_one_row_is():
    graph = _graph()
    for key in graph.get_all_asset_keys():
        assert graph.get(key).description, f"{key.to_user_string()} has no description"


def test_a_world_without_a_stale_graph_scenario_gets_no_repair_asset(tmp_path):
    text = DEFAULT_WORLD.read_text().replace("  StaleGraph: {pages: all, graph: none}\n", "")
    world = tmp_path / "no_stale_graph.yaml"
    world.write_text(text)
    graph = _graph(config_for(tmp_path, [world]))
    assert "graph_repair" not in {k.path[-1] for k in graph.get_all_asset_keys()}


def test_workspace_yaml_and_pyproject_name_the_same_code_location():
    workspace = yaml.safe_load((PROJECT_ROOT / "workspace.yaml").read_text())
    pyproject = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())
    module = workspace["load_from"][0]["python_module"]["module_name"]
    assert module == pyproject["tool"]["dg"]["project"]["root_module"] + ".definitions"
    assert workspace["load_from"][0]["python_module"]["location_name"] == \
        pyproject["tool"]["dg"]["project"]["code_location_name"] == CODE_LOCATION



def _model_config_fields(config: DriftlabConfig) -> set[str]:
    """What the repair job's launchpad offers to configure for the model resource."""
    job = build_definitions(config).resolve_job_def("tessaly_freight__repair_graph")
    model = job.run_config_schema.config_type.fields["resources"].config_type.fields["model"].config_type
    return set(model.fields["config"].config_type.fields)


def test_the_launchpad_offers_a_model_only_when_the_settings_use_one():
    assert _model_config_fields(DriftlabConfig()) == set()  # regex extractor, deterministic reader, BM25
    assert {"model", "url"} <= _model_config_fields(DriftlabConfig().override(study={"extractor": "model"}))
