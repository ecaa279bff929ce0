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


def world_path() -> Path:
    return Path(os.environ.get(WORLD_ENV) or DEFAULT_WORLD)
