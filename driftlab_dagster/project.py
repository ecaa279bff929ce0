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
