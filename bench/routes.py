"""Whole-process CPU of the command's routes, side by side: `check-world`, the study in memory
(`run --engine core`) and the study through Dagster (`run`, an ephemeral instance), each a fresh process
as a user starts it, rounds interleaved so the machine's noise falls on every route alike.

    PYTHONPATH=. .venv/bin/python bench/routes.py [--rounds 5]

Prints each route's median CPU seconds (user + system of the process and its children) and wall seconds,
and its ratio to the Dagster route.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORLD = ROOT / "data" / "worlds" / "tessaly_freight.yaml"


def routes(out: Path) -> dict[str, list[str]]:
    common = ["--world", str(WORLD), "--out", str(out), "--database", str(out / "bench.duckdb")]
    return {
        "check-world": ["check-world", str(WORLD)],
        "run --engine core": ["run", "--engine", "core", *common],
        "run (Dagster)": ["run", *common],
    }


def measure(argv: list[str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one `python -m driftlab_dagster ...` process, children included."""
    env = {k: v for k, v in os.environ.items() if k not in ("DAGSTER_HOME", "DRIFTLAB_WORLD", "DRIFTLAB_CONFIG")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "driftlab_dagster", *argv], cwd=ROOT, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        chosen = routes(Path(folder))
        samples: dict[str, list[tuple[float, float]]] = {name: [] for name in chosen}
        measure(chosen["run --engine core"])  # warm the file cache; not counted
        for _ in range(args.rounds):
            for name, argv in chosen.items():
                samples[name].append(measure(argv))
    dagster_cpu = statistics.median(cpu for cpu, _ in samples["run (Dagster)"])
    print(f"{'route':<20} {'CPU s (median)':>15} {'wall s (median)':>16} {'CPU / Dagster route':>20}")
    for name, values in samples.items():
        cpu = statistics.median(c for c, _ in values)
        wall = statistics.median(w for _, w in values)
        print(f"{name:<20} {cpu:>15.2f} {wall:>16.2f} {cpu / dagster_cpu:>20.2f}")


if __name__ == "__main__":
    main()
