"""The one configuration object: which worlds, where the warehouse is, and how the knowledge layer is built.

Everything that decides what a run computes lives in `DriftlabConfig`, read once from the project's
settings file (`driftlab.yaml` at the project root, or the file `$DRIFTLAB_CONFIG` names), with
`$DRIFTLAB_WORLD` as a shortcut for a one-world study. The code location, the headless command and the
tests all build their Dagster definitions from such an object with the same factory
(`driftlab_dagster.defs.build_definitions`), and the command's flags are derived from these fields
(cli.py), so there is exactly one place where a choice is spelled. How the knowledge layer is built is the
core's own `StudySettings` (core/settings.py), carried here as `study`.

This module never imports dagster, nor the command line.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from driftlab_dagster.core.errors import UserError
from driftlab_dagster.core.settings import StudySettings
from driftlab_dagster.project import DATA_DIR, DEFAULT_WORLD, PROJECT_ROOT

CONFIG_ENV = "DRIFTLAB_CONFIG"  # a settings file other than <project>/driftlab.yaml
WORLD_ENV = "DRIFTLAB_WORLD"  # one world file instead of the settings file's list
DEFAULT_CONFIG_FILE = PROJECT_ROOT / "driftlab.yaml"


class ConfigError(UserError, ValueError):
    """A settings file or a flag that cannot be used. The message is one line, written for the person."""


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DriftlabConfig(_Frozen):
    """The whole choice a run is made of. Relative paths in a settings file are relative to that file."""

    worlds: list[Path] = Field(default_factory=lambda: [DEFAULT_WORLD], min_length=1,
                               description="world files to study; each is its own set of assets")
    database: Path = Field(DATA_DIR / "driftlab.duckdb", description="the DuckDB file every world writes")
    output_dir: Path = Field(DATA_DIR, description="where reports write <world id>/results.csv, costs.csv, "
                                                   "costs.png and accuracy.png")
    lock_timeout: float = Field(10.0, ge=0, le=3600,
                                description="seconds to wait for another process holding the DuckDB file")
    pool_wait: float = Field(60.0, ge=0, le=86400,
                             description="seconds a headless run waits for another live run holding the duckdb "
                                         "pool before it stops")
    nightly_cron: str = Field("0 2 * * *", description="when the nightly full run starts (cron, UTC)")
    max_failed_share: float = Field(0.02, ge=0, le=1,
                                    description="a run whose model calls failed or came back unusable more often "
                                                "than this share exits with status 1 (its tables are still written)")
    executor: Literal["in_process", "multiprocess"] = Field(
        "in_process", description="how a launched run executes its steps: in_process (one process: Dagster's start-up "
                                  "paid once, one DuckDB writer) or multiprocess (a process per step; the duckdb "
                                  "pool still admits one writer at a time; see deploy/README.md)")
    study: StudySettings = Field(default_factory=StudySettings)

    @field_validator("nightly_cron")
    @classmethod
    def _five_fields(cls, value: str) -> str:
        if len(value.split()) != 5:
            raise ValueError(f"{value!r} is not a five-field cron string such as '0 2 * * *'")
        return value

    # ------------------------------------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | Path | None = None, environ: Mapping[str, str] | None = None) -> DriftlabConfig:
        """The settings file (if any) plus `$DRIFTLAB_WORLD`. Reads the environment, never writes it."""
        environ = os.environ if environ is None else environ
        file = Path(path) if path else Path(environ[CONFIG_ENV]) if environ.get(CONFIG_ENV) else DEFAULT_CONFIG_FILE
        values: dict[str, Any] = {}
        if path or environ.get(CONFIG_ENV) or file.exists():
            values = _read_settings(file)
        config = _validate(values, str(file) if values else "settings")
        if environ.get(WORLD_ENV):
            config = config.override(worlds=[Path(environ[WORLD_ENV])])
        return config

    def override(self, **changes: Any) -> DriftlabConfig:
        """A copy with some fields replaced (`study` as a mapping of its own fields), validated again."""
        study = {**self.study.model_dump(), **(changes.pop("study", None) or {})}
        return _validate({**self.model_dump(), **changes, "study": study}, "flags")


def _read_settings(file: Path) -> dict[str, Any]:
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{file}: settings file not found "
                          f"(set ${CONFIG_ENV} to an existing file, or unset it)") from None
    except (IsADirectoryError, PermissionError, UnicodeDecodeError) as e:
        raise ConfigError(f"{file}: cannot read the settings file ({type(e).__name__})") from None
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise ConfigError(f"{file}: not valid YAML{where}: {getattr(e, 'problem', None) or e}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{file}: a settings file is a mapping (worlds, database, output_dir, study, ...)")
    base = file.resolve().parent
    for key in ("database", "output_dir"):
        if isinstance(data.get(key), str):
            data[key] = base / data[key]
    if isinstance(data.get("worlds"), list):
        data["worlds"] = [base / w if isinstance(w, str) else w for w in data["worlds"]]
    study = data.get("study")
    if isinstance(study, dict) and isinstance(study.get("replay_file"), str):
        study["replay_file"] = str(base / study["replay_file"])
    return data


def _validate(values: Mapping[str, Any], source: str) -> DriftlabConfig:
    try:
        return DriftlabConfig.model_validate(values)
    except ValidationError as e:
        err = e.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "(top level)"
        more = f" [and {len(e.errors()) - 1} more]" if len(e.errors()) > 1 else ""
        raise ConfigError(f"{source}: {field}: {err['msg'].removeprefix('Value error, ')}{more}") from None
