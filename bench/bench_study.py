"""The full deterministic study through the pure core and through Dagster, side by side in one run.

Rounds alternate core and Dagster so both see the same machine load; the ratio of medians is the number
to read (the machines are shared and noisy, absolute seconds drift).

    .venv/bin/python bench/bench_study.py [--rounds 5]

Dagster here means what `make run` does: the study job as one in-process run over all 20 (scenario, day)
partitions (world, pages, graphs with their checks, answers, repair, accuracy report) and the maintenance
job over the 4 event days (comparison, cost report), writing a real DuckDB file, with an ephemeral
instance (no event-log fsyncs) and with an on-disk SQLite instance like `make run` uses.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import dagster as dg

from driftlab_dagster.config import DriftlabConfig
from driftlab_dagster.core.study import run_study
from driftlab_dagster.core.world.loader import load_world
from driftlab_dagster.headless import run_study_in_dagster
from driftlab_dagster.project import DEFAULT_WORLD


def _config(folder: Path) -> DriftlabConfig:
    folder.mkdir(parents=True, exist_ok=True)
    return DriftlabConfig(worlds=[DEFAULT_WORLD], database=folder / "driftlab.duckdb", output_dir=folder)


def timed(fn) -> float:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    samples: dict[str, list[float]] = {"core": [], "dagster (ephemeral instance)": [], "dagster (on-disk instance)": []}
    for i in range(args.rounds + 1):  # round 0 warms caches and is dropped
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            # timed() calls each lambda at once, in this iteration: the late binding B023 warns of cannot bite.
            core = timed(lambda: run_study(load_world(DEFAULT_WORLD)))
            eph = timed(lambda: run_study_in_dagster(_config(work / "e"),  # noqa: B023
                                                     instance=dg.DagsterInstance.ephemeral()))
            (work / "home").mkdir()
            disk = timed(lambda: run_study_in_dagster(
                _config(work / "d"), instance=dg.DagsterInstance.local_temp(str(work / "home"))))  # noqa: B023
        if i:
            samples["core"].append(core)
            samples["dagster (ephemeral instance)"].append(eph)
            samples["dagster (on-disk instance)"].append(disk)
        print(f"round {i}{' (warm-up)' if not i else ''}: core {core:.2f}s, dagster ephemeral {eph:.2f}s, "
              f"dagster on-disk {disk:.2f}s", flush=True)

    core_median = statistics.median(samples["core"])
    print()
    print(f"{'route':<30} {'median s':>9} {'min s':>7} {'max s':>7} {'x core':>7}")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"{name:<30} {median:>9.2f} {min(values):>7.2f} {max(values):>7.2f} {median / core_median:>7.1f}")


if __name__ == "__main__":
    main()
