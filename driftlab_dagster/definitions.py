"""The code location: every configured world's study, built from the project settings (driftlab.yaml).

Reload definitions in the UI to pick up an edited settings or world file: it is read when this loads.
"""

from driftlab_dagster.gc_pace import pace_for_batch

pace_for_batch()  # before the world is parsed: this process (code server or run worker) runs the study

import dagster as dg  # noqa: E402

from driftlab_dagster.config import DriftlabConfig  # noqa: E402
from driftlab_dagster.defs import build_definitions  # noqa: E402


@dg.definitions
def defs() -> dg.Definitions:
    return build_definitions(DriftlabConfig.load())
