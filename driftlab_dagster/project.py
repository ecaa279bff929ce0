"""Where the project's files live. Paths are absolute, derived from this file, never from the cwd."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = PROJECT_ROOT / "data"
DEFAULT_WORLD = DATA_DIR / "worlds" / "tessaly_freight.yaml"
DEFAULT_DATABASE = DATA_DIR / "driftlab.duckdb"
DEFAULT_OUTPUT_DIR = DATA_DIR

# The one environment variable the project reads: which world file defines the partitions (the world's
# scenarios and checkpoint days *are* the partition keys, so they must be known when definitions load).
WORLD_ENV = "DRIFTLAB_WORLD"


def database_path() -> Path:
    """The DuckDB file the code location writes ($DRIFTLAB_DATABASE, else data/driftlab.duckdb)."""
    return Path(os.environ.get("DRIFTLAB_DATABASE") or DEFAULT_DATABASE)


def output_dir() -> Path:
    """Where the reports write results.csv, costs.csv and the plot ($DRIFTLAB_OUTPUT_DIR, else data/)."""
    return Path(os.environ.get("DRIFTLAB_OUTPUT_DIR") or DEFAULT_OUTPUT_DIR)


def world_path() -> Path:
    return Path(os.environ.get(WORLD_ENV) or DEFAULT_WORLD)


# Optional YAML file with the study's extractor, reader, retrieval and model settings for the code location
# (`dagster dev`, the nightly run). The extractor in it is the graph assets' code version, so editing the
# file and reloading the code location marks the graph stale.
STUDY_ENV = "DRIFTLAB_STUDY"


def study_settings_path() -> Path | None:
    value = os.environ.get(STUDY_ENV)
    return Path(value) if value else None
