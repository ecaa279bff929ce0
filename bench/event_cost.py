"""Dagster's cost per stored event, SQLite against PostgreSQL, side by side: the events of one real run of the
study, stored again into each instance's event-log storage, rounds interleaved.

    PYTHONPATH=. .venv/bin/python bench/event_cost.py [--copies 100] [--rounds 3] [--out bench/out/event_cost]

First the deterministic study runs once through Dagster (`driftlab run`, as `make run`, on a world of
`--copies` copies of Tessaly: 100 is 4,000 pages) on a throwaway SQLite instance; its study run's events
(materialisations with their per-partition metadata, check evaluations, step events, logs) are what is stored.
Then, per round, each route stores that same list under a fresh run id into an instance of its own:

- sqlite: the project's dagster.yaml (an on-disk SQLite instance, as `make run` and `make dev` use);
- postgres: a local PostgreSQL as `make pg-up` starts it, one event at a time, as Dagster stores them by
  default (a new connection per storage call);
- postgres batched: the same, with each step's materialisations of one asset stored in one batch
  (`store_event_batch`), as Dagster does when DAGSTER_EVENT_BATCH_SIZE is set;
- postgres pooled, batched: the same, on an instance holding its connections (`headless.hold_connections`),
  as `driftlab run` stores its events.

CPU is this process's (the storage's client side) plus, for PostgreSQL, the server's (the postmaster and its
reaped backends, from /proc). Prints, per route, the minimum over rounds of wall and CPU microseconds per
event, and each against SQLite. The storage's own cost only: the executor's handling of an event before it
reaches the storage is the same on every route and is not in these numbers.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import dagster as dg  # noqa: E402

from bench.instance_storage import server_cpu  # noqa: E402
from bench.scale import generate_world, run_process  # noqa: E402
from driftlab_dagster.headless import hold_connections  # noqa: E402
from driftlab_dagster.local_postgres import throwaway  # noqa: E402
from driftlab_dagster.project import DEFAULT_WORLD  # noqa: E402


def one_study_run(world: Path, folder: Path) -> tuple[dg.DagsterRun, list[dg.EventLogEntry]]:
    """The study job's run of a whole `driftlab run` and every event it stored, in order."""
    home = folder / "dagster_home"
    home.mkdir(parents=True)
    shutil.copy(ROOT / "dagster.yaml", home / "dagster.yaml")
    env = {k: v for k, v in os.environ.items() if k not in ("DRIFTLAB_WORLD", "DRIFTLAB_CONFIG")}
    env.update(DAGSTER_HOME=str(home), DRIFTLAB_WORLD_CACHE=str(folder / "world_cache"))
    run_process([sys.executable, "-m", "driftlab_dagster", "run", "--world", str(world), "--database",
                 str(folder / "driftlab.duckdb"), "--out", str(folder / "out")], env, folder / "run.log")
    with dg.DagsterInstance.from_config(str(home)) as instance:
        run = next(r for r in instance.get_runs() if r.job_name.endswith("__study"))
        return run, list(instance.all_logs(run.run_id))


def batches(events: list[dg.EventLogEntry], batched: bool) -> list[list[dg.EventLogEntry]]:
    """The events as a storage is handed them: one at a time, or (batched) each unbroken run of one step's
    materialisations of one asset together, which is what Dagster batches."""
    if not batched:
        return [[e] for e in events]
    groups: list[list[dg.EventLogEntry]] = []
    for event in events:
        key = _batch_key(event)
        if key is not None and groups and _batch_key(groups[-1][0]) == key:
            groups[-1].append(event)
        else:
            groups.append([event])
    return groups


def _batch_key(event: dg.EventLogEntry) -> tuple[str | None, str] | None:
    dagster_event = event.dagster_event
    if dagster_event is None or dagster_event.event_type != dg.DagsterEventType.ASSET_MATERIALIZATION:
        return None
    return dagster_event.step_key, dagster_event.asset_key.to_user_string() if dagster_event.asset_key else ""


def store(instance: dg.DagsterInstance, run: dg.DagsterRun, events: list[dg.EventLogEntry], batched: bool,
          server: Callable[[], float]) -> tuple[float, float]:
    """Wall and CPU seconds (client + server) to store `events` under a fresh run id."""
    run_id = str(uuid.uuid4())
    # Without the job's snapshots, which the route's run storage does not hold and no event needs.
    instance.add_run(run._replace(run_id=run_id, job_snapshot_id=None, execution_plan_snapshot_id=None))
    groups = [[e._replace(run_id=run_id) for e in group] for group in batches(events, batched)]
    storage = instance.event_log_storage
    server_before, cpu_before, started = server(), time.process_time(), time.perf_counter()
    for group in groups:
        if len(group) == 1:
            storage.store_event(group[0])
        else:
            storage.store_event_batch(group)
    wall = time.perf_counter() - started
    return wall, time.process_time() - cpu_before + server() - server_before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=100, help="copies of the Tessaly world (100: 4,000 pages)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "event_cost")
    args = parser.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    world = generate_world(DEFAULT_WORLD, args.copies, args.out / "world")
    run, events = one_study_run(world, args.out / "source")
    sqlite_home = args.out / "sqlite_home"
    sqlite_home.mkdir()
    shutil.copy(ROOT / "dagster.yaml", sqlite_home / "dagster.yaml")
    measured: dict[str, list[tuple[float, float]]] = {"sqlite": [], "postgres": [], "postgres batched": [],
                                                      "postgres pooled, batched": []}
    with throwaway() as pg:
        with dg.DagsterInstance.from_config(str(sqlite_home)) as sqlite, \
                dg.DagsterInstance.from_config(str(pg.home)) as postgres, \
                dg.DagsterInstance.from_config(str(pg.home)) as pooled:
            hold_connections(pooled)  # as `driftlab run` does
            for round_ in range(args.rounds):
                measured["sqlite"].append(store(sqlite, run, events, False, lambda: 0.0))
                measured["postgres"].append(store(postgres, run, events, False, lambda: server_cpu(pg)))
                measured["postgres batched"].append(store(postgres, run, events, True, lambda: server_cpu(pg)))
                measured["postgres pooled, batched"].append(store(pooled, run, events, True, lambda: server_cpu(pg)))
                print(f"round {round_ + 1}: " + ", ".join(f"{name} {m[-1][1]:.2f} s CPU"
                                                          for name, m in measured.items()), flush=True)
    counts = Counter(e.dagster_event.event_type_value if e.dagster_event else "log" for e in events)
    print(f"\n{40 * args.copies:,} pages: the study run's {len(events)} events "
          f"({', '.join(f'{n} {k}' for k, n in counts.most_common())}), "
          f"stored {args.rounds} times per route, rounds interleaved, minimum of each\n")
    print("| route | wall µs / event | CPU µs / event (client + server) | CPU / SQLite |\n|---|---|---|---|")
    base = min(c for _, c in measured["sqlite"])
    for name, rounds in measured.items():
        wall, cpu = min(w for w, _ in rounds), min(c for _, c in rounds)
        print(f"| {name} | {1e6 * wall / len(events):,.0f} | {1e6 * cpu / len(events):,.0f} | **{cpu / base:.2f}** |")


if __name__ == "__main__":
    main()
