"""The shipped settings file says what it claims: every value in driftlab.yaml is the default of its field,
so a user reading it learns the defaults, and a model run started from it uses the current extractor and
reader (a stale `prompt: few-shot-v1` there once made every model run use the old page-level prompt)."""

from __future__ import annotations

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
