import base64

import dagster as dg
import duckdb

from driftlab_dagster.core import reports
from driftlab_dagster.core.designs import ALL_DESIGNS as DESIGNS
from driftlab_dagster.core.warehouse import latest_timings, records
from driftlab_dagster.core.world import World
from driftlab_dagster.defs.context import StudyContext
from driftlab_dagster.defs.metadata import costs_markdown
from driftlab_dagster.defs.resources import ReportsResource, WarehouseResource


def ordered_results(conn: duckdb.DuckDBPyConnection, world: World) -> list[dict]:
    """Every answer of this version of the world, in the post's order: scenario, step, design, question."""
    rows = records(conn, """SELECT scenario, design, step, question, drifted, outcome, hedged, answer, expected, why,
                                   model_flagged, hedge_phrase
                            FROM answers WHERE world = ? AND world_version = ?""", [world.id, world.version])
    scenario_rank = {s: i for i, s in enumerate(world.scenario_names)}
    design_rank = {d.value: i for i, d in enumerate(DESIGNS)}
    question_rank = {q: i for i, q in enumerate(world.question_ids)}
    return sorted(rows, key=lambda r: (scenario_rank[r["scenario"]], r["step"], design_rank[r["design"]],
                                       question_rank[r["question"]]))


def ordered_costs(conn: duckdb.DuckDBPyConnection, world: World) -> list[dict]:
    columns = ", ".join(reports.COST_COLUMNS + reports.COST_EXTRA_COLUMNS)
    return records(conn, f"""SELECT {columns} FROM maintenance_costs WHERE world = ? AND world_version = ?
                             UNION ALL
                             SELECT {columns} FROM repair_costs WHERE world = ? AND world_version = ?""",
                   [world.id, world.version] * 2)


def build(ctx: StudyContext) -> list[dg.AssetsDefinition]:
    world = ctx.world
    # Refresh once every upstream partition has settled after a change (a nightly run, a backfill).
    follow = dg.AutomationCondition.eager()
    cost_inputs = ["maintenance_costs"] + (["graph_repair"] if ctx.repair_source else [])

    @dg.asset(key=ctx.key("accuracy_report"), group_name="reports", deps=[ctx.key("answers")],
              kinds={"duckdb", "csv"}, pool="duckdb", automation_condition=follow)
    def accuracy_report(context: dg.AssetExecutionContext, warehouse: WarehouseResource,
                        report_files: ReportsResource) -> dg.MaterializeResult:
        """The post's accuracy table: one row per (design, scenario) with all-answer and drifted accuracy, the
        wrong answers split by hedge, abstentions and right answers hedged, over the answers of the current
        version of the world file. Writes <world id>/results.csv (every answer) and accuracy.png."""
        with warehouse.get_connection() as conn:
            results = ordered_results(conn, world)
        done = {(r["scenario"], r["step"]) for r in results}
        missing = [f"{s} {c.key}" for s in world.scenario_names for c in world.checkpoints if (s, c.step) not in done]
        summary = reports.summarise(results, world.scenario_names)
        results_path = reports.write_text(report_files.path(world.id, "results.csv"), reports.results_csv(results))
        plot = reports.accuracy_plot(summary, world.scenario_names)
        reports.write_bytes(report_files.path(world.id, "accuracy.png"), plot)
        return dg.MaterializeResult(metadata={
            "dagster/row_count": len(summary),
            "answers": len(results),
            "world_version": world.version,
            "partitions_missing": dg.MetadataValue.md(", ".join(missing) if missing else "none"),
            "accuracy": dg.MetadataValue.md(reports.accuracy_markdown(summary)),
            "plot": dg.MetadataValue.md(f"![accuracy by design and scenario](data:image/png;base64,"
                                        f"{base64.b64encode(plot).decode()})"),
            "results_csv": dg.MetadataValue.path(str(results_path)),
        })

    @dg.asset(key=ctx.key("cost_report"), group_name="reports", deps=[ctx.key(n) for n in cost_inputs],
              kinds={"duckdb", "csv"}, pool="duckdb", automation_condition=follow)
    def cost_report(context: dg.AssetExecutionContext, warehouse: WarehouseResource,
                    report_files: ReportsResource) -> dg.MaterializeResult:
        """The post's cost table: one row per (approach, event), from the per-event maintenance comparison and
        the repair, for the current version of the world file. Writes <world id>/costs.csv (the same for the
        same inputs), timings.csv (the milliseconds of the latest run of each pass: measured, so they differ
        between runs) and costs.png (pages read and input tokens per event, one line per approach)."""
        with warehouse.get_connection() as conn:
            costs = ordered_costs(conn, world)
            timings = latest_timings(conn, world, ["maintenance_costs", "repair_costs"])
        path = reports.write_text(report_files.path(world.id, "costs.csv"), reports.costs_csv(costs))
        timings_path = reports.write_text(report_files.path(world.id, "timings.csv"), reports.timings_csv(timings))
        plot = reports.cost_plot(costs)
        reports.write_bytes(report_files.path(world.id, "costs.png"), plot)
        return dg.MaterializeResult(metadata={
            "dagster/row_count": len(costs),
            "world_version": world.version,
            "costs": dg.MetadataValue.md(costs_markdown(costs, timings)),
            "plot": dg.MetadataValue.md(f"![pages read and tokens per event, by approach](data:image/png;base64,"
                                        f"{base64.b64encode(plot).decode()})"),
            "costs_csv": dg.MetadataValue.path(str(path)),
            "timings_csv": dg.MetadataValue.path(str(timings_path)),
        })

    return [accuracy_report, cost_report]

