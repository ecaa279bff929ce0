import base64

import dagster as dg

from driftlab_dagster.core import reports
from driftlab_dagster.core.designs import ALL_DESIGNS as DESIGNS
from driftlab_dagster.core.warehouse import records, stored_world_json
from driftlab_dagster.core.world import World
from driftlab_dagster.defs.resources import ReportsResource, WarehouseResource


def ordered_results(conn, world: World) -> list[dict]:  # type: ignore[no-untyped-def]
    """Every answer, in the post's order: scenario, step, design, question."""
    rows = records(conn, "SELECT scenario, design, step, question, drifted, outcome, hedged, answer, expected, why "
                         "FROM answers")
    scenario_rank = {s: i for i, s in enumerate(world.scenario_names)}
    design_rank = {d.value: i for i, d in enumerate(DESIGNS)}
    question_rank = {q.id: i for i, q in enumerate(world.spec.questions)}
    return sorted(rows, key=lambda r: (scenario_rank[r["scenario"]], r["step"], design_rank[r["design"]],
                                       question_rank[r["question"]]))


# Refresh once every upstream partition has settled after a change (a nightly run, a backfill).
_FOLLOW = dg.AutomationCondition.eager()


@dg.asset(group_name="reports", deps=["answers"], kinds={"duckdb", "csv"}, pool="duckdb", automation_condition=_FOLLOW)
def accuracy_report(context: dg.AssetExecutionContext, warehouse: WarehouseResource,
                    reports_dir: ReportsResource) -> dg.MaterializeResult:
    """The post's accuracy table: one row per (design, scenario) with all-answer and drifted accuracy, the
    wrong answers split by hedge, abstentions and right answers hedged. Writes results.csv (every answer)
    and accuracy.png."""
    with warehouse.get_connection() as conn:
        world = World.from_json(stored_world_json(conn))
        results = ordered_results(conn, world)
    summary = reports.summarise(results, world.scenario_names)
    results_path = reports.write_text(reports_dir.path("results.csv"), reports.results_csv(results))
    plot = reports.accuracy_plot(summary, world.scenario_names)
    plot_path = reports_dir.path("accuracy.png")
    plot_path.parent.mkdir(parents=True, exist_ok=True)
    plot_path.write_bytes(plot)
    return dg.MaterializeResult(metadata={
        "dagster/row_count": len(summary),
        "answers": len(results),
        "accuracy": dg.MetadataValue.md(reports.accuracy_markdown(summary)),
        "plot": dg.MetadataValue.md(f"![accuracy by design and scenario](data:image/png;base64,"
                                    f"{base64.b64encode(plot).decode()})"),
        "results_csv": dg.MetadataValue.path(str(results_path)),
    })


@dg.asset(group_name="reports", deps=["maintenance_costs", "graph_repair"], kinds={"duckdb", "csv"}, pool="duckdb",
          automation_condition=_FOLLOW)
def cost_report(context: dg.AssetExecutionContext, warehouse: WarehouseResource,
                reports_dir: ReportsResource) -> dg.MaterializeResult:
    """The post's cost table: one row per (approach, event), from the per-event maintenance comparison and
    the repair. Writes costs.csv."""
    columns = ", ".join(reports.COST_COLUMNS + reports.COST_EXTRA_COLUMNS)
    with warehouse.get_connection() as conn:
        costs = records(conn, f"SELECT {columns} FROM maintenance_costs UNION ALL SELECT {columns} FROM repair_costs")
    path = reports.write_text(reports_dir.path("costs.csv"), reports.costs_csv(costs))
    return dg.MaterializeResult(metadata={
        "dagster/row_count": len(costs),
        "costs": dg.MetadataValue.md(reports.cost_markdown(costs)),
        "costs_csv": dg.MetadataValue.path(str(path)),
    })
