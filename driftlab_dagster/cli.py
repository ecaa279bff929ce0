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
from driftlab_dagster.core.models import ModelServerDown
from driftlab_dagster.core.session import StudyConfig
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
    print(reports.hedge_quality(results, scenarios, ["HybridVersioned", "Governed"]))
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
    config = StudyConfig(extractor=args.extractor, reader=args.reader, retrieval=args.retrieval, api=args.api,
                         url=args.url, model=args.model, embed_model=args.embed_model,
                         extraction_prompt=args.prompt, timeout_seconds=args.timeout)
    sliced = bool(args.scenario or args.day)
    spend: dict[str, int] = {}
    started = time.perf_counter()
    if args.engine == "core":
        if config.uses_model or sliced:
            raise SystemExit("driftlab: error: --engine core runs the deterministic study only, and whole")
        from driftlab_dagster.core.study import run_study

        study = run_study(world)
        results, costs = study.results, study.costs
        reports.write_text(out / "results.csv", reports.results_csv(results))
        reports.write_text(out / "costs.csv", reports.costs_csv(costs))
    else:
        from driftlab_dagster.headless import run_study_in_dagster

        run = run_study_in_dagster(Path(args.database), out, world_file, lock_timeout_seconds=args.lock_timeout,
                                   config=config, scenarios=args.scenario, days=args.day,
                                   progress=config.uses_model and sys.stderr.isatty() or args.progress)
        spend = run.spend
        results = _typed(_read_csv_rows(out / "results.csv"))
        costs = [] if sliced else _typed(_read_csv_rows(out / "costs.csv"))
    elapsed = time.perf_counter() - started
    if config.uses_model and spend.get("model_calls"):
        hits, calls = spend["cache_hits"], spend["model_calls"]
        print(f"model calls {calls}, {hits} from the cache ({100 * hits / calls:.0f}%); tokens a live system would "
              f"pay {spend['tokens_live']}, this run paid {spend['tokens_spent']}")
    print(f"reader={config.reader} extractor={config.extractor} retrieval={config.retrieval} engine={args.engine} "
          + (f"api={config.api} model={config.model} " if config.uses_model else "") + f"world={world_file}")
    if config.uses_model:
        from driftlab_dagster.core.study import run_study

        ceiling = run_study(world).results
        _print_model_tables(results, ceiling, costs, world.scenario_names, Path(args.database))
    else:
        _print_tables(results, costs, world.scenario_names)
    print()
    where = f" and {args.database}" if args.engine == "dagster" else ""
    print(f"Wrote {out / 'results.csv'}{'' if sliced else ', ' + str(out / 'costs.csv')}{where} in {elapsed:.1f}s")
    return 0


def _typed(rows: list[dict]) -> list[dict]:
    for r in rows:
        for key in ("drifted", "hedged", "estimated", "model_flagged", "hedge_phrase"):
            if key in r:
                r[key] = r[key] in (True, "True")
    return rows


def _print_model_tables(results: list[dict], ceiling: list[dict], costs: list[dict], scenarios: list[str],
                        database: Path) -> None:
    import duckdb

    print()
    print(reports.two_column_table(reports.summarise(ceiling, scenarios), reports.summarise(results, scenarios)))
    print()
    print(reports.hedging_table(results))
    print()
    print(reports.hedge_quality(results, scenarios, ["HybridVersioned", "Governed"]))
    print()
    wrong = [r for r in results if r["outcome"] == "wrong"]
    print(f"Wrong answers ({len(wrong)}):")
    for r in wrong:
        print(f"  {r['scenario']:<13} {r['design']:<16} step {r['step']} {r['question']}: {r['answer']!r} "
              f"(expected {r['expected']!r}){' hedged' if r['hedged'] else ''}")
    if costs:
        print()
        print(reports.cost_table(costs))
    with duckdb.connect(str(database), read_only=True) as conn:
        calls, tokens = conn.execute("SELECT count(*), coalesce(sum(input_tokens + output_tokens), 0) "
                                     "FROM model_calls WHERE kind = 'chat'").fetchone()
    print(f"\nmodel call cache: {calls} distinct calls, {tokens} tokens paid once and reusable")


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
    run.add_argument("--extractor", choices=["regex", "model"], default="regex",
                     help="regex (no model) or model (the local model extracts the graph)")
    run.add_argument("--reader", choices=["deterministic", "model"], default="deterministic",
                     help="deterministic (no model) or model (the local model answers from the evidence)")
    run.add_argument("--retrieval", choices=["bm25", "embed"], default="bm25")
    run.add_argument("--api", choices=["ollama", "openai"], default="ollama",
                     help="ollama: Ollama's native API; openai: an OpenAI-compatible server (LM Studio, llama-server)")
    run.add_argument("--url", help="model server URL (ollama: $OLLAMA_HOST or http://127.0.0.1:11434; "
                                   "openai: http://127.0.0.1:1234)")
    run.add_argument("--model", default="qwen2.5:7b", help="chat model id as the server names it")
    run.add_argument("--embed-model", default="nomic-embed-text", help="embedding model id")
    run.add_argument("--prompt", choices=["zero-shot-v1", "few-shot-v1"], default="few-shot-v1",
                     help="extraction prompt version")
    run.add_argument("--timeout", type=float, default=300.0, help="seconds for one model call")
    run.add_argument("--scenario", action="append", help="run only this scenario (repeatable)")
    run.add_argument("--day", action="append", help="run only this checkpoint day, e.g. 2026-09-08 (repeatable)")
    run.add_argument("--progress", action="store_true", help="draw the progress line even when stderr is not a tty")
    run.add_argument("--engine", choices=["dagster", "core"], default="dagster",
                     help="dagster: the asset graph on DuckDB (default); core: in memory, no Dagster")
    run.set_defaults(func=cmd_run)
    check = sub.add_parser("check-world", help="validate a world file")
    check.add_argument("path")
    check.set_defaults(func=cmd_check_world)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (WorldFileError, WarehouseError, ModelServerDown, ValueError) as e:
        print(f"driftlab: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
