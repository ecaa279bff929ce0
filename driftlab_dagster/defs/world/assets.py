import dagster as dg
import pandas as pd

from driftlab_dagster.core.warehouse import replace_slice, transaction
from driftlab_dagster.defs.partitions import DAYS, SCENARIOS
from driftlab_dagster.defs.resources import WarehouseResource, WorldFileResource


@dg.asset(group_name="world", kinds={"duckdb", "yaml"}, pool="duckdb")
def world(context: dg.AssetExecutionContext, world_file: WorldFileResource,
          warehouse: WarehouseResource) -> dg.MaterializeResult:
    """The validated world file, stored as one row (its canonical JSON and sha256) so that every partition
    downstream reads the same world the partitions were defined from."""
    loaded = world_file.load()
    if loaded.scenario_names != SCENARIOS or loaded.day_keys != DAYS:
        raise ValueError(
            f"{world_file.path} defines scenarios {loaded.scenario_names} and days {loaded.day_keys}, but the "
            f"code location was loaded with {SCENARIOS} and {DAYS}: restart it with DRIFTLAB_WORLD={world_file.path}"
        )
    row = pd.DataFrame([{"world_sha256": loaded.sha256, "company": loaded.spec.company, "source": str(loaded.source),
                         "spec_json": loaded.canonical_json}])
    with warehouse.get_connection() as conn, transaction(conn):
        replace_slice(conn, "world", {}, row)
    events = "\n".join(
        ["| event | day | kind | changes |", "|---|---|---|---|"]
        + [f"| {e.id} | {c.key} | {e.kind} | {', '.join(f'{k} = {v}' for k, v in e.set.items())} |"
           for e, c in zip(loaded.spec.events, loaded.checkpoints[1:])]
    )
    return dg.MaterializeResult(metadata={
        "dagster/row_count": 1,
        "company": loaded.spec.company,
        "sha256": loaded.sha256,
        "pages": len(loaded.spec.pages),
        "questions": len(loaded.spec.questions),
        "predicates": ", ".join(loaded.ontology.names),
        "events": dg.MetadataValue.md(events),
    })
