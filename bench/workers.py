"""Two worker processes against one, side by side: the whole deterministic study through Dagster (`driftlab
run`, as `make run` runs it: an on-disk SQLite instance, a fresh DuckDB file) with `--workers 1` and
`--workers 2`, rounds interleaved, on a world scaled by `driftlab generate-world` (100 copies: 4,000 pages).

    PYTHONPATH=. .venv/bin/python bench/workers.py [--copies 100] [--rounds 2] [--instance postgres]
                                                   [--out bench/out/workers]

Per run: wall seconds and CPU seconds (user + system of the process and its children, the forked workers
included, from wait4), and each study step's seconds from the run's own step records. Prints the minimum
over rounds of each, and 2 workers / 1 worker. Stops if any run's results.csv or costs.csv differs from the
first run's by a byte (the DuckDB tables are compared row for row by driftlab_dagster_tests/test_workers.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from contextlib import nullcontext
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.instance_storage import postgres_home, server_cpu  # noqa: E402
from bench.scale import generate_world, run_process  # noqa: E402
from driftlab_dagster.local_postgres import LocalPostgres, throwaway  # noqa: E402
from driftlab_dagster.project import DEFAULT_WORLD  # noqa: E402

STEP_SECONDS = """
import json, dagster as dg
instance = dg.DagsterInstance.get()
steps = {}
for run in instance.get_runs():
    for s in instance.get_run_step_stats(run.run_id):
        steps[s.step_key.split("__", 1)[-1]] = round(s.end_time - s.start_time, 2)
print(json.dumps(steps))
"""


def one_run(world: Path, folder: Path, workers: int, pg: LocalPostgres | None = None) -> dict:
    shutil.rmtree(folder, ignore_errors=True)
    home = folder / "dagster_home"
    home.mkdir(parents=True)
    if pg is None:
        shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    else:
        postgres_home(pg, home)
        spent = server_cpu(pg)
    env = {k: v for k, v in os.environ.items() if k not in ("DRIFTLAB_WORLD", "DRIFTLAB_CONFIG")}
    env.update(DAGSTER_HOME=str(home), DRIFTLAB_WORLD_CACHE=str(folder / "world_cache"))
    found = run_process([sys.executable, "-m", "driftlab_dagster", "run", "--world", str(world), "--database",
                         str(folder / "driftlab.duckdb"), "--out", str(folder / "out"), "--workers", str(workers)],
                        env, folder / "run.log")
    if pg is not None:
        found["cpu"] += server_cpu(pg) - spent
    steps = subprocess.run([sys.executable, "-c", STEP_SECONDS], env=env, cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout
    return {**found, "steps": json.loads(steps)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=100, help="copies of the Tessaly world (100: 4,000 pages)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--instance", choices=["sqlite", "postgres"], default="sqlite",
                        help="where the runs store their runs and events (postgres: the local server `make pg-up` "
                             "starts, a database per run, its CPU counted)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "workers")
    args = parser.parse_args()
    world = generate_world(DEFAULT_WORLD, args.copies, args.out / "world")
    runs: dict[int, list[dict]] = {1: [], 2: []}
    first: Path | None = None
    with throwaway() if args.instance == "postgres" else nullcontext() as pg:
        for round_ in range(args.rounds):
            for workers in (1, 2):
                folder = args.out / f"w{workers}-r{round_}"
                runs[workers].append(one_run(world, folder, workers, pg))
                report = next((folder / "out").iterdir())
                first = first or report
                for name in ("results.csv", "costs.csv"):
                    if (report / name).read_bytes() != (first / name).read_bytes():
                        raise SystemExit(f"{report / name} differs from {first / name}: the workers changed the rows")
                print(f"round {round_ + 1}, {workers} worker(s): {runs[workers][-1]['wall']:.1f} s wall", flush=True)
    best = {w: {"wall": min(r["wall"] for r in rs), "cpu": min(r["cpu"] for r in rs),
                "steps": {s: min(r["steps"][s] for r in rs) for s in rs[0]["steps"]}} for w, rs in runs.items()}
    pages = 40 * args.copies
    print(f"\n{pages:,} pages, {args.instance} instance, minimum of {args.rounds} rounds; results.csv and costs.csv "
          "identical in every run\n")
    print("| measure | 1 worker | 2 workers | 2 / 1 |\n|---|---|---|---|")
    rows = [("wall s", best[1]["wall"], best[2]["wall"]), ("CPU s (children included)", best[1]["cpu"], best[2]["cpu"])]
    rows += [(f"step {s} s", best[1]["steps"][s], best[2]["steps"].get(s, float("nan"))) for s in best[1]["steps"]]
    for name, one, two in rows:
        ratio = f"**{two / one:.2f}**" if one else "-"
        print(f"| {name} | {one:.1f} | {two:.1f} | {ratio} |")


if __name__ == "__main__":
    main()
