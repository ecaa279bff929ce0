"""What both kinds of world file share: the strict base of every file model, the naming rules, scenario
names that can be partition keys, the world id made from a company name, and a located validation error."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field


class SpecModel(BaseModel):
    """A part of a world file: unknown keys are an error, and a loaded file never changes."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class NamingSpec(SpecModel):
    drop_prefixes: list[str] = Field(default_factory=lambda: ["the "])
    drop_suffixes: list[str] = Field(default_factory=lambda: [" plan", " team"])


class Located(ValueError):
    """A cross-reference error raised by a world validator, with the path of the field at fault."""

    def __init__(self, loc: tuple[Any, ...], message: str):
        super().__init__(message)
        self.loc = loc


# Scenario names become Dagster partition keys: a `|` or a `,` would split a multi-partition key, a control
# character breaks a log line.
_SCENARIO_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,47}")


def check_scenario_name(name: str) -> str:
    if not _SCENARIO_NAME.fullmatch(name):
        raise ValueError(f"scenario name {name[:40]!r} cannot be a partition key: start with a letter and use only "
                         "letters, digits, '_' and '-', at most 48 characters, e.g. 'StalePages'")
    return name


ScenarioName = Annotated[str, AfterValidator(check_scenario_name)]


def slug(name: str) -> str:
    """'Tessaly Freight' -> 'tessaly_freight': a valid world id (see WorldSpec.id) made from any name."""
    slug = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    if not slug[:1].isalpha():
        slug = "w_" + slug
    return slug[:48]
