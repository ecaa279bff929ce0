"""The one partitions definition: drift scenario x checkpoint day, both read from the world file.

Key strings join the dimensions in alphabetical order of their names ("2026-09-08|Fresh"); read a key's
parts with `scenario_and_day`, never by splitting the string.
"""

from __future__ import annotations

import warnings

import dagster as dg

from driftlab_dagster.core.study import stale_graph_scenario
from driftlab_dagster.core.world import load_world
from driftlab_dagster.project import world_path

# The world's calendar is the partitioning, so the world file is read once, when definitions load.
WORLD = load_world(world_path())

SCENARIOS = WORLD.scenario_names
DAYS = WORLD.day_keys
EVENT_DAYS = WORLD.event_day_keys

scenario_partitions = dg.StaticPartitionsDefinition(SCENARIOS)
day_partitions = dg.StaticPartitionsDefinition(DAYS)
scenario_day_partitions = dg.MultiPartitionsDefinition({"scenario": scenario_partitions, "day": day_partitions})
# The maintenance comparison exists for days on which something happened.
event_day_partitions = dg.StaticPartitionsDefinition(EVENT_DAYS)

# A graph on day d has read the page history of its scenario up to d: pages[s, u] feeds graph[s, d] for u <= d.
# MultiPartitionMapping is beta in 1.13 and says so on every import; we depend on it knowingly.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", dg.BetaWarning)
    page_history = dg.MultiPartitionMapping({
        "scenario": dg.DimensionPartitionMapping("scenario", dg.IdentityPartitionMapping()),
        "day": dg.DimensionPartitionMapping(
            "day", dg.StaticPartitionMapping({u: [d for d in DAYS if d >= u] for u in DAYS})
        ),
    })


# The repair starts from the graph that missed every event: the stale-graph scenario on the last day.
repair_source_key = dg.MultiPartitionKey({"scenario": stale_graph_scenario(WORLD), "day": DAYS[-1]})


def scenario_and_day(partition_key: str) -> tuple[str, str]:
    # Runs launched with only a "dagster/partition" tag hand over a plain str: always parse.
    parts = scenario_day_partitions.get_partition_key_from_str(str(partition_key)).keys_by_dimension
    return parts["scenario"], parts["day"]
