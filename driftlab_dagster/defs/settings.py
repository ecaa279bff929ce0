"""The study settings this code location runs with, read once when definitions load.

Defaults: regex extractor, deterministic reader, BM25 (no model). Point $DRIFTLAB_STUDY at a YAML file to
choose others, for example:

    extractor: model
    api: openai
    url: http://127.0.0.1:1234
    model: qwen2.5-7b-instruct-1m
"""

from __future__ import annotations

import yaml

from driftlab_dagster.core.session import StudyConfig
from driftlab_dagster.defs.partitions import WORLD
from driftlab_dagster.project import study_settings_path


def _load() -> StudyConfig:
    path = study_settings_path()
    if path is None:
        return StudyConfig()
    values = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return StudyConfig.from_mapping(values, str(path))


STUDY = _load()
EXTRACTOR_VERSION = STUDY.extractor_id(WORLD)
READER_VERSION = STUDY.reader_id()
