"""The shipped settings file says what it claims: every value in driftlab.yaml is the default of its field,
so a user reading it learns the defaults, and a model run started from it uses the current extractor and
reader (a stale `prompt: few-shot-v1` there once made every model run use the old page-level prompt). Settings
that cannot work together are refused in one line before anything runs."""

from __future__ import annotations

import pytest
import yaml

from driftlab_dagster.config import DEFAULT_CONFIG_FILE, DriftlabConfig, StudySettings


def test_the_shipped_settings_file_holds_exactly_the_defaults():
    raw = yaml.safe_load(DEFAULT_CONFIG_FILE.read_text(encoding="utf-8"))
    defaults = StudySettings()
    assert set(raw["study"]) <= set(StudySettings.model_fields)
    for field, value in raw["study"].items():
        assert value == getattr(defaults, field), f"driftlab.yaml study.{field}: {value!r} is not the default"
    loaded, built_in = DriftlabConfig.load(DEFAULT_CONFIG_FILE, environ={}), DriftlabConfig()
    for field in raw:
        if field != "study":
            assert getattr(loaded, field) == getattr(built_in, field), f"driftlab.yaml {field} is not the default"


def test_api_replay_without_a_replay_file_says_the_flag_is_required(capsys, tmp_path, monkeypatch):
    """Issue 21, item 17: it said "cannot read the replay file . (IsADirectoryError)"."""
    from driftlab_dagster import cli
    from driftlab_dagster.core.clients import ModelServerDown
    from driftlab_dagster.core.replay import ReplayClient

    monkeypatch.setattr(cli, "pace_for_batch", lambda: None)  # the test process keeps its own collector pace
    for name in ("DRIFTLAB_WORLD", "DRIFTLAB_CONFIG"):
        monkeypatch.delenv(name, raising=False)

    code = cli.main(["run", "--reader", "model", "--api", "replay", "--database", str(tmp_path / "d.duckdb"),
                     "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "--api replay needs --replay-file" in err and "IsADirectoryError" not in err
    assert not (tmp_path / "d.duckdb").exists()
    with pytest.raises(ModelServerDown, match="needs --replay-file"):  # the resource's route, for a file left empty
        ReplayClient.from_file("", "m")
