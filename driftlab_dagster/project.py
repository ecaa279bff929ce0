"""Where the project's files live. Paths are absolute, derived from this file, never from the cwd."""

from __future__ import annotations

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DATA_DIR = PROJECT_ROOT / "data"
DEFAULT_WORLD = DATA_DIR / "worlds" / "tessaly_freight.yaml"
