"""Prints the stale partitions of the code location as this process loads it, as JSON: run with a
DAGSTER_HOME and a DRIFTLAB_STUDY to see what a settings change does to an instance's assets."""

from __future__ import annotations

import json

import dagster as dg


def stale_partitions(instance: dg.DagsterInstance, definitions: dg.Definitions) -> dict[str, list[str]]:
    """asset -> partitions whose status is STALE, with the cause category of the first."""
    from dagster._utils.test.data_versions import get_stale_status_resolver  # no public API in 1.13

    resolver = get_stale_status_resolver(instance, list(definitions.assets or []))
    graph = definitions.resolve_asset_graph()
    stale: dict[str, list[str]] = {}
    for key in graph.get_all_asset_keys():
        partitions_def = graph.get(key).partitions_def
        for partition in partitions_def.get_partition_keys() if partitions_def else [None]:
            if resolver.get_status(key, partition).value == "STALE":
                causes = resolver.get_stale_root_causes(key, partition)
                stale.setdefault(key.to_user_string(), []).append(
                    f"{partition}:{causes[0].category.value if causes else '?'}")
    return stale


def dependencies_behind(instance: dg.DagsterInstance, definitions: dg.Definitions,
                        key: dg.AssetKey) -> dict[str, set[str]]:
    """partition of `key` -> the assets it depends on that have new data since it was materialised."""
    from dagster._utils.test.data_versions import get_stale_status_resolver  # no public API in 1.13

    resolver = get_stale_status_resolver(instance, list(definitions.assets or []))
    partitions_def = definitions.resolve_asset_graph().get(key).partitions_def
    assert partitions_def is not None
    behind: dict[str, set[str]] = {}
    for partition in partitions_def.get_partition_keys():
        for cause in resolver.get_stale_causes(key, partition):
            if cause.dependency is not None:
                behind.setdefault(partition, set()).add(cause.dependency.asset_key.to_user_string())
    return behind


if __name__ == "__main__":
    from driftlab_dagster.definitions import defs

    print(json.dumps(stale_partitions(dg.DagsterInstance.get(), defs())))
