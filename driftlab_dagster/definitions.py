"""The code location: every configured world's study, built from the project settings (driftlab.yaml).

Reload definitions in the UI to pick up an edited settings or world file: it is read when this loads.
"""

import dagster as dg

from driftlab_dagster.config import DriftlabConfig
from driftlab_dagster.defs import build_definitions
from driftlab_dagster.gc_pace import pace_for_batch

pace_for_batch()  # this process (a code server or a run worker) parses the world and runs the study


@dg.definitions
def defs() -> dg.Definitions:
    return build_definitions(DriftlabConfig.load())
