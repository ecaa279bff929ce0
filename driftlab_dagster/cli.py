"""`driftlab` (or `python -m driftlab_dagster`): run the study headless, or check a world file.

    driftlab run                 # the study through Dagster into data/driftlab.duckdb, tables printed
    driftlab run --engine core   # the same study in memory, no Dagster, no DuckDB (for comparison)
    driftlab check-world PATH    # validate a world file
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from driftlab_dagster.core import reports
from driftlab_dagster.core.warehouse import WarehouseError
from driftlab_dagster.core.world import WorldFileError, load_world
from driftlab_dagster.project import DEFAULT_DATABASE, DEFAULT_OUTPUT_DIR, world_path


def _print_tables(results: list[dict], costs: list[dict], scenarios: list[str]) -> None:
    for row in sorted(costs, key=lambda c: (c["event"], c["approach"])):
        if row["approach"] in ("patch changed pages", "full re-extract"):
            label = "patch" if row["approach"].startswith("patch") else "full"
            print(f"  check: event {row['event']} {label:<5} graph-only accuracy {100 * row['graph_only_accuracy']:.0f}%")
        elif row["approach"].startswith("repair"):
            label = "full" if "full" in row["approach"] else "patch"
            print(f"  repair {label}: graph-only accuracy {100 * row['graph_only_accuracy']:.0f}%")
    print()
    print(reports.accuracy_table(reports.summarise(results, scenarios)))
    print()
    print(reports.cost_table(costs))


def _read_csv_rows(path: Path) -> list[dict]:
    import pandas as pd

    frame = pd.read_csv(path, keep_default_na=False)
    return frame.to_dict("records")


def cmd_run(args: argparse.Namespace) -> int:
    world_file = Path(args.world) if args.world else world_path()
    world = load_world(world_file)
    out = Path(args.out)
    started = time.perf_counter()
    if args.engine == "core":
        from driftlab_dagster.core.study import run_study

        study = run_study(world)
        results, costs = study.results, study.costs
        reports.write_text(out / "results.csv", reports.results_csv(results))
        reports.write_text(out / "costs.csv", reports.costs_csv(costs))
    else:
        from driftlab_dagster.headless import run_study_in_dagster

        run_study_in_dagster(Path(args.database), out, world_file, lock_timeout_seconds=args.lock_timeout)
        results = _read_csv_rows(out / "results.csv")
        for r in results:
            r["drifted"], r["hedged"] = r["drifted"] in (True, "True"), r["hedged"] in (True, "True")
        costs = _read_csv_rows(out / "costs.csv")
        for c in costs:
            c["estimated"] = c["estimated"] in (True, "True")
    elapsed = time.perf_counter() - started
    print(f"reader=deterministic extractor=regex retrieval=bm25 engine={args.engine} world={world_file}")
    _print_tables(results, costs, world.scenario_names)
    print()
    where = f" and {args.database}" if args.engine == "dagster" else ""
    print(f"Wrote {out / 'results.csv'}, {out / 'costs.csv'}{where} in {elapsed:.1f}s")
    return 0


def cmd_check_world(args: argparse.Namespace) -> int:
    world = load_world(args.path)
    print(f"{args.path}: OK: {world.spec.company}, {len(world.spec.pages)} pages, {len(world.spec.events)} events, "
          f"{len(world.spec.questions)} questions, scenarios {', '.join(world.scenario_names)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="driftlab", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the whole study and print the accuracy and cost tables")
    run.add_argument("--world", help="world file (default: data/worlds/tessaly_freight.yaml or $DRIFTLAB_WORLD)")
    run.add_argument("--database", default=str(DEFAULT_DATABASE), help="DuckDB file (default: %(default)s)")
    run.add_argument("--out", default=str(DEFAULT_OUTPUT_DIR), help="directory for results.csv and costs.csv")
    run.add_argument("--lock-timeout", type=float, default=10.0,
                     help="seconds to wait for another process holding the DuckDB file (default: %(default)s)")
    run.add_argument("--engine", choices=["dagster", "core"], default="dagster",
                     help="dagster: the asset graph on DuckDB (default); core: in memory, no Dagster")
    run.set_defaults(func=cmd_run)
    check = sub.add_parser("check-world", help="validate a world file")
    check.add_argument("path")
    check.set_defaults(func=cmd_check_world)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (WorldFileError, WarehouseError) as e:
        print(f"driftlab: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
