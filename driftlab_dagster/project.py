"""Where the project's files live. Paths are absolute, derived from this file, never from the cwd."""

from __future__ import annotations

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = PROJECT_ROOT / "data"
DEFAULT_WORLD = DATA_DIR / "worlds" / "tessaly_freight.yaml"

# The code location `make dev` serves (workspace.yaml's location_name; a test keeps pyproject.toml's dg
# settings in agreement) and the repository name Dagster gives a module's Definitions. A headless run tagged
# with both is listed under its job in the UI, as a run the UI launched is.
CODE_LOCATION = "driftlab_dagster"
REPOSITORY_LABEL = f"__repository__@{CODE_LOCATION}"

# Dagster's switch for storing a step's materialisations of one asset in one batch (its environment variable
# DAGSTER_EVENT_BATCH_SIZE): the most events a batch may hold, more than any step's partitions number. Set for
# headless runs and for the services `make pg-up` starts; see headless.py.
EVENT_BATCH_SIZE = "10000"
